/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * overhead.c - what dk_thread_sample costs on top of the raw call it wraps.
 *
 *   kperf:      dk_thread_sample vs kpc_get_thread_counters through the vtable
 *               (against the simulated frameworks when the build has them)
 *   perf_event: dk_thread_sample vs read() of the same group fd (Linux)
 *   pmu:        on a hardware PMU with user-space reads (QEMU's arm64 PMUv3 under
 *               -icount: tests/qemu/run.sh), instructions per call counted by the
 *               PMU itself, user and kernel: dk_thread_sample of a 1- and a
 *               2-event thread vs the bare mrs/rdpmc + seqlock reads of as many
 *               counters, and vs read() of the thread's group. Targets: at most
 *               1.2x the bare reads, at least 10x fewer than read().
 *
 * Each pair runs on one thread in interleaved rounds; the median ns/call of
 * each is reported, and the median over rounds of each round's ratio, which
 * cancels the machine's drift between rounds. When valgrind is installed, the program also runs itself
 * under callgrind per loop and reports instructions per call, which do not
 * depend on machine noise. Targets:
 *   kperf:      at most 10% or 50 instructions more, whichever is larger
 *               (callgrind instructions: the framework call is user code)
 *   perf_event: at most 5% more time (the kernel's work, which callgrind
 *               cannot see, is most of the cost)
 *
 * usage: overhead [--calls N] [--rounds R] [--no-callgrind] [--case kperf|perf_event|pmu]
 * Exit status 0 when every target is met, 1 when one is not, 2 on errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "dkperf.h"
#include "dkperf/kperf.h"
#include "common/stats.h"
#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "backend/perf_event/perf_event.h"
#include "backend/perf_event/perf_mmap.h"
#endif

#ifndef DKPERF_BENCH_SIM_ROOT
#define DKPERF_BENCH_SIM_ROOT ""
#endif

typedef struct bench {
    const char *name;
    dk_sampler *sampler;
    dk_thread *thread;
    size_t n;
    const dk_kperf_vtable *kp; /* kperf */
    int fd;                    /* perf_event group */
    size_t read_size;
} bench;

/* The loops callgrind measures (by name, see --toggle-collect). */
__attribute__((noinline)) int bench_loop_raw(bench *b, long calls)
{
    uint64_t buf[64];
    int bad = 0;
    if (b->kp != NULL) {
        for (long i = 0; i < calls; i++)
            bad |= b->kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, buf);
    } else {
        for (long i = 0; i < calls; i++)
            bad |= read(b->fd, buf, b->read_size) != (ssize_t)b->read_size;
    }
    return bad;
}

__attribute__((noinline)) int bench_loop_dk(bench *b, long calls)
{
    uint64_t values[DK_MAX_EVENTS];
    int bad = 0;
    for (long i = 0; i < calls; i++)
        bad |= dk_thread_sample(b->thread, values);
    return bad;
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "overhead: %s: %s: %s\n", what, dk_error_name(rc), dk_last_error());
    return 2;
}

static int setup(bench *b, const char *which)
{
    memset(b, 0, sizeof *b);
    b->name = which;
    b->fd = -1;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    int rc;
    if (strcmp(which, "kperf") == 0) {
        /* In a build tree, default to the simulated frameworks. */
        if (getenv("DKPERF_FRAMEWORK_ROOT") == NULL && DKPERF_BENCH_SIM_ROOT[0] != '\0' &&
            access(DKPERF_BENCH_SIM_ROOT, F_OK) == 0)
            o.framework_root = DKPERF_BENCH_SIM_ROOT;
        o.backend = DK_BACKEND_KPERF;
        const dk_event events[] = {DK_EVENT_FIXED_INSTRUCTIONS, DK_EVENT_FIXED_CYCLES};
        b->n = 2;
        rc = dk_sampler_open(&b->sampler, &o);
        if (rc == 0)
            rc = dk_thread_open(b->sampler, events, 2, &b->thread);
        if (rc == 0)
            rc = dk_kperf_load(o.framework_root, &b->kp, NULL);
    } else {
#ifdef __linux__
        o.backend = DK_BACKEND_PERF_EVENT;
        const char *names[] = {"task-clock", "page-faults", "context-switches"};
        b->n = 3;
        rc = dk_sampler_open(&b->sampler, &o);
        if (rc == 0)
            rc = dk_thread_open_names(b->sampler, names, 3, &b->thread);
        if (rc == 0) {
            b->fd = dk__perf_event_group_fd(b->thread);
            b->read_size = dk__pe_read_size(b->n);
        }
#else
        (void)o;
        fprintf(stderr, "overhead: perf_event exists only on Linux\n");
        return 2;
#endif
    }
    if (rc == 0)
        rc = dk_thread_start(b->thread);
    if (rc != 0) {
        dk_thread_close(b->thread);
        dk_sampler_close(b->sampler);
        return fail(which, rc);
    }
    return 0;
}

