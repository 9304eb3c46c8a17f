/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * record_overhead.c - what `dkperf record -e cpu-clock -F 999 -g` costs next
 * to `perf record` with the same options, on the same CPU-bound program
 * with frame pointers (tests/record_prog.c, a fixed amount of work of about
 * --seconds of CPU), measured in one run, alternating bare / dkperf / perf,
 * medians of --runs runs:
 *
 *   program slowdown     the program's own CPU seconds (it prints them)
 *                        against the bare program's; target: at most perf's
 *   whole command        wall time of the recording command against the bare
 *                        program's; target: at most 1.05x
 *   bytes per sample     file size / samples; target: at most half of
 *                        perf.data's
 *   report time          `dkperf report --stdio` against `perf report
 *                        --stdio` on the same run's files; target: at most
 *                        half
 *   sample count         against the program's CPU seconds x 999; target:
 *                        within 1%
 *
 * usage: record-overhead [--seconds S] [--runs N] [--dkperf PATH] [--perf PATH]
 *                        [--prog PATH] [--dir DIR]
 *                        [--rates [-e EVENT] [-a]]
 *
 * --rates: the recorder's own CPU per sample (the whole command's CPU less
 * the program's) and the samples lost, at -F 1000, 4000 and 20000 (EVENT
 * cpu-clock by default; `timer` samples at timer@RATE, for the kperf
 * backend, e.g. on the simulated frameworks with DKPERF_SIM_NCPU=128 and
 * -a), one run each, perf record's beside where perf can record. Figures
 * only: exit status 0, or 2 when it cannot run.
 * Exit status 0 when every target is met, 1 when one is not, 2 when it
 * cannot run. Without perf (or where perf cannot record) the dkperf figures
 * are printed and the targets that need perf are said to be unjudged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "dkrec.h"
#include "child.h"
#include "common/stats.h"

#ifndef DKPERF_BENCH_DKPERF
#define DKPERF_BENCH_DKPERF "dkperf"
#endif
#ifndef DKPERF_BENCH_PROG
#define DKPERF_BENCH_PROG "record_prog"
#endif
#define MAX_RUNS 50

static char dir[1024];

static double last_cpu; /* CPU seconds of the last run: the command and all it reaped */

/* Runs argv with stdout into out_path (NULL: /dev/null) and stderr into
 * err_path (NULL: /dev/null); returns the wall seconds, or -1 when it could
 * not run or did not exit 0. */
