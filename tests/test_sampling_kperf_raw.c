/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_sampling_kperf_raw.c - the simulated kernel as a kperf+kdebug client
 * written for a Mac drives it, through the raw framework calls and kdebug
 * sysctls (no libdkperf sampling): the kdebug filter applied to each record
 * on its own (bsd/kern/kdebug.c _should_emit_debugid), the ktrace sysctls
 * (bsd/kern/kern_ktrace.c), and the records of other classes an unfiltered
 * trace holds (PMI interrupts, thread switches); and a machine of many
 * CPUs (DKPERF_SIM_NCPU) sampled through libdkperf. Part of
 * test_sampling_kperf. Simulated only: nothing here ran on Apple hardware.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dkperf.h"
#include "dkperf/kperf.h"
#include "sampling_kperf_helpers.h"
#include "sim/sim_kdebug.h"
#include "sys/libsystem.h"
#include "util.h"

/* Debug ids (osfmk/kperf/buffer.h, bsd/sys/kdebug.h). */
#define ID_KPC_HNDLR 0x25060000u
#define ID_KPC_DATA_THREAD 0x25060020u
#define ID_CS_UHDR 0x25020018u
#define ID_GEN_EVENT 0x25000000u
#define ID_INTR 0x01050000u       /* MACHDBG_CODE(DBG_MACH_EXCP_INTR, 0) */
#define ID_MACH_SCHED 0x01400000u /* MACHDBG_CODE(DBG_MACH_SCHED, MACH_SCHED) */
#define ID_TM_HNDLR 0x25030008u
#define ID_PROC_EXIT 0x04010004u       /* BSDDBG_CODE(DBG_BSD_PROC, BSD_PROC_EXIT) */
#define ID_PROC_EXEC 0x0401000cu       /* BSDDBG_CODE(DBG_BSD_PROC, BSD_PROC_EXEC) */
#define ID_TRACE_DATA_EXEC 0x07000008u /* TRACEDBG_CODE(DBG_TRACE_DATA, 2) */
#define ID_TRACE_STRING_EXEC 0x07010008u
#define READ_MAX (1u << 16)

/* sysctl({CTL_KERN, KERN_KDEBUG, op[, value]}): 0 or errno. */
static int kd(const sim_kernel *k, int op, int value, int nmib, void *oldp, size_t *oldlen)
{
    int mib[4] = {CTL_KERN, KERN_KDEBUG, op, value};
    size_t zero = 0;
    errno = 0;
    int r = k->sysctl(mib, (unsigned)nmib, oldp, oldlen != NULL ? oldlen : &zero, NULL, 0);
    return r == 0 ? 0 : errno;
}

static const dk_kperf_vtable *kperf(void)
{
    const dk_kperf_vtable *kp = NULL;
    CHECK_INT(dk_kperf_load(NULL, &kp, NULL), ==, 0);
    return kp;
}

/*
 * A client's set-up, in the order a kdebug+kperf profiler makes it: the
 * trace buffer, its filter (a KDSETREG or a typefilter, or none), enabled;
 * then one kperf action with these samplers for this process and one timer
 * every period_ns, and sampling on.
 */
static void raw_start_pid(const sim_kernel *k, const dk_kperf_vtable *kp, kd_regtype *reg,
                          unsigned char *tf, uint32_t samplers, uint64_t period_ns, int pid)
{
    CHECK_INT(kd(k, KERN_KDREMOVE, 0, 3, NULL, NULL), ==, 0);
    CHECK_INT(kd(k, KERN_KDSETBUF, 1 << 20, 4, NULL, NULL), ==, 0);
    CHECK_INT(kd(k, KERN_KDSETUP, 0, 3, NULL, NULL), ==, 0);
    if (reg != NULL) {
        size_t len = sizeof *reg;
        CHECK_INT(kd(k, KERN_KDSETREG, 0, 3, reg, &len), ==, 0);
    }
    if (tf != NULL) {
        size_t len = TYPEFILTER_BYTES;
        CHECK_INT(kd(k, KERN_KDSET_TYPEFILTER, 0, 3, tf, &len), ==, 0);
    }
    CHECK_INT(kd(k, KERN_KDENABLE, KDEBUG_ENABLE_TRACE, 4, NULL, NULL), ==, 0);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(kp->kperf_action_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_action_samplers_set(1, samplers), ==, 0);
    CHECK_INT(kp->kperf_action_filter_set_by_pid(1, pid), ==, 0);
    CHECK_INT(kp->kperf_timer_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_timer_period_set(0, kp->kperf_ns_to_ticks(period_ns)), ==, 0);
    CHECK_INT(kp->kperf_timer_action_set(0, 1), ==, 0);
    CHECK_INT(kp->kperf_sample_set(1), ==, 0);
}