static void teardown(bench *b)
{
    dk_thread_close(b->thread);
    dk_sampler_close(b->sampler);
}

/* Instructions per call of one loop, measured by callgrind; -1 if unavailable. */
static double callgrind(const char *self, const char *which, const char *loop, long calls)
{
    char out[] = "/tmp/dkperf-callgrind-XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0)
        return -1;
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=callgrind --callgrind-out-file=%s --toggle-collect=bench_loop_%s "
             "'%s' --case %s --loop %s --calls %ld >/dev/null 2>&1",
             out, loop, self, which, loop, calls);
    double per_call = -1;
    if (system(cmd) == 0) {
        FILE *f = fopen(out, "r");
        char line[512];
        while (f != NULL && fgets(line, sizeof line, f) != NULL) {
            unsigned long long ir;
            if (sscanf(line, "totals: %llu", &ir) == 1 || sscanf(line, "summary: %llu", &ir) == 1)
                per_call = (double)ir / (double)calls;
        }
        if (f != NULL)
            fclose(f);
    }
    unlink(out);
    return per_call;
}

/* Interleaved rounds of the two loops: ns per call of each, and their ratio. */
static int measure(bench *b, long calls, int rounds, double *raw, double *dk, double *ratio)
{
    bench_loop_raw(b, calls / 10 + 1); /* warm up */
    bench_loop_dk(b, calls / 10 + 1);
    for (int r = 0; r < rounds; r++) {
        /* Alternate which goes first, so drift does not favour one. */
        uint64_t t0 = dk__monotonic_ns();
        int bad = r % 2 ? bench_loop_dk(b, calls) : bench_loop_raw(b, calls);
        uint64_t t1 = dk__monotonic_ns();
        bad |= r % 2 ? bench_loop_raw(b, calls) : bench_loop_dk(b, calls);
        uint64_t t2 = dk__monotonic_ns();
        if (bad) {
            fprintf(stderr, "overhead: a call failed: %s\n", dk_last_error());
            return 2;
        }
        raw[r] = (double)(r % 2 ? t2 - t1 : t1 - t0) / (double)calls;
        dk[r] = (double)(r % 2 ? t1 - t0 : t2 - t1) / (double)calls;
        /* Each round's pair ran back to back: their ratio cancels drift. */
        ratio[r] = dk[r] / raw[r];
    }
    return 0;
}

