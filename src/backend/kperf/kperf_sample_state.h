/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_sample_state.h - what kperf_sample.c (set-up and tear-down of the
 * trace buffer, kperf's actions and timers, the PMIs) and
 * kperf_sample_drain.c (reading, decoding and delivering the kdebug
 * records, waiting) share: the kdebug ABI taken from XNU and the state of
 * a kperf dk_sampling. Not installed.
 */
#ifndef DKPERF_BACKEND_KPERF_SAMPLE_STATE_H
#define DKPERF_BACKEND_KPERF_SAMPLE_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/kperf/kperf_sample.h"
#include "sys/libsystem.h"

/* bsd/sys/sysctl.h, bsd/sys/kdebug_private.h */
#define CTL_KERN 1
#define KERN_KDEBUG 24
#define KERN_KDENABLE 3
#define KERN_KDSETBUF 4
#define KERN_KDGETBUF 5
#define KERN_KDSETUP 6
#define KERN_KDREMOVE 7
#define KERN_KDSETREG 8
#define KERN_KDREADTR 10
#define KERN_KDSET_TYPEFILTER 22
#define KERN_KDBUFWAIT 23
#define TYPEFILTER_BYTES 8192 /* KDBG_TYPEFILTER_BITMAP_SIZE: a bit per class:subclass */
#define KDBG_RANGETYPE 0x40000u
#define KDBG_NOWRAP 0x2u
#define KDBG_WRAPPED 0x8u
#define KDEBUG_ENABLE_TRACE 1

/* Debug ids (osfmk/kperf/buffer.h; bsd/sys/kdebug.h). */
#define ID_MASK 0xfffffffcu
#define ID_LOST 0x07020008u /* TRACE_LOST_EVENTS */
#define ID_GEN_EVENT 0x25000000u
#define ID_TI_DATA 0x25010004u
#define ID_CS_UDATA 0x25020010u
#define ID_CS_UHDR 0x25020018u
#define ID_TM_FIRE 0x25030000u
#define ID_TM_HNDLR 0x25030008u
#define ID_KPC_HNDLR 0x25060000u
#define ID_KPC_DATA_THREAD 0x25060020u
/* BSDDBG_CODE(DBG_BSD_PROC, BSD_PROC_EXIT) (bsd/sys/kdebug.h): proc_exit
 * (bsd/kern/kern_exit.c) logs it as START when a process starts to exit
 * and END when it becomes a zombie, both with (pid, p_xstat), arg5 the
 * exiting thread. */
#define ID_PROC_EXIT 0x04010004u
/* TRACEDBG_CODE(DBG_TRACE_DATA, 2) and (DBG_TRACE_STRING, 2) (bsd/sys/
 * kdebug.h): exec_mach_imgact (bsd/kern/kern_exec.c) logs TRACE_DATA_EXEC
 * (pid, fsid, fileid) then TRACE_STRING_EXEC, the new image's
 * proc_best_name in arg1-4 (32 bytes, not NUL-terminated when full), both
 * with the exec'ing thread in arg5. DBG_TRACE passes every typefilter
 * (kdbg_copyin_typefilter) and ignores the pid filter. */
#define ID_TRACE_DATA_EXEC 0x07000008u
#define ID_TRACE_STRING_EXEC 0x07010008u
#define DBG_TRACE_CLASS 0x07u
#define FUNC_START 1u
#define FUNC_END 2u
#define KPC_KERNEL_PC 0x1u
/* kperf_sample's flags (osfmk/kperf/action.h): the PET thread's samples
 * (kppet_sample_thread) carry THREAD_ONLY. */
#define SAMPLE_FLAG_THREAD_ONLY 0x100u
/* TI_DATA runmode's low half (osfmk/kperf/thread_samplers.c
 * kperf_thread_info_runmode_legacy): the thread is on its CPU. */
#define KPERF_TI_RUNNING 0x1u
#define KPERF_TI_RUNNABLE 0x2u /* ready to run: on a CPU or waiting for one */
#define KPERF_TI_WAIT 0x4u     /* blocked (with RUNNABLE: on its way to block) */
#define CS_VALID 0x1u
#define CS_TRUNCATED 0x10u

#define KD_EVENTS 262144u /* trace buffer: 16 MB of 64-byte records */
#define READ_EVENTS 4096u /* records per KERN_KDREADTR */
#define FRAMES_MAX 256    /* MAX_UCALLSTACK_FRAMES */
#define SLOTS 64          /* threads with a sample in progress */
#define PIDS_MAX 16

/* kd_buf of LP64 and arm64 (bsd/sys/kdebug_private.h), 64 bytes. */
typedef struct kd_buf {
    uint64_t timestamp;
    uint64_t arg1, arg2, arg3, arg4, arg5;
    uint32_t debugid;
    uint32_t cpuid;
    uint64_t unused;
} kd_buf;
_Static_assert(sizeof(kd_buf) == 64, "kd_buf is 64 bytes");

typedef struct kd_regtype {
    unsigned type, value1, value2, value3, value4;
} kd_regtype;

/* kbufinfo_t (bsd/sys/kdebug_private.h), what KERN_KDGETBUF copies out. */
typedef struct kbufinfo {
    int nkdbufs;
    int nolog; /* kdc_emit == KDEMIT_DISABLE: nothing is being logged */
    unsigned flags;
    int nkdthreads;
    int bufid; /* the owning pid, or -1 */
} kbufinfo;

enum { BLOCK_NONE, BLOCK_INTR, BLOCK_AST };

/* One thread's sample in progress: its interrupt-time part, then the user
 * stack logged when it returns to user space (a later block). */
typedef struct slot {
    uint64_t tid;
    bool used;
    int block;
    bool trig; /* a KPC_HNDLR or TM_HNDLR started it */
    bool pet;  /* the PET thread's sample of a thread (DK_SAMPLING_OFF_CPU) */
    uint64_t runmode;
    uint64_t trig_pc;
    bool trig_kernel;
    bool pending; /* interrupt part done, user stack to come */
    bool have_stack;
    dk_sample s;
    uint64_t values[KPC_MAX_COUNTERS];
    uint64_t frames[FRAMES_MAX];
    size_t want_frames;
    uint64_t cs_flags;
} slot;

typedef struct map_seen {
    int pid;
    uint64_t start, len;
} map_seen;

/* A process named: the name delivered ("" when none could be read). */
typedef struct named_pid {
    int pid;
    char name[33]; /* proc_best_name: MAXCOMLEN * 2 */
} named_pid;

typedef struct ksamp {
    const dk_kperf_vtable *kp;
    const dk__libsystem *ls;
    uint32_t fixed_counters, config_counters;
    dk__kperf_prog *prog;    /* PMI events' counters; NULL without */
    int kind[DK_MAX_EVENTS]; /* 1 PMI, 2 timer */
    size_t counter[DK_MAX_EVENTS];
    uint64_t period[DK_MAX_EVENTS]; /* events, or ns for a timer */
    uint32_t samplers;
    int pid;      /* the pid filter, -1: every process */
    uint64_t tid; /* DK_SCOPE_THREAD: the one thread; 0: any */
    size_t npmi, ntimers;
    size_t pet_event; /* DK_SAMPLING_OFF_CPU: the event on the PET timer */
    /* Off-CPU PET samples stand for the time since the PET timer's last
     * fire: XNU re-arms it after the PET thread's pass (kptimer_pet_enter),
     * so fires are a period apart or more. The last fire decoded (ticks;
     * 0: none yet), the ns from the one before it (0: not known). */
    uint64_t pet_fire, pet_span_ns;
    /* The starts (ns on the records' clock) no fire decoded is later
     * than: a fire after one is the first of its start, whatever was
     * drained before it (records of a stopped run are read after a
     * restart). More starts than fit: fires before the last, spans not
     * known (pet_blind_ns). Under state_lock. */
#define PET_STARTS 8
    uint64_t pet_starts[PET_STARTS], pet_blind_ns;
    size_t pet_nstarts;
    /* What open did, for teardown. */
    bool kdebug, kperf, periods, counting, sampling;
    /* The trace buffer is enabled (start to stop). Under state_lock, which
     * start and stop hold around KERN_KDENABLE and a drain around its
     * reading of enabled and KERN_KDGETBUF's, so that a drain never takes
     * a concurrent stop for the kernel stopping tracing. A leaf lock. */
    bool enabled;
    pthread_mutex_t state_lock;
    bool kernel_stopped; /* tracing found off while enabled (reported once) */
    /* Records read but not yet decoded: the drain's, and a wait's, which
     * reads ahead; both under the sampling's drain_lock. */
    kd_buf *buf;
    size_t pos, len;
    slot *slots;
    map_seen *maps;
    size_t nmaps, maps_cap;
    int pids[PIDS_MAX]; /* processes whose maps were read in this drain */
    size_t npids;
    named_pid *named; /* processes whose name was asked (COMM) */
    size_t nnamed, named_cap;
    int exec_pid;      /* the last TRACE_DATA_EXEC's, for its string; 0: none */
    uint64_t exec_tid; /* its thread */
    bool target_named; /* a COMM of the pid filter's process was delivered */
    bool exits;        /* the filter lets BSD_PROC_EXIT through */
} ksamp;

/* A failed trace or kperf call as the caller should read it: EPERM and
 * EACCES need root, EBUSY is another tool owning tracing. */
int dk__ks_trace_fail(const char *what, int e);
/* sysctl({CTL_KERN, KERN_KDEBUG, op[, value]}); data moves through oldp.
 * 0, or the errno. */
int dk__ks_kdebug(const ksamp *k, int op, int value, bool with_value, void *oldp, size_t *oldlen);

#endif /* DKPERF_BACKEND_KPERF_SAMPLE_STATE_H */