static void raw_start(const sim_kernel *k, const dk_kperf_vtable *kp, kd_regtype *reg,
                      unsigned char *tf, uint32_t samplers, uint64_t period_ns)
{
    raw_start_pid(k, kp, reg, tf, samplers, period_ns, getpid());
}

/* Everything in the buffer, up to cap records (KERN_KDREADTR until empty). */
static size_t raw_read(const sim_kernel *k, simk_kd_buf *out, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        size_t len = (cap - n) * sizeof *out;
        CHECK_INT(kd(k, KERN_KDREADTR, 0, 3, out + n, &len), ==, 0);
        if (len == 0)
            break;
        n += len;
    }
    return n;
}

static void raw_stop(const sim_kernel *k, const dk_kperf_vtable *kp)
{
    CHECK_INT(kp->kperf_sample_set(0), ==, 0);
    CHECK_INT(kd(k, KERN_KDENABLE, 0, 4, NULL, NULL), ==, 0);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(kd(k, KERN_KDREMOVE, 0, 3, NULL, NULL), ==, 0);
}

/* KDBG_VALCHECK on PERF_KPC_DATA_THREAD alone: the timer still samples,
 * and only those records reach the buffer. */
TEST_CASE(a_valcheck_filter_keeps_only_its_records)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    const dk_kperf_vtable *kp = kperf();
    kd_regtype reg = {KDBG_VALCHECK, ID_KPC_DATA_THREAD, 0, 0, 0};
    raw_start(&k, kp, &reg, NULL, KPERF_SAMPLER_TH_INFO | KPERF_SAMPLER_PMC_THREAD, 1000000);
    dkt_hot_caller(100000000);
    simk_kd_buf *r = calloc(READ_MAX, sizeof *r);
    CHECK(r != NULL);
    size_t n = raw_read(&k, r, READ_MAX);
    raw_stop(&k, kp);
    size_t other = 0;
    for (size_t i = 0; i < n; i++)
        other += (r[i].debugid & ~3u) != ID_KPC_DATA_THREAD;
    fprintf(stderr, "%zu records, %zu of another debug id\n", n, other);
    CHECK_U64(n, >, 0);
    CHECK_U64(other, ==, 0);
    free(r);
    check_disarmed(state_path());
}

/* A typefilter with only the callstack subclass (PERF_CS_UHDR's): the
 * user stacks, pended to the return to user space, and nothing else. */
TEST_CASE(a_typefilter_keeps_only_its_subclasses)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    const dk_kperf_vtable *kp = kperf();
    unsigned char *tf = calloc(1, TYPEFILTER_BYTES);
    CHECK(tf != NULL);
    unsigned csc = ID_CS_UHDR >> 16;
    tf[csc / 8] |= (unsigned char)(1u << (csc % 8));
    raw_start(&k, kp, NULL, tf, KPERF_SAMPLER_TH_INFO | KPERF_SAMPLER_USTACK, 1000000);
    free(tf);
    dkt_hot_caller(100000000);
    simk_kd_buf *r = calloc(READ_MAX, sizeof *r);
    CHECK(r != NULL);
    size_t n = raw_read(&k, r, READ_MAX);
    raw_stop(&k, kp);
    size_t headers = 0, other = 0;
    for (size_t i = 0; i < n; i++) {
        headers += r[i].debugid == ID_CS_UHDR;
        other += r[i].debugid >> 16 != csc;
    }
    fprintf(stderr, "%zu records, %zu user stacks, %zu of another subclass\n", n, headers, other);
    CHECK_U64(headers, >, 0);
    CHECK_U64(other, ==, 0);
    free(r);
    check_disarmed(state_path());
}

