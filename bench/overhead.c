/*
 * overhead.c - what dk_thread_sample costs on top of the raw call it wraps.
 *
 *   kperf: dk_thread_sample vs kpc_get_thread_counters through the vtable
 *
 * Both run on one thread, in interleaved rounds, and the median ns/call of
 * each is reported. When valgrind is installed, the program also runs itself
 * under callgrind for each loop and reports instructions per call, which do
 * not depend on machine noise; the target is judged on those:
 *   kperf: at most 10% or 50 instructions more, whichever is larger.
 *
 * usage: overhead [--calls N] [--rounds R] [--no-callgrind]
 * Exit status 0 when the target is met, 1 when not, 2 on errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dkperf.h"
#include "dkperf/kperf.h"

#ifndef DKPERF_BENCH_SIM_ROOT
#define DKPERF_BENCH_SIM_ROOT ""
#endif

typedef struct bench {
    dk_sampler *sampler;
    dk_thread *thread;
    const dk_kperf_vtable *kp;
} bench;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The two loops callgrind measures (by name, see --toggle-collect). */
__attribute__((noinline)) int bench_loop_raw(bench *b, long calls)
{
    uint64_t buf[KPC_MAX_COUNTERS];
    int bad = 0;
    for (long i = 0; i < calls; i++)
        bad |= b->kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, buf);
    return bad;
}

__attribute__((noinline)) int bench_loop_dk(bench *b, long calls)
{
    uint64_t values[2];
    int bad = 0;
    for (long i = 0; i < calls; i++)
        bad |= dk_thread_sample(b->thread, values);
    return bad;
}

static int setup(bench *b)
{
    /* Under a build tree, default to the simulated frameworks. */
    if (getenv("DKPERF_FRAMEWORK_ROOT") == NULL && DKPERF_BENCH_SIM_ROOT[0] != '\0' &&
        access(DKPERF_BENCH_SIM_ROOT, F_OK) == 0)
        setenv("DKPERF_FRAMEWORK_ROOT", DKPERF_BENCH_SIM_ROOT, 1);
    const dk_event events[] = {DK_EVENT_FIXED_INSTRUCTIONS, DK_EVENT_FIXED_CYCLES};
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = DK_BACKEND_KPERF;
    int rc = dk_sampler_open(&b->sampler, &o);
    if (rc == 0)
        rc = dk_thread_open(b->sampler, events, 2, &b->thread);
    if (rc == 0)
        rc = dk_thread_start(b->thread);
    if (rc == 0)
        rc = dk_kperf_load(NULL, &b->kp, NULL);
    if (rc != 0)
        fprintf(stderr, "overhead: %s: %s\n", dk_error_name(rc), dk_last_error());
    return rc;
}

static void teardown(bench *b)
{
    dk_thread_close(b->thread);
    dk_sampler_close(b->sampler);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Instructions per call of one loop, measured by callgrind; -1 if unavailable. */
static double callgrind(const char *self, const char *loop, long calls)
{
    char out[] = "/tmp/dkperf-callgrind-XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0)
        return -1;
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=callgrind --callgrind-out-file=%s --toggle-collect=bench_loop_%s "
             "'%s' --loop %s --calls %ld >/dev/null 2>&1",
             out, loop, self, loop, calls);
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

int main(int argc, char **argv)
{
    long calls = 20000;
    int rounds = 15;
    bool use_callgrind = true;
    const char *loop = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            calls = atol(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-callgrind") == 0)
            use_callgrind = false;
        else if (strcmp(argv[i], "--loop") == 0 && i + 1 < argc)
            loop = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--calls N] [--rounds R] [--no-callgrind]\n", argv[0]);
            return 2;
        }
    }
    if (calls < 1 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "overhead: --calls and --rounds must be positive\n");
        return 2;
    }

    bench b = {0};
    if (setup(&b) != 0)
        return 2;
    if (loop != NULL) { /* a child under callgrind */
        int bad = strcmp(loop, "raw") == 0 ? bench_loop_raw(&b, calls) : bench_loop_dk(&b, calls);
        teardown(&b);
        return bad != 0;
    }

    double *raw = calloc((size_t)rounds, sizeof *raw), *dk = calloc((size_t)rounds, sizeof *dk);
    bench_loop_raw(&b, calls / 10 + 1); /* warm up */
    bench_loop_dk(&b, calls / 10 + 1);
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = now_ns();
        int bad = bench_loop_raw(&b, calls);
        uint64_t t1 = now_ns();
        bad |= bench_loop_dk(&b, calls);
        uint64_t t2 = now_ns();
        if (bad) {
            fprintf(stderr, "overhead: a call failed: %s\n", dk_last_error());
            return 2;
        }
        raw[r] = (double)(t1 - t0) / (double)calls;
        dk[r] = (double)(t2 - t1) / (double)calls;
    }
    const char *root = getenv("DKPERF_FRAMEWORK_ROOT");
    printf("bench/overhead: dk_thread_sample vs the raw call it wraps\n");
    printf("backend kperf on %s (%s), 2 events, %d interleaved rounds of %ld calls\n",
           dk_cpu_name(dk_sampler_cpu(b.sampler)),
           root != NULL && *root ? "simulated frameworks" : "the system's frameworks", rounds,
           calls);
    teardown(&b);

    double raw_ns = median(raw, rounds), dk_ns = median(dk, rounds);
    printf("%-34s %12s %20s\n", "", "ns/call", "instructions/call");
    double raw_ir = -1, dk_ir = -1;
    if (use_callgrind && system("valgrind --version >/dev/null 2>&1") == 0) {
        long cg_calls = calls < 5000 ? calls : 5000;
        raw_ir = callgrind(argv[0], "raw", cg_calls);
        dk_ir = callgrind(argv[0], "dk", cg_calls);
    }
    printf("%-34s %12.1f %20.1f\n", "raw kpc_get_thread_counters", raw_ns, raw_ir);
    printf("%-34s %12.1f %20.1f\n", "dk_thread_sample", dk_ns, dk_ir);
    printf("%-34s %+12.1f %+20.1f\n", "added", dk_ns - raw_ns, dk_ir - raw_ir);
    printf("%-34s %12.3f %20.3f\n", "ratio dk/raw", dk_ns / raw_ns,
           raw_ir > 0 ? dk_ir / raw_ir : 0.0);
    free(raw);
    free(dk);
    if (raw_ir <= 0 || dk_ir <= 0) {
        printf("target (judged on callgrind instructions): not checked, valgrind unavailable\n");
        return 0;
    }
    double allowed = raw_ir * 0.10 > 50 ? raw_ir * 0.10 : 50;
    bool met = dk_ir - raw_ir <= allowed;
    printf("target: at most +10%% or +50 instructions per sample, whichever is larger "
           "(+%.0f allowed): %s (+%.1f)\n",
           allowed, met ? "met" : "MISSED", dk_ir - raw_ir);
    return met ? 0 : 1;
}