/* Run one case; returns 0 met, 1 missed, 2 error. */
static int run_case(const char *self, const char *which, long calls, int rounds, bool cg)
{
    bench b;
    int rc = setup(&b, which);
    if (rc != 0)
        return rc;
    double *raw = calloc((size_t)rounds, sizeof *raw), *dk = calloc((size_t)rounds, sizeof *dk);
    double *ratio = calloc((size_t)rounds, sizeof *ratio);
    if (raw == NULL || dk == NULL || ratio == NULL) {
        fprintf(stderr,
                "overhead: out of memory for the timings of %d rounds (try fewer --rounds)\n",
                rounds);
        rc = 2;
    }
    if (rc == 0)
        rc = measure(&b, calls, rounds, raw, dk, ratio);
    const char *root = dk_framework_root(NULL);
    bool kperf = strcmp(which, "kperf") == 0;
    if (rc == 0)
        printf("\n%s backend on %s%s, %zu events, %d interleaved rounds of %ld calls\n", which,
               kperf ? dk_cpu_name(dk_sampler_cpu(b.sampler))
                     : dk_database_marketing_name(dk_sampler_database(b.sampler)),
               kperf && (root[0] != '\0' || DKPERF_BENCH_SIM_ROOT[0] != '\0')
                   ? " (simulated frameworks)"
                   : "",
               b.n, rounds, calls);
    teardown(&b);
    double raw_ns = 0, dk_ns = 0, time_ratio = 0;
    if (rc == 0) {
        raw_ns = dkb_median(raw, (size_t)rounds);
        dk_ns = dkb_median(dk, (size_t)rounds);
        time_ratio = dkb_median(ratio, (size_t)rounds);
    }
    free(raw);
    free(dk);
    free(ratio);
    if (rc != 0)
        return rc;
    double raw_ir = -1, dk_ir = -1;
    if (cg && system("valgrind --version >/dev/null 2>&1") == 0) {
        long cg_calls = calls < 5000 ? calls : 5000;
        raw_ir = callgrind(self, which, "raw", cg_calls);
        dk_ir = callgrind(self, which, "dk", cg_calls);
    }
    const char *raw_name = kperf ? "raw kpc_get_thread_counters" : "raw read() of the group fd";
    printf("%-34s %12s %20s\n", "", "ns/call", "instructions/call");
    printf("%-34s %12.1f %20.1f\n", raw_name, raw_ns, raw_ir);
    printf("%-34s %12.1f %20.1f\n", "dk_thread_sample", dk_ns, dk_ir);
    printf("%-34s %+12.1f %+20.1f\n", "added", dk_ns - raw_ns, dk_ir - raw_ir);
    printf("%-34s %12.3f %20.3f\n", "ratio dk/raw (median of rounds)", time_ratio,
           raw_ir > 0 ? dk_ir / raw_ir : 0.0);
    if (kperf) {
        if (raw_ir <= 0 || dk_ir <= 0) {
            printf("target (callgrind instructions): not checked, valgrind unavailable\n");
            return 0;
        }
        double allowed = raw_ir * 0.10 > 50 ? raw_ir * 0.10 : 50;
        bool met = dk_ir - raw_ir <= allowed;
        printf("target: at most +10%% or +50 instructions per sample, whichever is larger "
               "(+%.0f allowed): %s (+%.1f)\n",
               allowed, met ? "met" : "MISSED", dk_ir - raw_ir);
        return met ? 0 : 1;
    }
    bool met = time_ratio <= 1.05;
    printf("target: at most 5%% more time than read(): %s (%+.1f%%)\n", met ? "met" : "MISSED",
           (time_ratio - 1) * 100);
    return met ? 0 : 1;
}

#ifdef __linux__
/* A counter of this thread's instructions, user and kernel; leader < 0: its
 * own group, else a sibling. config1: the user-read bits. */
static int open_insn(uint64_t config, uint64_t config1, int leader, bool user_only)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = config;
    a.config1 = config1;
    a.exclude_kernel = user_only;
    a.exclude_hv = 1;
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                    PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
    if (leader < 0)
        a.read_format = 0;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, leader, PERF_FLAG_FD_CLOEXEC);
}

static uint64_t count_of(int fd)
{
    uint64_t v = 0;
    return read(fd, &v, sizeof v) == (ssize_t)sizeof v ? v : 0;
}

typedef struct pmu_bench {
    dk_thread *thread;
    int fd; /* the thread's group, for read() */
    size_t read_size;
    const struct perf_event_mmap_page *pages[2]; /* a group of as many, for the bare reads */
    size_t n;
} pmu_bench;