/* The PMIs of a counter-overflow sampling, seen by a client that opens the
 * filter to everything: each PMI's KPC_HNDLR inside its interrupt's
 * DBG_MACH_EXCP_INTR records, and the sampled thread's switches off CPU
 * (MACH_SCHED) while it sleeps. */
TEST_CASE(an_unfiltered_trace_holds_pmi_and_switch_records)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_sampling(s, "cycles", 1000000, 0);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    sim_kernel k = sim_kernel_open();
    unsigned char *tf = malloc(TYPEFILTER_BYTES);
    CHECK(tf != NULL);
    memset(tf, 0xff, TYPEFILTER_BYTES);
    size_t len = TYPEFILTER_BYTES;
    CHECK_INT(kd(&k, KERN_KDSET_TYPEFILTER, 0, 3, tf, &len), ==, 0);
    free(tf);
    for (int i = 0; i < 5; i++) {
        dkt_hot_caller(20000000);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    simk_kd_buf *r = calloc(READ_MAX, sizeof *r);
    CHECK(r != NULL);
    size_t n = raw_read(&k, r, READ_MAX);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    bool x86 = getenv("DKPERF_SIM_CPU") != NULL && strcmp(getenv("DKPERF_SIM_CPU"), "haswell") == 0;
    uint64_t self = (uint64_t)syscall(SYS_gettid);
    size_t pmis = 0, intr = 0, wrapped = 0, ends = 0, switches = 0;
    for (size_t i = 0; i < n; i++) {
        const simk_kd_buf *x = &r[i];
        if (x->debugid == (ID_INTR | 1u)) {
            /* arm64 sleh.c: 0, pc, is_user, DBG_INTR_TYPE_PMI (4); x86
             * trap.c: the LAPIC perf-counter vector, pc, user_mode,
             * DBG_INTR_TYPE_OTHER (3). */
            CHECK_U64(x->arg1, ==, x86 ? 0xdfu : 0u);
            CHECK_U64(x->arg4, ==, x86 ? 3u : 4u);
            CHECK_U64(x->arg3, <=, 1);
            intr++;
        } else if (x->debugid == (ID_KPC_HNDLR | 1u)) {
            pmis++;
            /* Right after its interrupt's start, on the same thread, and
             * the interrupt ends after the sample's GEN_EVENT end. */
            if (i > 0 && r[i - 1].debugid == (ID_INTR | 1u) && r[i - 1].arg5 == x->arg5)
                wrapped++;
            for (size_t j = i + 1; j < n && r[j].arg5 == x->arg5; j++)
                if (r[j].debugid == (ID_GEN_EVENT | 2u)) {
                    ends += j + 1 < n && r[j + 1].debugid == (ID_INTR | 2u);
                    break;
                }
        } else if (x->debugid == ID_MACH_SCHED && x->arg5 == self) {
            switches++;
        }
    }
    fprintf(stderr,
            "%zu records: %zu PMIs, %zu interrupts, %zu inside one, %zu ended after "
            "the sample, %zu switches of this thread\n",
            n, pmis, intr, wrapped, ends, switches);
    CHECK_U64(pmis, >, 0);
    CHECK_U64(intr, ==, pmis);
    CHECK_U64(wrapped, ==, pmis);
    CHECK_U64(ends, ==, pmis);
    CHECK_U64(switches, >=, 5);
    free(r);
    check_disarmed(state_path());
}

static int read_int(const sim_kernel *k, const char *name)
{
    int v = -1;
    size_t len = sizeof v;
    if (k->sysctlbyname(name, &v, &len, NULL, 0) != 0)
        DKT_FAIL("sysctlbyname(%s): %s", name, strerror(errno));
    CHECK_INT(len, ==, sizeof v);
    return v;
}

/* sysctlbyname of kern_ktrace.c's read-only nodes as tracing is taken and
 * given back; writes refused as sysctl_root refuses them. */
