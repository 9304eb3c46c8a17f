/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sim_kdebug.h - the kdebug ABI of XNU as the simulated kernel
 * (kernel_sim.c) and the tests of its trace buffer
 * (tests/test_sim_kdebug.c, tests/test_sampling_kperf.c) use it: the
 * sysctl operations, flags and structures of bsd/sys/sysctl.h and
 * bsd/sys/kdebug_private.h, and the storage-unit sizes of
 * bsd/sys/kdebug_common.h (kd_buf itself is simk_kd_buf, in
 * sim_kernel.h). Test code; see README.md.
 */
#ifndef DKPERF_SIM_KDEBUG_H
#define DKPERF_SIM_KDEBUG_H

/* bsd/sys/sysctl.h, bsd/sys/kdebug_private.h */
#define CTL_KERN 1
#define KERN_KDEBUG 24
#define KERN_KDEFLAGS 1
#define KERN_KDDFLAGS 2
#define KERN_KDENABLE 3
#define KERN_KDSETBUF 4
#define KERN_KDGETBUF 5
#define KERN_KDSETUP 6
#define KERN_KDREMOVE 7
#define KERN_KDSETREG 8
#define KERN_KDGETREG 9
#define KERN_KDREADTR 10
#define KERN_KDWRITETR 17
#define KERN_KDSET_TYPEFILTER 22
#define KERN_KDBUFWAIT 23
#define KERN_KDWRITETR_V3 28

#define KDBG_USERFLAGS \
    0xe02u /* NOWRAP | CONTINUOUS_TIME | DISABLE_COPROCS | MATCH_DISABLE, as read */
#define KDBG_NOWRAP 0x2u
#define KDBG_WRAPPED 0x8u
#define KDBG_CONTINUOUS_TIME 0x200u
#define KDBG_DISABLE_COPROCS 0x400u
#define KDBG_MATCH_DISABLE 0x800u
#define KDBG_LP64 0x100u
#define KDBG_BUFINIT 0x80000000u

#define KDBG_CLASSTYPE 0x10000u
#define KDBG_SUBCLSTYPE 0x20000u
#define KDBG_RANGETYPE 0x40000u
#define KDBG_TYPENONE 0x80000u
#define KDBG_VALCHECK 0x200000u

#define KDEBUG_ENABLE_TRACE 0x1
#define KDEBUG_ENABLE_PPT 0x8

#define TRACE_LOST_EVENTS 0x07020008u /* TRACEDBG_CODE(DBG_TRACE_INFO, 2) */
#define DBG_TRACE 7u

#define TYPEFILTER_BYTES 8192
/* bsd/sys/kdebug_common.h, bsd/kern/kdebug.c create_buffers_trace: the
 * buffer is whole storage units of 2048 events, at least 4 units for each
 * CPU and each of the EXTRA_COPROC_COUNT (16) coprocessor slots. */
#define EVENTS_PER_UNIT 2048u
#define MIN_UNITS_PER_CPU 4u
#define EXTRA_COPROC_COUNT 16u

typedef struct kd_regtype {
    unsigned type, value1, value2, value3, value4;
} kd_regtype;

typedef struct kbufinfo {
    int nkdbufs, nolog;
    unsigned flags;
    int nkdthreads, bufid;
} kbufinfo;

#endif /* DKPERF_SIM_KDEBUG_H */