__attribute__((noinline)) int bench_loop_bare(pmu_bench *p, long calls)
{
    const dk__pmc_ops *ops = dk__pmc_native();
    int bad = 0;
    for (long i = 0; i < calls; i++)
        for (size_t j = 0; j < p->n; j++) {
            uint64_t c, e, r;
            bad |= !dk__pmc_read(p->pages[j], ops, false, &c, &e, &r);
        }
    return bad;
}

__attribute__((noinline)) int bench_loop_sample(pmu_bench *p, long calls)
{
    uint64_t values[DK_MAX_EVENTS];
    int bad = 0;
    for (long i = 0; i < calls; i++)
        bad |= dk_thread_sample(p->thread, values);
    return bad;
}

__attribute__((noinline)) int bench_loop_read(pmu_bench *p, long calls)
{
    uint64_t buf[16];
    int bad = 0;
    for (long i = 0; i < calls; i++)
        bad |= read(p->fd, buf, p->read_size) != (ssize_t)p->read_size;
    return bad;
}

/* Instructions per call of loop, less the counter's own read() (an empty loop). */
static double per_call(int meter, int (*loop)(pmu_bench *, long), pmu_bench *p, long calls,
                       int *bad)
{
    uint64_t a = count_of(meter);
    *bad |= loop(p, calls);
    uint64_t b = count_of(meter);
    uint64_t c = count_of(meter);
    *bad |= loop(p, 0);
    uint64_t d = count_of(meter);
    return ((double)(b - a) - (double)(d - c)) / (double)calls;
}

/* Returns 0 met, 1 missed, 2 cannot run here. */
static int run_pmu_case(long calls)
{
    dk_sampler *s = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = DK_BACKEND_PERF_EVENT;
    o.flags = DK_SAMPLER_USER_ONLY;
    int rc = dk_sampler_open(&s, &o);
    if (rc != 0)
        return fail("pmu", rc);
    dk_backend_caps caps = {.size = sizeof caps};
    dk_sampler_caps(s, &caps);
    if (caps.user_reads == NULL || strncmp(caps.user_reads, "on:", 3) != 0) {
        fprintf(stderr, "overhead: pmu case: user-space reads are %s\n",
                caps.user_reads ? caps.user_reads : "not offered by this backend");
        dk_sampler_close(s);
        return 2;
    }
    int meter = open_insn(PERF_COUNT_HW_INSTRUCTIONS, 0, -1, false);
    if (meter < 0) {
        fprintf(stderr, "overhead: pmu case: cannot count instructions: %s\n", strerror(errno));
        dk_sampler_close(s);
        return 2;
    }
    /* The same user-read bits the backend found (arm64 config1; x86 none). */
    uint64_t config1 = 0;
#if defined(__aarch64__)
    config1 = strstr(caps.user_reads, "64-bit") ? 0x3 : 0x2;
#endif
    printf("\npmu case: %s\n%s; %ld calls, instructions per call (user and kernel) counted by "
           "the PMU\n",
           caps.pmu, caps.user_reads, calls);
    printf("%-8s %14s %18s %14s %10s %10s\n", "events", "bare reads", "dk_thread_sample", "read()",
           "dk/bare", "read/dk");
    int worst = 0;
    long page = sysconf(_SC_PAGESIZE);
    for (size_t n = 1; n <= 2; n++) {
        const char *names[] = {"instructions", "cycles"};
        const uint64_t configs[] = {PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CPU_CYCLES};
        pmu_bench p = {.n = n, .fd = -1};
        int fds[2] = {-1, -1};
        void *maps[2] = {MAP_FAILED, MAP_FAILED};
        rc = dk_thread_open_names(s, names, n, &p.thread);
        if (rc == 0)
            rc = dk_thread_start(p.thread);
        bool ok = rc == 0;
        for (size_t j = 0; j < n && ok; j++) {
            fds[j] = open_insn(configs[j], config1, j ? fds[0] : -1, true);
            if (fds[j] >= 0)
                maps[j] = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fds[j], 0);
            ok = fds[j] >= 0 && maps[j] != MAP_FAILED;
            p.pages[j] = maps[j];
        }
        int bad = !ok;
        double bare = 0, dk = 0, rd = 0;
        if (ok) {
            p.fd = dk__perf_event_group_fd(p.thread);
            p.read_size = (3 + 2 * n) * sizeof(uint64_t);
            bench_loop_bare(&p, 10); /* warm up: resolve symbols, fault pages in */
            bench_loop_sample(&p, 10);
            bench_loop_read(&p, 10);
            bare = per_call(meter, bench_loop_bare, &p, calls, &bad);
            dk = per_call(meter, bench_loop_sample, &p, calls, &bad);
            rd = per_call(meter, bench_loop_read, &p, calls, &bad);
        }
        for (size_t j = 0; j < n; j++) {
            if (maps[j] != MAP_FAILED)
                munmap(maps[j], (size_t)page);
            if (fds[j] >= 0)
                close(fds[j]);
        }
        dk_thread_close(p.thread);
        if (bad) {
            fprintf(stderr, "overhead: pmu case, %zu events: %s\n", n,
                    rc != 0 ? dk_last_error() : "a bare user-space read or read() failed");
            worst = 2;
            break;
        }
        printf("%-8zu %14.1f %18.1f %14.1f %10.2f %10.1f\n", n, bare, dk, rd, dk / bare, rd / dk);
        bool met = dk <= 1.2 * bare && rd >= 10 * dk;
        printf("target, %zu event%s: dk_thread_sample at most 1.2x the bare reads (%s), read() at "
               "least 10x dk_thread_sample (%s)\n",
               n, n > 1 ? "s" : "", dk <= 1.2 * bare ? "met" : "MISSED",
               rd >= 10 * dk ? "met" : "MISSED");
        if (!met && worst < 1)
            worst = 1;
    }
    close(meter);
    dk_sampler_close(s);
    return worst;
}
#endif