TEST_CASE(ktrace_sysctls_follow_tracing)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    const dk_kperf_vtable *kp = kperf();
#define READ(name) read_int(&k, name)
    CHECK_INT(READ("ktrace.state"), ==, 0);
    CHECK_INT(READ("ktrace.owning_pid"), ==, 0);
    CHECK_INT(READ("ktrace.active_mask"), ==, 0);
    CHECK_INT(kd(&k, KERN_KDSETBUF, 100000, 4, NULL, NULL), ==, 0);
    CHECK_INT(READ("ktrace.state"), ==, 1);
    CHECK_INT(READ("ktrace.owning_pid"), ==, getpid());
    CHECK_INT(READ("ktrace.active_mask"), ==, 1);
    CHECK_INT(kp->kperf_action_count_set(1), ==, 0);
    CHECK_INT(READ("ktrace.active_mask"), ==, 3);
    /* A write: EPERM for a read-only node, ENOENT for no node. */
    int one = 1;
    errno = 0;
    CHECK_INT(k.sysctlbyname("ktrace.state", NULL, NULL, &one, sizeof one), ==, -1);
    CHECK_INT(errno, ==, EPERM);
    errno = 0;
    CHECK_INT(k.sysctlbyname("hw.ncpu", NULL, NULL, &one, sizeof one), ==, -1);
    CHECK_INT(errno, ==, EPERM);
    errno = 0;
    CHECK_INT(k.sysctlbyname("ktrace.no_such_node", NULL, NULL, &one, sizeof one), ==, -1);
    CHECK_INT(errno, ==, ENOENT);
    errno = 0;
    int v = -1;
    size_t len = sizeof v;
    CHECK_INT(k.sysctlbyname("ktrace.no_such_node", &v, &len, NULL, 0), ==, -1);
    CHECK_INT(errno, ==, ENOENT);
    /* Still owned while one subsystem is active; idle when none is. */
    CHECK_INT(kd(&k, KERN_KDREMOVE, 0, 3, NULL, NULL), ==, 0);
    CHECK_INT(READ("ktrace.state"), ==, 1);
    CHECK_INT(READ("ktrace.active_mask"), ==, 2);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(READ("ktrace.state"), ==, 0);
    CHECK_INT(READ("ktrace.owning_pid"), ==, 0);
    CHECK_INT(READ("ktrace.active_mask"), ==, 0);
#undef READ
    check_disarmed(state_path());
}

/* A sampling stopped and tracing turned off with no read in between: what
 * was sampled before is in the buffer, read after the stop (XNU logs each
 * record as it samples). */
TEST_CASE(records_sampled_before_a_stop_are_read_after_it)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    const dk_kperf_vtable *kp = kperf();
    raw_start(&k, kp, NULL, NULL, KPERF_SAMPLER_TH_INFO, 1000000);
    dkt_hot_caller(50000000);
    CHECK_INT(kp->kperf_sample_set(0), ==, 0);
    CHECK_INT(kd(&k, KERN_KDENABLE, 0, 4, NULL, NULL), ==, 0);
    simk_kd_buf *r = calloc(READ_MAX, sizeof *r);
    CHECK(r != NULL);
    size_t n = raw_read(&k, r, READ_MAX), fires = 0;
    for (size_t i = 0; i < n; i++)
        fires += (r[i].debugid & ~3u) == ID_TM_HNDLR && (r[i].debugid & 3u) == 1u;
    raw_stop(&k, kp);
    fprintf(stderr, "%zu records, %zu timer handler starts, read after the stop\n", n, fires);
    /* 50 ms of CPU at 1 ms: some 50 fires (a loaded machine: fewer). */
    CHECK_U64(fires, >=, 5);
    free(r);
    check_disarmed(state_path());
}

