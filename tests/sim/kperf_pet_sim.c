/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_pet_sim.c - what the simulated PET thread sees of a thread it
 * samples (osfmk/kperf/pet.c kppet_sample_thread): the thread's state as
 * kperf_thread_info_runmode_legacy (osfmk/kperf/thread_samplers.c) encodes
 * it, and the user stack of a thread that is not running. Linux tells
 * both from /proc: the state letter of /proc/<pid>/task/<tid>/stat, and
 * for a thread off CPU the stack pointer and pc of /proc/<pid>/task/<tid>/
 * syscall, from which the stack is walked in the thread's memory: the
 * return addresses up to the first frame record, then the frame-pointer
 * chain. Included by kperf_sampling_sim.c. Simulated: read when the trace
 * buffer is drained, not at the period it stands for.
 */
#include <sys/uio.h>

/* thread_samplers.c KPERF_TI_*, and TH_IDLE (osfmk/kern/thread.h). */
#define TI_RUNNING 0x01u
#define TI_RUNNABLE 0x02u
#define TI_WAIT 0x04u
#define TI_UNINT 0x08u
#define TI_SUSP 0x10u
#define TI_TERMINATE 0x20u
#define TH_IDLE 0x80u

/* kperf_thread_info_runmode_legacy: the high half the inverted mask, the
 * low half the state; on macOS a blank state is TH_IDLE << 16. */
static uint64_t legacy_runmode(uint32_t state)
{
    if (state == 0)
        return (uint64_t)TH_IDLE << 16;
    return (uint64_t)((~state & 0xffffu) << 16 | (state & 0xffffu));
}

#define PET_FRAMES 64
#define PET_THREADS_MAX 1024
#define PET_EXEC_MAX 512

typedef struct pet_thread {
    uint32_t pid, tid;
    uint32_t state;   /* KPERF_TI_* when it is not seen on CPU */
    uint64_t cswitch; /* its context switches so far (thread_t c_switch) */
    size_t nu;
    uint64_t frames[PET_FRAMES];
} pet_thread;

typedef struct exec_ranges {
    size_t n;
    uint64_t lo[PET_EXEC_MAX], hi[PET_EXEC_MAX];
    uint64_t stack_lo, stack_hi; /* the mapping the stack pointer is in */
} exec_ranges;

static void read_maps(uint32_t pid, uint64_t sp, exec_ranges *x)
{
    char path[64], line[512];
    x->n = 0;
    x->stack_lo = x->stack_hi = 0;
    snprintf(path, sizeof path, "/proc/%u/maps", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long lo, hi;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3)
            continue;
        if (perms[2] == 'x' && x->n < PET_EXEC_MAX) {
            x->lo[x->n] = lo;
            x->hi[x->n++] = hi;
        }
        if (sp >= lo && sp < hi) {
            x->stack_lo = lo;
            x->stack_hi = hi;
        }
    }
    fclose(f);
}

static bool is_code(const exec_ranges *x, uint64_t a)
{
    for (size_t i = 0; i < x->n; i++)
        if (a >= x->lo[i] && a < x->hi[i])
            return true;
    return false;
}

/* Whether the frame records from word i of the stack read at sp chain up
 * to an end: each a return address, each further up than the last. */
static bool chain_holds(const uint64_t *w, size_t nw, uint64_t sp, const exec_ranges *x, size_t i)
{
    for (int steps = 0; steps < 512; steps++) {
        uint64_t at = sp + i * 8, fp = w[i];
        if (!is_code(x, w[i + 1]))
            return false;
        if (fp == 0 || (fp >= sp + nw * 8 && fp < x->stack_hi))
            return steps > 0 || fp != 0;
        if (fp <= at || fp >= sp + nw * 8 || (fp - sp) % 8 != 0)
            return false;
        i = (size_t)((fp - sp) / 8);
        if (i + 1 >= nw)
            return true;
    }
    return false;
}

/* The user stack of a thread off CPU: its pc, the return addresses below
 * the first frame record, then the frame records. 0 frames when /proc
 * says it is running or will not say (another user's process). */