int main(int argc, char **argv)
{
    long calls = 20000;
    int rounds = 31;
    bool cg = true;
    const char *loop = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            calls = atol(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-callgrind") == 0)
            cg = false;
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--loop") == 0 && i + 1 < argc)
            loop = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--calls N] [--rounds R] [--no-callgrind] "
                    "[--case kperf|perf_event|pmu]\n",
                    argv[0]);
            return 2;
        }
    }
    if (calls < 1 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "overhead: --calls and --rounds must be positive\n");
        return 2;
    }
    if (only != NULL && strcmp(only, "kperf") != 0 && strcmp(only, "perf_event") != 0 &&
        strcmp(only, "pmu") != 0) {
        fprintf(stderr, "overhead: --case is kperf, perf_event or pmu\n");
        return 2;
    }
    if (only != NULL && strcmp(only, "pmu") == 0) {
#ifdef __linux__
        return run_pmu_case(calls < 100000 ? calls : 100000);
#else
        fprintf(stderr, "overhead: the pmu case is Linux only\n");
        return 2;
#endif
    }
    if (loop != NULL) { /* a child under callgrind */
        bench b;
        if (only == NULL || setup(&b, only) != 0)
            return 2;
        int bad = strcmp(loop, "raw") == 0 ? bench_loop_raw(&b, calls) : bench_loop_dk(&b, calls);
        teardown(&b);
        return bad != 0;
    }

    printf("bench/overhead: dk_thread_sample vs the raw call it wraps\n");
    int worst = 0, ran = 0;
    const char *cases[] = {"kperf", "perf_event"};
    for (int c = 0; c < 2; c++) {
        if (only != NULL && strcmp(only, cases[c]) != 0)
            continue;
#ifndef __linux__
        if (c == 1)
            continue;
#endif
        int rc = run_case(argv[0], cases[c], calls, rounds, cg);
        if (rc == 2 && only == NULL) {
            printf("(%s case skipped: it cannot run here)\n", cases[c]);
            continue;
        }
        ran++;
        if (rc > worst)
            worst = rc;
    }
    return ran == 0 ? 2 : worst;
}