/* Wait (at most 10 s) until pid is a zombie, not reaping it. */
static void wait_zombie(pid_t pid)
{
    for (int i = 0; i < 1000; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    DKT_FAIL("child %d did not exit", (int)pid);
}

static volatile pid_t worker_tid;

static void *exit_later(void *arg)
{
    (void)arg;
    worker_tid = (pid_t)syscall(SYS_gettid);
    dkt_hot_loop(30000000);
    exit(5);
}

/* A child whose main thread leaves first (pthread_exit) and whose other
 * thread exits 5 later: one process exit (proc_exit, run by the last
 * thread), when that thread exits, with its status and that thread. */
TEST_CASE(a_process_exits_when_its_last_thread_does)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    const dk_kperf_vtable *kp = kperf();
    int go[2], tid_pipe[2];
    CHECK_INT(pipe(go), ==, 0);
    CHECK_INT(pipe(tid_pipe), ==, 0);
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        if (read(go[0], &b, 1) != 1)
            _exit(120);
        pthread_t t;
        if (pthread_create(&t, NULL, exit_later, NULL) != 0)
            _exit(121);
        while (worker_tid == 0)
            usleep(1000);
        pid_t w = worker_tid;
        if (write(tid_pipe[1], &w, sizeof w) != (ssize_t)sizeof w)
            _exit(122);
        pthread_exit(NULL);
    }
    CHECK(pid > 0);
    raw_start_pid(&k, kp, NULL, NULL, KPERF_SAMPLER_TH_INFO, 1000000, pid);
    CHECK_INT((int)write(go[1], "x", 1), ==, 1);
    pid_t worker = 0;
    CHECK_INT((int)read(tid_pipe[0], &worker, sizeof worker), ==, (int)sizeof worker);
    simk_kd_buf *r = calloc(READ_MAX, sizeof *r);
    CHECK(r != NULL);
    /* Read while it runs, so that the main thread's exit is read before
     * the process has ended. */
    size_t n = 0;
    for (int i = 0; i < 5; i++) {
        usleep(5000);
        n += raw_read(&k, r + n, READ_MAX - n);
    }
    wait_zombie(pid);
    n += raw_read(&k, r + n, READ_MAX - n);
    raw_stop(&k, kp);
    int status = 0;
    CHECK_INT(waitpid(pid, &status, 0), ==, pid);
    size_t ends = 0;
    uint64_t end_tid = 0, end_status = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].debugid == (ID_PROC_EXIT | 2u) && r[i].arg1 == (uint64_t)pid) {
            ends++;
            end_tid = r[i].arg5;
            end_status = r[i].arg2;
        }
    fprintf(stderr, "child %d (worker %d): %zu records, %zu exits, by %llu with 0x%llx\n", (int)pid,
            (int)worker, n, ends, (unsigned long long)end_tid, (unsigned long long)end_status);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 5);
    CHECK_U64(ends, ==, 1);
    CHECK_U64(end_tid, ==, (uint64_t)worker);
    CHECK_U64(end_status, ==, (uint64_t)status);
    close(go[0]);
    close(go[1]);
    close(tid_pipe[0]);
    close(tid_pipe[1]);
    free(r);
    check_disarmed(state_path());
}

/* A copy of cat under a name of 25 characters (Linux's comm keeps 15). */
#define LONG_NAME "a_program_of_a_long_name_"

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    CHECK(in != NULL && out != NULL);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        CHECK_U64(fwrite(buf, 1, n, out), ==, n);
    fclose(in);
    CHECK_INT(fclose(out), ==, 0);
    CHECK_INT(chmod(to, 0700), ==, 0);
}

/* A child sampled by pid that execs a program of a long name (cat, held
 * on a pipe until the records are read): exec_mach_imgact's
 * TRACE_DATA_EXEC (pid) and TRACE_STRING_EXEC (p_name, in 32 bytes), then
 * BSD_PROC_EXEC (pid), all by the exec'ing thread, in an unfiltered
 * trace. */