static double run(char *const argv[], const char *out_path, const char *err_path)
{
    struct rusage ru;
    int out =
        open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err =
        open(err_path ? err_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    child_options o = CHILD_OPTIONS_INIT;
    o.stdout_fd = out;
    o.stderr_fd = err;
    child_process c;
    int rc = out < 0 || err < 0 ? -EIO : child_prepare(&c, argv, &o);
    if (out >= 0)
        close(out);
    if (err >= 0)
        close(err);
    if (rc != 0)
        return -1;
    uint64_t t0 = dk__monotonic_ns();
    int status = 0, e = 0;
    if (child_release(&c) != 0 || child_exec_result(&c, &e) != 0 || e != 0) {
        child_abandon(&c);
        return -1;
    }
    if (child_reap(&c, &status, &ru) != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    last_cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return (double)(dk__monotonic_ns() - t0) / 1e9;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The program's own CPU seconds, from its "cpu S" line. */
static double prog_cpu(const char *out_path)
{
    char *t = slurp(out_path);
    const char *at = t ? strstr(t, "cpu ") : NULL;
    return at ? atof(at + 4) : -1;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    long n = 0;
    int ch;
    while ((ch = getc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

static char *path_in(const char *name)
{
    static char bufs[8][1100];
    static int k;
    char *b = bufs[k++ % 8];
    if (snprintf(b, sizeof bufs[0], "%s/%s", dir, name) >= (int)sizeof bufs[0])
        b[0] = '\0';
    return b;
}

static double med(double *v, int n) { return n > 0 ? dkb_median(v, (size_t)n) : -1; }

/* The count before " lost" in text (dkperf's summary "N samples (L lost",
 * perf's "and lost L chunks"), commas dropped; 0 when it says none. */
static long lost_in(const char *text, const char *after)
{
    const char *at = text ? strstr(text, after) : NULL;
    if (at == NULL)
        return 0;
    at += strlen(after);
    long n = 0;
    for (; (*at >= '0' && *at <= '9') || *at == ','; at++)
        if (*at != ',')
            n = n * 10 + (*at - '0');
    return n;
}

/* --rates: the recorder's own CPU per sample and its losses at each rate. */
static int rates_mode(const char *dkperf, const char *perf, const char *prog, const char *rounds,
                      double bare_cpu, const char *event, bool all)
{
    static const char *const rates[] = {"1000", "4000", "20000"};
    char *data = strdup(path_in("rate.data")), *pf_data = strdup(path_in("rate.perf.data"));
    bool timer = strcmp(event, "timer") == 0, have_perf = !timer;
    printf("record-overhead --rates: %s --rounds %s (%.2f s of CPU bare), -e %s%s, one run each\n",
           prog, rounds, bare_cpu, event, all ? " -a" : "");
    printf("  %-8s %-14s %10s %12s %14s %8s\n", "rate", "recorder", "samples", "own CPU (s)",
           "CPU/sample (us)", "lost");
    for (size_t i = 0; data != NULL && pf_data != NULL && i < sizeof rates / sizeof rates[0]; i++) {
        char ev[64];
        snprintf(ev, sizeof ev, "%s@%s", event, rates[i]);
        char *dk[20], *pf[20];
        int n = 0, m = 0;
        dk[n++] = (char *)dkperf;
        dk[n++] = "record";
        pf[m++] = (char *)perf;
        pf[m++] = "record";
        if (all) {
            dk[n++] = "-a";
            pf[m++] = "-a";
        }
        dk[n++] = "-e";
        dk[n++] = timer ? ev : (char *)event;
        pf[m++] = "-e";
        pf[m++] = (char *)event;
        if (!timer) {
            dk[n++] = "-F";
            dk[n++] = (char *)rates[i];
        }
        pf[m++] = "-F";
        pf[m++] = (char *)rates[i];
        dk[n++] = "-o";
        dk[n++] = data;
        pf[m++] = "-o";
        pf[m++] = pf_data;
        char *tail[] = {"--", (char *)prog, "--rounds", (char *)rounds, "--print-cpu", NULL};
        for (size_t k = 0; k < sizeof tail / sizeof tail[0]; k++) {
            dk[n++] = tail[k];
            pf[m++] = tail[k];
        }
        dkrec *rec = NULL;
        char err[512];
        if (run(dk, path_in("rate.out"), path_in("rate.err")) < 0 ||
            dkrec_read_file(data, &rec, err, sizeof err) != 0) {
            char *e = slurp(path_in("rate.err"));
            printf("  %-8s %-14s failed: %.300s\n", rates[i], "dkperf", e && *e ? e : err);
        } else {
            double own = last_cpu - prog_cpu(path_in("rate.out"));
            uint64_t ns = rec->n_samples;
            printf("  %-8s %-14s %10llu %12.3f %14.2f %8ld\n", rates[i], "dkperf",
                   (unsigned long long)ns, own, ns ? own / (double)ns * 1e6 : 0.0,
                   lost_in(slurp(path_in("rate.err")), "samples ("));
            dkrec_free(rec);
        }
        if (!have_perf)
            continue;
        if (run(pf, path_in("rate.out"), path_in("rate.err")) < 0) {
            have_perf = false;
            printf("  %-8s %-14s cannot record here\n", rates[i], "perf");
            continue;
        }
        double own = last_cpu - prog_cpu(path_in("rate.out"));
        long lost = lost_in(slurp(path_in("rate.err")), "and lost ");
        char *script[] = {(char *)perf, "script", "-i", pf_data, "-F", "period", NULL};
        run(script, path_in("rate.script"), NULL);
        long ns = count_lines(path_in("rate.script"));
        printf("  %-8s %-14s %10ld %12.3f %14.2f %8ld%s\n", rates[i], "perf", ns, own,
               ns > 0 ? own / (double)ns * 1e6 : 0.0, lost, lost ? " chunks" : "");
    }
    const char *tmp[] = {"rate.out", "rate.err", "rate.script", "rate.perf.data.old"};
    for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++)
        unlink(path_in(tmp[k]));
    if (data != NULL)
        unlink(data);
    if (pf_data != NULL)
        unlink(pf_data);
    free(data);
    free(pf_data);
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 2.0;
    int runs = 3;
    const char *dkperf = DKPERF_BENCH_DKPERF, *perf = "perf", *prog = DKPERF_BENCH_PROG;
    const char *event = "cpu-clock";
    bool rates = false, all = false;
    snprintf(dir, sizeof dir, "%s", "/tmp");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dkperf") == 0 && i + 1 < argc)
            dkperf = argv[++i];
        else if (strcmp(argv[i], "--perf") == 0 && i + 1 < argc)
            perf = argv[++i];
        else if (strcmp(argv[i], "--prog") == 0 && i + 1 < argc)
            prog = argv[++i];
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            snprintf(dir, sizeof dir, "%.1000s", argv[++i]);
        else if (strcmp(argv[i], "--rates") == 0)
            rates = true;
        else if (strcmp(argv[i], "-e") == 0 && i + 1 < argc)
            event = argv[++i];
        else if (strcmp(argv[i], "-a") == 0)
            all = true;
        else {
            fprintf(stderr, "usage: record-overhead [--seconds S] [--runs N] [--dkperf PATH] "
                            "[--perf PATH] [--prog PATH] [--dir DIR] [--rates [-e EVENT] "
                            "[-a]]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || seconds <= 0) {
        fprintf(stderr, "record-overhead: --runs from 1 to %d, --seconds above 0\n", MAX_RUNS);
        return 2;
    }
    char tmpl[1100];
    if (snprintf(tmpl, sizeof tmpl, "%s/record-overhead-XXXXXX", dir) >= (int)sizeof tmpl ||
        mkdtemp(tmpl) == NULL) {
        fprintf(stderr, "record-overhead: cannot make a directory in %s: %s\n", dir,
                strerror(errno));
        return 2;
    }
    snprintf(dir, sizeof dir, "%.1000s", tmpl);

    /* Calibrate: rounds of work for about `seconds` of CPU. */
    char *cal[] = {(char *)prog, "--rounds", "20", "--print-cpu", NULL};
    if (run(cal, path_in("cal.out"), NULL) < 0) {
        fprintf(stderr, "record-overhead: cannot run %s\n", prog);
        return 2;
    }
    double per_round = prog_cpu(path_in("cal.out")) / 20;
    long rounds = per_round > 0 ? (long)(seconds / per_round) : 1000;
    char rounds_s[32];
    snprintf(rounds_s, sizeof rounds_s, "%ld", rounds);

    if (rates) {
        double bare_cpu = per_round * (double)rounds;
        int rc = rates_mode(dkperf, perf, prog, rounds_s, bare_cpu, event, all);
        unlink(path_in("cal.out"));
        rmdir(dir);
        return rc;
    }

    char *dk_data = strdup(path_in("dk.data")), *pf_data = strdup(path_in("perf.data"));
    char *bare[] = {(char *)prog, "--rounds", rounds_s, "--print-cpu", NULL};
    char *dkrec_cmd[] = {(char *)dkperf, "record",   "-e",     "cpu-clock",   "-F",
                         "999",          "-g",       "-o",     dk_data,       "--",
                         (char *)prog,   "--rounds", rounds_s, "--print-cpu", NULL};
    char *pfrec_cmd[] = {(char *)perf, "record",   "-e",     "cpu-clock",   "-F",
                         "999",        "-g",       "-o",     pf_data,       "--",
                         (char *)prog, "--rounds", rounds_s, "--print-cpu", NULL};
    char *dkrep_cmd[] = {(char *)dkperf, "report", "-i", dk_data, "--stdio", NULL};
    char *pfrep_cmd[] = {(char *)perf, "report", "-i", pf_data, "--stdio", NULL};
    char *pfscript_cmd[] = {(char *)perf, "script", "-i", pf_data, "-F", "period", NULL};

    double b_wall[MAX_RUNS], b_cpu[MAX_RUNS], d_wall[MAX_RUNS], d_cpu[MAX_RUNS], p_wall[MAX_RUNS],
        p_cpu[MAX_RUNS], d_bps[MAX_RUNS], p_bps[MAX_RUNS], d_rep[MAX_RUNS], p_rep[MAX_RUNS],
        d_ratio[MAX_RUNS], d_n[MAX_RUNS], p_n[MAX_RUNS], b_all[MAX_RUNS], d_all[MAX_RUNS],
        p_all[MAX_RUNS];
    int nb = 0, nd = 0, np = 0;
    bool have_perf = true;
    char why_perf[256] = "";
    for (int r = 0; r < runs; r++) {
        double w = run(bare, path_in("bare.out"), NULL);
        if (w < 0) {
            fprintf(stderr, "record-overhead: the bare program failed\n");
            return 2;
        }
        b_wall[nb] = w;
        b_all[nb] = last_cpu;
        b_cpu[nb++] = prog_cpu(path_in("bare.out"));

        w = run(dkrec_cmd, path_in("dk.out"), path_in("dk.err"));
        dkrec *rec = NULL;
        char err[512];
        if (w < 0 || dkrec_read_file(dk_data, &rec, err, sizeof err) != 0) {
            char *e = slurp(path_in("dk.err"));
            fprintf(stderr, "record-overhead: dkperf record failed: %s\n", e ? e : err);
            return 2;
        }
        d_wall[nd] = w;
        d_all[nd] = last_cpu;
        d_cpu[nd] = prog_cpu(path_in("dk.out"));
        d_n[nd] = (double)rec->n_samples;
        d_bps[nd] = (double)file_size(dk_data) / (double)(rec->n_samples ? rec->n_samples : 1);
        d_ratio[nd] = (double)rec->n_samples / (d_cpu[nd] * 999.0);
        dkrec_free(rec);
        d_rep[nd++] = run(dkrep_cmd, NULL, NULL);

        if (have_perf) {
            w = run(pfrec_cmd, path_in("perf.out"), path_in("perf.err"));
            if (w < 0) {
                char *e = slurp(path_in("perf.err"));
                snprintf(why_perf, sizeof why_perf, "%s record failed: %.200s", perf,
                         e && *e ? e : "could not run it (Debian: apt-get install linux-perf)");
                have_perf = false;
                continue;
            }
            p_wall[np] = w;
            p_all[np] = last_cpu;
            p_cpu[np] = prog_cpu(path_in("perf.out"));
            run(pfscript_cmd, path_in("perf.script"), NULL);
            long n = count_lines(path_in("perf.script"));
            p_n[np] = (double)n;
            p_bps[np] = (double)file_size(pf_data) / (double)(n > 0 ? n : 1);
            p_rep[np++] = run(pfrep_cmd, NULL, NULL);
        }
    }
    for (char *nl = why_perf; *nl; nl++)
        if (*nl == '\n')
            *nl = ' ';

    double bw = med(b_wall, nb), bc = med(b_cpu, nb), ba = med(b_all, nb), da = med(d_all, nd),
           pa = med(p_all, np);
    double dw = med(d_wall, nd), dc = med(d_cpu, nd), dn = med(d_n, nd), dbps = med(d_bps, nd),
           drep = med(d_rep, nd), dratio = med(d_ratio, nd);
    double pw = med(p_wall, np), pc = med(p_cpu, np), pn = med(p_n, np), pbps = med(p_bps, np),
           prep = med(p_rep, np);
    printf("record-overhead: %s --rounds %ld (%.2f s of CPU bare), -e cpu-clock -F 999 -g, "
           "medians of %d runs\n",
           prog, rounds, bc, runs);
    printf("  %-30s %12s %22s %22s\n", "", "bare", "dkperf record", "perf record");
    printf("  %-30s %12.3f %14.3f (%5.3fx) ", "program CPU (s)", bc, dc, dc / bc);
    if (np)
        printf("%14.3f (%5.3fx)\n", pc, pc / bc);
    else
        printf("%22s\n", "n/a");
    printf("  %-30s %12.3f %14.3f (%5.3fx) ", "whole command, wall (s)", bw, dw, dw / bw);
    if (np)
        printf("%14.3f (%5.3fx)\n", pw, pw / bw);
    else
        printf("%22s\n", "n/a");
    printf("  %-30s %12.3f %14.3f (%5.3fx) ", "whole command, CPU (s)", ba, da, da / ba);
    if (np)
        printf("%14.3f (%5.3fx)\n", pa, pa / ba);
    else
        printf("%22s\n", "n/a");
    /* The recorder's own CPU: the whole command's less the program's. */
    printf("  %-30s %12s %14.3f (%5.1f%%) ", "recorder's own CPU (s)", "", da - dc,
           100 * (da - dc) / bc);
    if (np)
        printf("%14.3f (%5.1f%%)\n", pa - pc, 100 * (pa - pc) / bc);
    else
        printf("%22s\n", "n/a");
    printf("  %-30s %12s %22.0f ", "samples", "", dn);
    if (np)
        printf("%22.0f\n", pn);
    else
        printf("%22s\n", "n/a");
    printf("  %-30s %12s %22.4f\n", "samples / (program CPU x 999)", "", dratio);
    printf("  %-30s %12s %22.1f ", "bytes per sample", "", dbps);
    if (np)
        printf("%22.1f\n", pbps);
    else
        printf("%22s\n", "n/a");
    printf("  %-30s %12s %22.3f ", "report --stdio (s)", "", drep);
    if (np)
        printf("%22.3f\n", prep);
    else
        printf("%22s\n", "n/a");

    /* A loaded machine stretches every wall time: say so next to the figures. */
    if (bw > 1.2 * ba)
        printf(
            "  note: the machine is loaded (the bare program took %.2f s of wall time for %.2f s "
            "of CPU); the CPU ratios are the steadier figures\n",
            bw, ba);
    int missed = 0;
#define JUDGE(ok, fmt, ...)                                                       \
    do {                                                                          \
        printf("  target: " fmt ": %s\n", __VA_ARGS__, (ok) ? "met" : "NOT met"); \
        missed += !(ok);                                                          \
    } while (0)
    JUDGE(dw / bw <= 1.05, "whole dkperf record command at most 1.05x the bare program (%.3fx)",
          dw / bw);
    JUDGE(dratio >= 0.99 && dratio <= 1.01, "samples within 1%% of CPU seconds x 999 (%+.2f%%)",
          (dratio - 1) * 100);
    if (np) {
        /* The slowdowns are judged with a margin of 1% of the program: the
         * machine's noise between runs is about that. */
        JUDGE(dc / bc <= pc / bc + 0.01, "program slowdown at most perf's (%.3fx vs %.3fx)",
              dc / bc, pc / bc);
        JUDGE(dbps <= 0.5 * pbps, "bytes per sample at most half of perf.data's (%.2fx)",
              dbps / pbps);
        JUDGE(drep <= 0.5 * prep, "report time at most half of perf report's (%.2fx)", drep / prep);
    } else {
        printf("  not judged (perf cannot record here: %s): program slowdown against perf's, "
               "bytes per sample, report time\n",
               why_perf);
    }
    unlink(dk_data);
    unlink(pf_data);
    const char *tmp[] = {"cal.out",  "bare.out", "dk.out",     "dk.err",
                         "perf.out", "perf.err", "perf.script"};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        unlink(path_in(tmp[i]));
    unlink(path_in("perf.data.old"));
    rmdir(dir);
    free(dk_data);
    free(pf_data);
    return missed ? 1 : 0;
}