static size_t stack_of_waiting(uint32_t pid, uint32_t tid, uint64_t *out, size_t max)
{
    char path[96], line[512];
    snprintf(path, sizeof path, "/proc/%u/task/%u/syscall", pid, tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!ok || strncmp(line, "running", 7) == 0)
        return 0;
    /* "nr args... sp pc", or "-1 sp pc" outside a system call. */
    char *tok[16];
    size_t nt = 0;
    for (char *p = strtok(line, " \n"); p != NULL && nt < 16; p = strtok(NULL, " \n"))
        tok[nt++] = p;
    if (nt < 3)
        return 0;
    uint64_t sp = strtoull(tok[nt - 2], NULL, 16), pc = strtoull(tok[nt - 1], NULL, 16);
    size_t n = 0;
    out[n++] = pc;
    exec_ranges *x = malloc(sizeof *x);
    enum { WORDS = 4096 };
    uint64_t *w = malloc(WORDS * sizeof *w);
    if (x == NULL || w == NULL)
        goto done;
    read_maps(pid, sp, x);
    if (x->stack_hi <= sp)
        goto done;
    size_t nw = (size_t)((x->stack_hi - sp) / 8);
    nw = nw < WORDS ? nw : WORDS;
    struct iovec local = {w, nw * 8}, remote = {(void *)(uintptr_t)sp, nw * 8};
    ssize_t got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
    if (got <= 0)
        goto done;
    nw = (size_t)got / 8;
    uint64_t top = sp + nw * 8;
    /* The first frame record: a saved frame pointer further up the stack
     * next to a return address, whose chain holds up to its end (a saved
     * frame pointer of 0, as the outermost frame has, or past what was
     * read); a stale pair left in a large frame's locals seldom does. */
    size_t rec = nw;
    for (size_t i = 0; i + 1 < nw && rec == nw; i++)
        if (chain_holds(w, nw, sp, x, i))
            rec = i;
    /* Frames without a record (libc's system call wrappers) below it. */
    for (size_t i = 0; i < rec && i < nw && n < max && n < 8; i++)
        if (is_code(x, w[i]))
            out[n++] = w[i];
    for (size_t i = rec; i + 1 < nw && n < max;) {
        if (w[i + 1] == 0 || !is_code(x, w[i + 1]))
            break;
        out[n++] = w[i + 1];
        uint64_t fp = w[i];
        if (fp <= sp + i * 8 || fp >= top)
            break;
        i = (size_t)((fp - sp) / 8);
    }
done:
    free(w);
    free(x);
    return n;
}

static uint32_t state_of(uint32_t pid, uint32_t tid)
{
    char path[96], line[512];
    snprintf(path, sizeof path, "/proc/%u/task/%u/stat", pid, tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return TI_TERMINATE;
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    const char *p = ok ? strrchr(line, ')') : NULL;
    switch (p != NULL && p[1] == ' ' ? p[2] : 'X') {
    case 'R':
        return TI_RUNNABLE; /* runnable, but not seen on a CPU in the period */
    case 'S':
    case 'I':
        return TI_WAIT;
    case 'D':
        return TI_WAIT | TI_UNINT;
    case 'T':
    case 't':
        return TI_SUSP;
    default:
        return TI_TERMINATE;
    }
}

/* A thread's context switches (XNU's c_switch, which kperf_thread_get_dirty
 * compares): Linux's voluntary and involuntary ones, /proc/.../status. */
static uint64_t cswitch_of(uint32_t pid, uint32_t tid)
{
    char path[96], line[256];
    snprintf(path, sizeof path, "/proc/%u/task/%u/status", pid, tid);
    FILE *f = fopen(path, "r");
    uint64_t n = 0;
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL) {
        const char *v = strchr(line, ':');
        if (v != NULL && (strncmp(line, "voluntary_ctxt_switches:", 24) == 0 ||
                          strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0))
            n += strtoull(v + 1, NULL, 10);
    }
    fclose(f);
    return n;
}

static size_t threads_of(uint32_t pid, pet_thread *out, size_t n, size_t max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/task", pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return n;
    struct dirent *e;
    while (n < max && (e = readdir(d)) != NULL) {
        uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10);
        if (tid == 0)
            continue;
        pet_thread *t = &out[n++];
        t->pid = pid;
        t->tid = tid;
        t->state = state_of(pid, tid);
        t->cswitch = cswitch_of(pid, tid);
        t->nu = stack_of_waiting(pid, tid, t->frames, PET_FRAMES);
    }
    closedir(d);
    return n;
}

/* The threads PET samples: the filtered process's, or every process's
 * (kppet samples every task; a pid filter keeps one). */
static size_t pet_threads(int32_t pid, pet_thread *out)
{
    if (pid != -1)
        return threads_of((uint32_t)pid, out, 0, PET_THREADS_MAX);
    size_t n = 0;
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    struct dirent *e;
    while (n < PET_THREADS_MAX && (e = readdir(d)) != NULL) {
        uint32_t p = (uint32_t)strtoul(e->d_name, NULL, 10);
        if (p != 0)
            n = threads_of(p, out, n, PET_THREADS_MAX);
    }
    closedir(d);
    return n;
}