TEST_CASE(an_exec_logs_xnus_exec_records)
{
    if (dkt_is_busybox("/bin/cat"))
        SKIP("/bin/cat is BusyBox here: copied under another name it is no cat");
    fresh_state();
    sim_kernel k = sim_kernel_open();
    const dk_kperf_vtable *kp = kperf();
    const char *tmp = getenv("TMPDIR");
    CHECK(tmp != NULL);
    char dir[4096], prog[4200];
    snprintf(dir, sizeof dir, "%s/exec.%d", tmp, (int)getpid());
    CHECK_INT(mkdir(dir, 0700), ==, 0);
    snprintf(prog, sizeof prog, "%s/" LONG_NAME, dir);
    copy_file("/bin/cat", prog);
    int go[2], in[2];
    CHECK_INT(pipe(go), ==, 0);
    CHECK_INT(pipe(in), ==, 0);
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        if (read(go[0], &b, 1) != 1 || dup2(in[0], 0) != 0)
            _exit(120);
        close(in[1]);
        char *argv[] = {prog, NULL};
        execv(prog, argv);
        _exit(121);
    }
    CHECK(pid > 0);
    close(in[0]);
    raw_start_pid(&k, kp, NULL, NULL, KPERF_SAMPLER_TH_INFO, 1000000, pid);
    CHECK_INT((int)write(go[1], "x", 1), ==, 1);
    simk_kd_buf *r = calloc(READ_MAX, sizeof *r);
    CHECK(r != NULL);
    size_t n = 0, data = 0, strings = 0, execs = 0;
    char name[33] = "";
    for (int i = 0; i < 1000 && execs == 0; i++) {
        size_t from = n;
        n += raw_read(&k, r + n, READ_MAX - n);
        for (size_t j = from; j < n; j++) {
            if (r[j].arg5 != (uint64_t)pid)
                continue;
            if (r[j].debugid == ID_TRACE_DATA_EXEC && r[j].arg1 == (uint64_t)pid) {
                data++;
            } else if (r[j].debugid == ID_TRACE_STRING_EXEC && data == 1) {
                strings++;
                const uint64_t w[4] = {r[j].arg1, r[j].arg2, r[j].arg3, r[j].arg4};
                memcpy(name, w, 32);
            } else if (r[j].debugid == ID_PROC_EXEC && r[j].arg1 == (uint64_t)pid && strings == 1) {
                execs++;
            }
        }
        usleep(10000);
    }
    close(in[1]); /* cat ends */
    wait_zombie(pid);
    raw_stop(&k, kp);
    int status = 0;
    CHECK_INT(waitpid(pid, &status, 0), ==, pid);
    unlink(prog);
    rmdir(dir);
    fprintf(stderr, "child %d: %zu records; exec data %zu, string %zu (%s), BSD_PROC_EXEC %zu\n",
            (int)pid, n, data, strings, name, execs);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_U64(data, ==, 1);
    CHECK_U64(strings, ==, 1);
    CHECK_U64(execs, ==, 1);
    CHECK_STR(name, LONG_NAME);
    close(go[0]);
    close(go[1]);
    free(r);
    check_disarmed(state_path());
}

/* A live process's name in Linux's words: comm (/proc/<pid>/comm), or the
 * basename of argv[0] (/proc/<pid>/cmdline). */
static void linux_name(pid_t pid, const char *file, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t n = fread(out, 1, size - 1, f);
    fclose(f);
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    const char *slash = strrchr(out, '/');
    if (slash != NULL)
        memmove(out, slash + 1, strlen(slash + 1) + 1);
}

/* proc_pidinfo(PROC_PIDTBSDINFO) on a zombie (findzomb): pbi_name is still
 * p_name (proc_pidbsdinfo copies it whatever the state), the name seen
 * while it ran; one never seen alive has comm's 15 characters. Under
 * valgrind the child's comm and argv[0] are valgrind's (it rewrites only
 * what a process reads of itself), so the names expected are read from
 * Linux as the child runs. */
TEST_CASE(a_zombie_keeps_its_name)
{
    const char *root = getenv("DKPERF_FRAMEWORK_ROOT");
    CHECK(root != NULL);
    char path[4096], self[4096];
    snprintf(path, sizeof path, "%s/usr/lib/system/libsystem_kernel.dylib", root);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL);
    int (*pidinfo)(int, int, uint64_t, void *, int);
    *(void **)&pidinfo = dlsym(h, "proc_pidinfo");
    CHECK(pidinfo != NULL);
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len] = '\0';
    const char *base = strrchr(self, '/') + 1;
    for (int seen = 1; seen >= 0; seen--) {
        int go[2];
        CHECK_INT(pipe(go), ==, 0);
        pid_t pid = fork();
        if (pid == 0) {
            /* Ends when this test does, if it fails first. */
            close(go[1]);
            char b;
            _exit(read(go[0], &b, 1) == 1 ? 0 : 1);
        }
        CHECK(pid > 0);
        close(go[0]);
        char comm[16], argv0[256];
        linux_name(pid, "comm", comm, sizeof comm);
        linux_name(pid, "cmdline", argv0, sizeof argv0);
        if (!dkt_under_valgrind()) {
            CHECK_STR(argv0, base);
            CHECK(strncmp(comm, base, 15) == 0 &&
                  strlen(comm) == (strlen(base) < 15 ? strlen(base) : 15));
        }
        struct dk__proc_bsdinfo bi;
        if (seen) {
            memset(&bi, 0, sizeof bi);
            CHECK_INT(pidinfo(pid, DK__PROC_PIDTBSDINFO, 0, &bi, (int)sizeof bi), ==,
                      (int)sizeof bi);
            CHECK_STR(bi.pbi_name, argv0);
        }
        CHECK_INT((int)write(go[1], "x", 1), ==, 1);
        wait_zombie(pid);
        memset(&bi, 0, sizeof bi);
        CHECK_INT(pidinfo(pid, DK__PROC_PIDTBSDINFO, 1, &bi, (int)sizeof bi), ==, (int)sizeof bi);
        fprintf(stderr, "zombie %d (%s alive): pbi_name \"%s\", pbi_comm \"%s\", status %u\n",
                (int)pid, seen ? "seen" : "not seen", bi.pbi_name, bi.pbi_comm, bi.pbi_status);
        CHECK_INT((int)bi.pbi_status, ==, 5); /* SZOMB */
        CHECK_STR(bi.pbi_name, seen ? argv0 : comm);
        CHECK_STR(bi.pbi_comm, comm);
        int status;
        CHECK_INT(waitpid(pid, &status, 0), ==, pid);
        close(go[1]);
    }
    dlclose(h);
}

/* KDEBUG_ENABLE_PPT alone logs KDEBUG_COMMON records only: a timer's
 * kperf samples (KDBG_RELEASE, ~KDEBUG_ENABLE_PPT) are not written. And
 * a typefilter given from a NULL buffer of the right size is copyin's
 * EFAULT, a wrong size EINVAL (kdbg_copyin_typefilter). */
TEST_CASE(ppt_tracing_logs_no_kperf_records)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    const dk_kperf_vtable *kp = kperf();
    CHECK_INT(kd(&k, KERN_KDREMOVE, 0, 3, NULL, NULL), ==, 0);
    CHECK_INT(kd(&k, KERN_KDSETBUF, 1 << 20, 4, NULL, NULL), ==, 0);
    CHECK_INT(kd(&k, KERN_KDSETUP, 0, 3, NULL, NULL), ==, 0);
    size_t len = TYPEFILTER_BYTES;
    CHECK_INT(kd(&k, KERN_KDSET_TYPEFILTER, 0, 3, NULL, &len), ==, EFAULT);
    len = TYPEFILTER_BYTES - 1;
    unsigned char small[16] = {0};
    CHECK_INT(kd(&k, KERN_KDSET_TYPEFILTER, 0, 3, small, &len), ==, EINVAL);
    CHECK_INT(kd(&k, KERN_KDENABLE, KDEBUG_ENABLE_PPT, 4, NULL, NULL), ==, 0);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(kp->kperf_action_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_action_samplers_set(1, KPERF_SAMPLER_TH_INFO | KPERF_SAMPLER_USTACK), ==,
              0);
    CHECK_INT(kp->kperf_action_filter_set_by_pid(1, getpid()), ==, 0);
    CHECK_INT(kp->kperf_timer_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_timer_period_set(0, kp->kperf_ns_to_ticks(1000000)), ==, 0);
    CHECK_INT(kp->kperf_timer_action_set(0, 1), ==, 0);
    CHECK_INT(kp->kperf_sample_set(1), ==, 0);
    dkt_hot_caller(100000000);
    simk_kd_buf *r = calloc(READ_MAX, sizeof *r);
    CHECK(r != NULL);
    size_t n = raw_read(&k, r, READ_MAX), kperf_records = 0;
    raw_stop(&k, kp);
    for (size_t i = 0; i < n; i++)
        kperf_records += r[i].debugid >> 24 == 0x25u;
    fprintf(stderr, "%zu records, %zu of kperf's\n", n, kperf_records);
    CHECK_U64(kperf_records, ==, 0);
    free(r);
    check_disarmed(state_path());
}

/* GEN_EVENT's arg1 names every sampler of the action, the pended user
 * stack too, at interrupt time (kperf_sample_internal); the part logged
 * on the way back to user space names USTACK | TH_INFO
 * (kperf_thread_ast_handler). */
TEST_CASE(a_sample_names_every_sampler_of_its_action)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    const dk_kperf_vtable *kp = kperf();
    const uint32_t what = KPERF_SAMPLER_TH_INFO | KPERF_SAMPLER_USTACK | KPERF_SAMPLER_KSTACK;
    raw_start(&k, kp, NULL, NULL, what, 1000000);
    dkt_hot_caller(50000000);
    simk_kd_buf *r = calloc(READ_MAX, sizeof *r);
    CHECK(r != NULL);
    size_t n = raw_read(&k, r, READ_MAX), intr = 0, user = 0;
    raw_stop(&k, kp);
    for (size_t i = 0; i < n; i++) {
        if (r[i].debugid != (ID_GEN_EVENT | 1u) || r[i].arg2 != 1)
            continue;
        if (r[i].arg4 != 0) {
            CHECK_U64(r[i].arg1, ==, what);
            intr++;
        } else {
            CHECK_U64(r[i].arg1, ==, KPERF_SAMPLER_USTACK | KPERF_SAMPLER_TH_INFO);
            user++;
        }
    }
    fprintf(stderr, "%zu samples at interrupt time, %zu user parts\n", intr, user);
    CHECK_U64(intr, >, 0);
    CHECK_U64(user, >, 0);
    free(r);
    check_disarmed(state_path());
}

typedef struct cpu_seen {
    size_t samples, beyond;
    unsigned char seen[256];
} cpu_seen;

static int collect_cpu(void *ctx, const dk_sample *s)
{
    cpu_seen *c = ctx;
    if (s->kind != DK_SAMPLE_KIND_SAMPLE)
        return 0;
    c->samples++;
    if (s->cpu < sizeof c->seen)
        c->seen[s->cpu] = 1;
    else
        c->beyond++;
    return 0;
}

/* DKPERF_SIM_NCPU=128: the machine's sysctls count 128 CPUs in its levels,
 * and the samples of kperf's one trace buffer carry CPU numbers spread
 * over them, not only the host's few. */
TEST_CASE(a_machine_of_many_cpus_samples_on_them)
{
    const char *want = getenv("DKPERF_SIM_NCPU");
    if (want == NULL || atoi(want) < 64)
        DKT_FAIL("run with DKPERF_SIM_NCPU of 64 or more (tests/CMakeLists.txt)");
    int n = atoi(want);
    fresh_state();
    sim_kernel k = sim_kernel_open();
    CHECK_INT(read_int(&k, "hw.ncpu"), ==, n);
    CHECK_INT(read_int(&k, "hw.logicalcpu"), ==, n);
    int levels = read_int(&k, "hw.nperflevels"), sum = 0;
    for (int l = 0; l < levels; l++) {
        char name[48];
        snprintf(name, sizeof name, "hw.perflevel%d.logicalcpu", l);
        sum += read_int(&k, name);
    }
    CHECK_INT(sum, ==, n);
    dk_sampler *s = open_sampler();
    dk_sampling *p =
        open_sampling(s, "timer", 1000000, DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_CPU);
    cpu_seen c = {0};
    CHECK_INT(dk_sampling_start(p), ==, 0);
    for (int i = 0; i < 8; i++) {
        dkt_hot_caller(50000000);
        CHECK_INT(dk_sampling_drain(p, collect_cpu, &c), >=, 0);
    }
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect_cpu, &c), >=, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    size_t distinct = 0, top = 0;
    for (size_t i = 0; i < sizeof c.seen; i++)
        if (c.seen[i]) {
            distinct++;
            top = i;
        }
    fprintf(stderr, "samples %zu on %zu CPUs (highest %zu) of %d\n", c.samples, distinct, top, n);
    CHECK_U64(c.samples, >=, 100);
    CHECK_U64(c.beyond, ==, 0);
    CHECK_U64(top, <, (size_t)n);
    long host = sysconf(_SC_NPROCESSORS_CONF);
    CHECK_U64(distinct, >, (size_t)(host > 0 ? host : 1));
    check_disarmed(state_path());
}
