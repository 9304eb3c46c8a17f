/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * main.c - dk_bench_main: the run over the registered benchmarks, their
 * baselines and reports, as the command line (cli.c) asks. It is the
 * program's own front end, so it writes to stdout and stderr.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libdkbench/cli.h"
#include "libdkbench/compare.h"
#include "common/error.h"
#include "libdkbench/harness.h"
#include "libdkbench/processes.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"
#include "common/signals.h"
#include "common/text.h"
#include "common/unavailable.h"

/* --p-cores: QoS user-interactive steers a thread to the P cores on macOS.
 * Resolved at run time so that every platform builds the same file. */
static void ask_p_cores(const char *prog, bool quiet)
{
    typedef int (*qos_fn)(unsigned, int);
    qos_fn set_qos = NULL;
    void *sym = dlsym(RTLD_DEFAULT, "pthread_set_qos_class_self_np");
    memcpy(&set_qos, &sym, sizeof set_qos);
    if (set_qos == NULL) {
        if (!quiet)
            fprintf(stderr,
                    "%s: --p-cores: this system has no QoS classes "
                    "(pthread_set_qos_class_self_np not found); the OS places the "
                    "thread as usual\n",
                    prog);
        return;
    }
    int rc = set_qos(0x21u /* QOS_CLASS_USER_INTERACTIVE */, 0);
    if (rc != 0)
        fprintf(stderr,
                "%s: --p-cores: pthread_set_qos_class_self_np failed (%s); the OS "
                "places the thread as usual\n",
                prog, strerror(rc));
}

/* Names in code point order: a baseline holds a name's invalid bytes as
 * U+FFFD (BENCH-JSON.md), so a run's name is compared with what it was
 * saved as. */
static int cmp_name(const char *a, const char *b)
{
    unsigned long ca, cb;
    do {
        ca = dk__utf8_next(&a);
        cb = dk__utf8_next(&b);
    } while (ca == cb && ca != 0);
    return ca < cb ? -1 : ca > cb;
}

static int cmp_result(const void *x, const void *y)
{
    const dkb_result *a = *(const dkb_result *const *)x, *b = *(const dkb_result *const *)y;
    int c = cmp_name(a->name, b->name);
    return c != 0 ? c : (a > b) - (a < b);
}

/* rs sorted by name, then by place (malloc'ed; NULL when out of memory),
 * for find_result: a baseline may hold any number of results, and each
 * one run is looked up in it. */
static const dkb_result **by_name(const dkb_result *rs, size_t n)
{
    const dkb_result **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (sorted == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        sorted[i] = &rs[i];
    qsort(sorted, n, sizeof *sorted, cmp_result);
    return sorted;
}

/* The first result named name, of the n of sorted (from by_name). */
static const dkb_result *find_result(const dkb_result *const *sorted, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_name(sorted[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && cmp_name(sorted[lo]->name, name) == 0 ? sorted[lo] : NULL;
}

/* The benchmarks of one side that the other lacks, named on one line each
 * way: a comparison that silently covers fewer benchmarks than it seems to
 * would mislead. */
static void say_unmatched(const char *prog, const char *name, const dkb_result *rs, size_t n,
                          const dkb_result *base, size_t n_base,
                          const dkb_result *const *base_sorted)
{
    /* The names are escaped (common/text.h): a baseline file may come from
     * anywhere, and its names may hold terminal escapes. */
    const dkb_result **rs_sorted = by_name(rs, n);
    if (rs_sorted == NULL) {
        dkb_put("%s: out of memory\n", prog);
        return;
    }
    const char *sep = "";
    for (size_t i = 0; i < n; i++)
        if (find_result(base_sorted, n_base, rs[i].name) == NULL) {
            if (*sep == '\0')
                dkb_put("%s: not in baseline '%s': ", prog, name);
            dkb_put("%s%s", sep, rs[i].name);
            sep = ", ";
        }
    if (*sep != '\0')
        fputc('\n', stderr);
    sep = "";
    for (size_t i = 0; i < n_base; i++)
        if (find_result(rs_sorted, n, base[i].name) == NULL) {
            if (*sep == '\0')
                dkb_put("%s: in baseline '%s' but not run: ", prog, name);
            dkb_put("%s%s", sep, base[i].name);
            sep = ", ";
        }
    if (*sep != '\0')
        fputc('\n', stderr);
    free(rs_sorted);
}

/* Per-iteration values of a measure (malloc'ed), or NULL. */
static double *per_iteration(const dkb_result *r, const dkb_measure *m)
{
    if (r->n_samples == 0 || m->y == NULL)
        return NULL;
    double *v = malloc(r->n_samples * sizeof *v);
    if (v != NULL)
        for (size_t i = 0; i < r->n_samples; i++)
            v[i] = m->y[i] / r->iterations[i];
    return v;
}

/* Say once which events cannot be counted here, and why: one line per
 * reason, naming its events; the blocks then only name them. */
static void say_unavailable(const char *prog, const dkb_plan *plan, dkb_run_info *run)
{
    const char *why[DK_MAX_EVENTS];
    size_t k = 0;
    for (size_t i = 0; i < plan->n; i++) {
        why[i] = plan->available[i] ? NULL : plan->why[i];
        k += !plan->available[i];
    }
    if (k == 0)
        return;
    char lead[512];
    dk__untrusted(lead, sizeof lead - 24, prog);
    strcat(lead, ": not measured here: ");
    dk__put_unavailable(stderr, plan->n, plan->name, why, lead, "\n", dk__put_untrusted);
    /* For the reports when nothing but the clock is measured: the same
     * lines, joined by "; " (cut at the field's end: said whole above). */
    if (k < plan->n || run->why_no_counters[0] != '\0')
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return;
    dk__put_unavailable(f, plan->n, plan->name, why, "", "; ", dk__put_untrusted);
    if (fclose(f) == 0 && len >= 2) {
        text[len - 2] = '\0';
        snprintf(run->why_no_counters, sizeof run->why_no_counters, "%s", text);
    }
    free(text);
}

/* Print each --compare ratio against the group's first benchmark. */
static void print_ratios(const dkb_options *o, const dkb_result *rs, size_t k)
{
    for (size_t j = 1; j < k; j++)
        for (size_t i = 0; i < rs[j].n_measures; i++) {
            const dkb_measure *a = &rs[0].m[i], *b = &rs[j].m[i];
            if (!a->available || !b->available)
                continue;
            double *av = per_iteration(&rs[0], a), *bv = per_iteration(&rs[j], b);
            dkb_interval ratio;
            if (av && bv &&
                dkb_ratio(av, bv,
                          rs[0].n_samples < rs[j].n_samples ? rs[0].n_samples : rs[j].n_samples,
                          o->cfg.resamples, o->cfg.seed, 0.95, &ratio)) {
                /* Names escaped, as in the blocks above them. */
                dk__put_untrusted(stdout, rs[j].name);
                fputs(" / ", stdout);
                dk__put_untrusted(stdout, rs[0].name);
                fputc(' ', stdout);
                dk__put_untrusted(stdout, a->name);
                printf(": %.4f [%.4f, %.4f]\n", ratio.point, ratio.lo, ratio.hi);
            }
            free(av);
            free(bv);
        }
}

/* 0 when what was printed on stdout reached it, else 1 with the reason. */
static int stdout_written(const char *prog)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    dkb_say("%s: writing to stdout failed: %s", prog, strerror(errno));
    return 1;
}

/*
 * Signals, as dkperf.h's "Signals and exit" asks of a program that holds a
 * sampler: while the counters are held, a signal that would end the
 * program is only noted; the benchmark under way ends, the counters are
 * given back, and the program then ends by that signal. SIGPIPE and SIGXFSZ
 * are ignored meanwhile, so that a write fails and is reported instead.
 * Only default dispositions are replaced: a program's own handler, or a
 * signal it was started ignoring, stays as it is.
 */
static volatile sig_atomic_t stop_signal;

static void note_signal(int sig) { stop_signal = sig; }

typedef struct held_signals {
    int sig[DK_ENDING_SIGNALS_MAX + 2];
    struct sigaction saved[DK_ENDING_SIGNALS_MAX + 2];
    size_t n;
} held_signals;

static void hold_signals(held_signals *h)
{
    size_t n = dk__ending_signals(h->sig, DK_ENDING_SIGNALS_MAX);
    h->sig[n] = SIGPIPE;
    h->sig[n + 1] = SIGXFSZ;
    h->n = n + 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < h->n; k++) {
        sa.sa_handler = k < n ? note_signal : SIG_IGN;
        if (sigaction(h->sig[k], NULL, &h->saved[k]) == 0 && h->saved[k].sa_handler == SIG_DFL &&
            (h->saved[k].sa_flags & SA_SIGINFO) == 0)
            sigaction(h->sig[k], &sa, NULL);
    }
}

/* Gives the dispositions back and, when a signal was noted, ends the
 * program by it. */
static void release_signals(held_signals *h)
{
    for (size_t k = 0; k < h->n; k++)
        sigaction(h->sig[k], &h->saved[k], NULL);
    h->n = 0;
    int sig = stop_signal;
    if (sig != 0) {
        fflush(NULL);
        raise(sig);
    }
}

/* Measure the entries chosen[first .. first + count) in this process (a
 * --compare group interleaved) into rs; 0 or the harness's code. */
static int measure_here(const dkb_config *cfg, dkb_source *src, const dkb_plan *plan,
                        const size_t *chosen, size_t first, size_t count, dkb_result *rs)
{
    if (count == 1)
        return dkb_measure_one(cfg, src, plan, dkb_registry_at(chosen[first]), rs);
    dkb_entry *group = malloc(count * sizeof *group);
    if (group == NULL)
        return dkb_fail(DK_ENOMEM, "out of memory");
    for (size_t j = 0; j < count; j++)
        group[j] = *dkb_registry_at(chosen[first + j]);
    int rc = dkb_measure_interleaved(cfg, src, plan, group, count, rs);
    free(group);
    return rc;
}

/* A worker process (processes.h): measure its share of the benchmarks it
 * was given and hand the results back on its descriptor. Nothing is
 * printed but a failure. */
static int run_worker(const char *prog, dkb_options *o, const dkb_worker *w, dkb_source *src,
                      const dkb_plan *plan, const dkb_run_info *run, const size_t *chosen, size_t n,
                      dkb_result *results)
{
    FILE *f = fdopen(w->fd, "w");
    if (f == NULL) {
        dkb_say("%s: worker process: cannot write to descriptor %d: %s", prog, w->fd,
                strerror(errno));
        return 1;
    }
    fcntl(w->fd, F_SETFD, FD_CLOEXEC);
    /* First of all: this program does act as a worker when run again. */
    fputs(DKB_WORKER_HELLO, f);
    fflush(f);
    int rc = 0;
    size_t first = w->first;
    if (w->name[0] != '\0') {
        /* Named: found among this program's own (another build). */
        first = n;
        for (size_t j = 0; j < n && first == n; j++)
            if (strcmp(dkb_registry_at(chosen[j])->name, w->name) == 0)
                first = j;
        if (first == n) {
            fputs(DKB_WORKER_NO_SUCH_NAME, f);
            fclose(f);
            return 1;
        }
    }
    if (rc == 0 && (first > n || w->count > n - first)) {
        rc = dkb_fail(DK_EINVAL, "the program chose %zu benchmarks, not the %zu asked of it", n,
                      w->first + w->count);
    } else {
        for (size_t j = 0; j < w->count && rc == 0; j++)
            if (dkb_registry_at(chosen[first + j])->body != NULL)
                rc = dkb_fail(DK_EINVAL, "an external body is not measured in a worker");
    }
    dkb_worker_config(&o->cfg, w);
    if (rc == 0)
        rc = measure_here(&o->cfg, src, plan, chosen, first, w->count, results);
    const dkb_result *rp[DKB_MAX_PROCESSES];
    for (size_t j = 0; rc == 0 && j < w->count && j < DKB_MAX_PROCESSES; j++)
        rp[j] = &results[j];
    if (rc == 0)
        rc = dkb_report_json(f, run, rp, w->count);
    if (fclose(f) != 0 && rc == 0)
        rc = dkb_fail(DK_EOS, "worker process: writing the results: %s", strerror(errno));
    if (rc != 0) {
        dkb_say("%s: %s", prog, dkb_last_error());
        return 1;
    }
    for (size_t j = 0; j < w->count; j++)
        dkb_result_free(&results[j]);
    return 0;
}

int dk_bench_main(int argc, char **argv)
{
    const char *prog = argc > 0 && argv[0] ? argv[0] : "dkbench";
    const char *slash = strrchr(prog, '/');
    prog = slash ? slash + 1 : prog;
    dkb_options o;
    int rc = dkb_options_parse(&o, argc, argv);
    if (rc < 0) /* --help */
        return stdout_written(prog);
    if (rc != 0)
        return rc;
    if (dkb_registry_load_error()[0] != '\0') {
        dkb_say("%s: %s", prog, dkb_registry_load_error());
        return 2;
    }
    dkb_worker worker;
    int is_worker = dkb_worker_from_env(&worker);
    if (is_worker < 0) {
        dkb_say("%s: %s", prog, dkb_last_error());
        return 2;
    }
    if (is_worker) {
        /* A worker measures and hands back; the parent reports, compares
         * and saves. */
        o.quiet = true;
        o.list = false;
        o.baseline = o.save_baseline = NULL;
        o.json = o.csv = o.markdown = o.gbench = o.html = NULL;
        o.gb.out = o.gb.format = NULL;
    } else {
        dkb_gbench_notes(&o, prog);
    }
    regex_t re;
    bool have_re = o.filter != NULL && o.filter[0] != '\0';
    if (have_re) {
        int e = regcomp(&re, o.filter, REG_EXTENDED | REG_NOSUB);
        if (e != 0) {
            char msg[128];
            regerror(e, &re, msg, sizeof msg);
            dkb_say("%s: %s '%s' is not a POSIX regular expression: %s", prog, o.filter_from,
                    o.filter, msg);
            /* google benchmark says so and exits with 0. */
            return strcmp(o.filter_from, "--benchmark_filter") == 0 ? 0 : 2;
        }
    }
    size_t total = dkb_registry_count();
    size_t *chosen = calloc(total ? total : 1, sizeof *chosen);
    char *evbuf = strdup(o.events);
    char **args = calloc((size_t)(argc > 0 ? argc : 0) + 1, sizeof *args);
    char exe[4096] = "", other_exe[4096] = "";
    const char *one_process = "";
    dkb_result *others = NULL;
    char **other_args = NULL;
    const char **names_of = NULL;
    dkb_result *results = calloc(total ? total : 1, sizeof *results);
    const dkb_result **rp = calloc(total ? total : 1, sizeof *rp);
    const dkb_result **bp = calloc(total ? total : 1, sizeof *bp);
    dkb_result *base = NULL;
    const dkb_result **base_sorted = NULL;
    size_t n_base = 0, n = 0, done = 0;
    dkb_source src = {0};
    held_signals held = {.n = 0};
    /* google benchmark's layouts: as its flags ask, in a file or on stdout. */
    dkb_gbench_name gnames[2][DK_MAX_EVENTS];
    dkb_gbench_view gfile, gshow;
    dkb_gbench_view_of(&o, argc > 0 && argv[0] ? argv[0] : prog, false, gnames[0], &gfile);
    dkb_gbench_view_of(&o, argc > 0 && argv[0] ? argv[0] : prog, true, gnames[1], &gshow);
    const char *gout = o.gb.out_format == NULL                   ? "google benchmark JSON"
                       : strcmp(o.gb.out_format, "console") == 0 ? "google benchmark console"
                       : strcmp(o.gb.out_format, "csv") == 0     ? "google benchmark CSV"
                                                                 : "google benchmark JSON";
    dkb_report_file rf[] = {{"--json", o.json, "JSON", NULL, false, NULL},
                            {"--csv", o.csv, "CSV", NULL, false, NULL},
                            {"--markdown", o.markdown, "Markdown", NULL, false, NULL},
                            {"--gbench-json", o.gbench, "google benchmark JSON", NULL, false,
                             &gfile},
                            {"--html", o.html, "HTML", NULL, false, NULL},
                            {"--benchmark_out", o.gb.out, gout, NULL, false, &gfile}};
    const size_t n_rf = sizeof rf / sizeof rf[0];
    bool made_results_dir = false;
    int status = 0;
    if (chosen == NULL || evbuf == NULL || results == NULL || rp == NULL || bp == NULL ||
        args == NULL) {
        dkb_say("%s: out of memory", prog);
        status = 1;
        goto out;
    }
    for (size_t i = 0; i < total; i++)
        if ((!have_re || regexec(&re, dkb_registry_at(i)->name, 0, NULL, 0) == 0) !=
            o.filter_negated)
            chosen[n++] = i;
    if (o.list) {
        /* One name a line, escaped as everywhere else: a name may be made
         * at run time from data, and a newline in it would make two. */
        for (size_t i = 0; i < n; i++) {
            dk__put_untrusted(stdout, dkb_registry_at(chosen[i])->name);
            fputc('\n', stdout);
        }
        status = stdout_written(prog);
        goto out;
    }
    const char *names[DK_MAX_EVENTS];
    int n_events =
        o.events[0] == '\0' ? 0 : dkb_split_events(prog, o.events_from, o.events, evbuf, names);
    if (n_events < 0) {
        status = 2;
        goto out;
    }
    for (int a = 0; a < n_events; a++)
        for (int b = a + 1; b < n_events; b++)
            if (strcmp(names[a], names[b]) == 0) {
                dkb_say("%s: %s '%s': %s is given twice", prog, o.events_from, o.events, names[a]);
                status = 2;
                goto out;
            }
    if (n == 0) {
        dkb_say("%s: no benchmark matches '%s' (--list shows them)", prog, have_re ? o.filter : "");
        status = strcmp(o.filter_from, "--benchmark_filter") == 0 ? 0 : 1; /* as google benchmark */
        goto out;
    }
    if (o.ab != NULL && (rc = dkb_ab_check(prog, &o, other_exe, sizeof other_exe)) != 0) {
        status = rc;
        goto out;
    }
    if (o.baseline != NULL) {
        rc = dkb_baseline_load(o.results_dir, o.baseline, &base, &n_base);
        if (rc != 0) {
            dkb_say("%s: cannot compare with baseline '%s': %s", prog, o.baseline,
                    dkb_last_error());
            status = 1;
            goto out;
        }
        if ((base_sorted = by_name(base, n_base)) == NULL) {
            fprintf(stderr, "%s: out of memory\n", prog);
            status = 1;
            goto out;
        }
    }
    /* Where the results go, checked before anything is run. */
    for (size_t k = 0; k < n_rf; k++)
        if (rf[k].path != NULL && dkb_open_report(prog, &rf[k]) != 0) {
            status = 1;
            goto out;
        }
    if (o.save_baseline != NULL &&
        (rc = dkb_baseline_check(o.results_dir, o.save_baseline, &made_results_dir)) != 0) {
        if (rc == DK_EINVAL) {
            dkb_say("%s: %s (see --help)", prog, dkb_last_error());
            status = 2;
        } else {
            dkb_say("%s: --save-baseline %s: %s", prog, o.save_baseline, dkb_last_error());
            status = 1;
        }
        goto out;
    }
    if (o.p_cores)
        ask_p_cores(prog, o.quiet);
    hold_signals(&held); /* from before the counters are taken */
    if (dkb_source_open_dkperf(&src) != 0) {
        if (src.self == NULL) {
            dkb_say("%s: %s", prog, dkb_last_error());
            status = 1;
            goto out;
        }
        dkb_say("%s: %s", prog, src.why_no_counters);
    }
    /* What the library did to the machine's state on the way (it prints nothing). */
    for (const char *note = src.notes; *note != '\0';) {
        size_t len = strcspn(note, "\n");
        dkb_say("%s: note: %.*s", prog, (int)len, note);
        note += len + (note[len] == '\n');
    }
    dkb_plan plan;
    if (dkb_plan_events(&src, names, (size_t)n_events, &plan) != 0) {
        dkb_say("%s: %s", prog, dkb_last_error());
        status = 2;
        goto out;
    }
    dkb_run_info run;
    dkb_run_info_fill(&run, &o.cfg, o.noise, o.baseline, &src);
    if (is_worker) {
        status = run_worker(prog, &o, &worker, &src, &plan, &run, chosen, n, results);
        goto out;
    }
    if (src.why_no_counters[0] == '\0')
        say_unavailable(prog, &plan, &run);
    /* Each benchmark is measured in fresh processes of this program: where
     * things land in memory is fixed for a process's life and differs
     * between processes, and moves a time by more than one process's
     * interval shows (doc/BENCH-STATISTICS.md §13). */
    bool in_processes = o.processes >= 2;
    if (!in_processes) {
        one_process = "--processes 1";
    } else if (!dkb_self_exe(exe, sizeof exe)) {
        in_processes = false;
        one_process = "this program cannot be re-executed";
        dkb_say("%s: measuring within this one process: %s", prog, dkb_last_error());
    } else {
        for (int a = 0; a < argc; a++)
            args[a] = argv[a];
        /* The workers take the counters; this process holds none. */
        dkb_source_close_dkperf(&src);
    }
    dkb_ab ab = {exe, other_exe, args, NULL, NULL, o.processes_given ? o.processes : 0, o.noise};
    if (o.ab != NULL) {
        others = calloc(total ? total : 1, sizeof *others);
        other_args = calloc((size_t)argc + 1, sizeof *other_args);
        names_of = calloc(n, sizeof *names_of);
        if (others == NULL || other_args == NULL || names_of == NULL) {
            dkb_say("%s: out of memory", prog);
            status = 1;
            goto out;
        }
        if (!in_processes) {
            dkb_say("%s: --ab: %s", prog, dkb_last_error());
            status = 1;
            goto out;
        }
        for (int a = 0; a < argc; a++)
            other_args[a] = argv[a];
        other_args[0] = other_exe;
        for (size_t j = 0; j < n; j++)
            names_of[j] = dkb_registry_at(chosen[j])->name;
        ab.other_argv = other_args;
        ab.names = names_of;
        if (!o.quiet) {
            printf("Compared with ");
            dk__put_untrusted(stdout, other_exe);
            if (ab.pairs > 0)
                printf(": %zu pairs of processes a benchmark", ab.pairs);
            else
                printf(": pairs of processes until the change resolves +-%g%% (%d pairs at "
                       "least, %g s a benchmark at most)",
                       100 * o.noise / 2, DKB_AB_MIN_PAIRS, DKB_AB_BUDGET);
            printf(", run side by side (which first alternates); a change is of this program "
                   "against it.\n\n");
        }
    }
    bool color = dkb_gbench_color(&o, isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL);
    /* --benchmark_enable_random_interleaving: every process of every
     * benchmark in a random order, measured before the loop reports them. */
    bool shuffled = false;
    int said_runs = 0;
    if (o.gb.random_interleaving) {
        bool ok = in_processes && o.ab == NULL && !o.compare;
        for (size_t i = 0; ok && i < n; i++)
            ok = dkb_registry_at(chosen[i])->body == NULL;
        if (!ok) {
            dkb_say("%s: --benchmark_enable_random_interleaving: not honoured with --processes 1, "
                    "--ab, --compare or an external body: the benchmarks run one after the other",
                    prog);
        } else if (dkb_measure_shuffled(&o.cfg, exe, args, n, o.processes, &stop_signal, results) !=
                   0) {
            if (stop_signal == 0)
                dkb_say("%s: %s", prog, dkb_last_error());
            status = 1;
            goto out;
        } else {
            shuffled = true;
        }
    }

    for (size_t i = 0; i < n && stop_signal == 0;) {
        const dkb_entry *e = dkb_registry_at(chosen[i]);
        size_t k = 1;
        /* External bodies run one after the other: a run is one sample. */
        if (o.compare && strchr(e->name, '/') != NULL && e->body == NULL) {
            size_t glen = (size_t)(strchr(e->name, '/') - e->name);
            while (i + k < n && dkb_registry_at(chosen[i + k])->body == NULL &&
                   strncmp(dkb_registry_at(chosen[i + k])->name, e->name, glen + 1) == 0)
                k++;
        }
        if (shuffled) {
            rc = 0; /* measured above, into results[i] */
        } else if (e->body != NULL) {
            if (o.gb.repetitions > 1 && !said_runs++)
                dkb_say("%s: %s: --benchmark_repetitions: an external body is reported as "
                        "one entry of its runs, each run a process of its own",
                        prog, e->name);
            rc = dkb_measure_body(&o.cfg, e, &results[done]);
        } else if (o.ab != NULL) {
            rc = dkb_measure_ab(&o.cfg, &ab, i, k, &stop_signal, &results[done], &others[done]);
            if (rc == DK_ENOTSUP) { /* no pair can be run: said once */
                dkb_say("%s: --ab: %s", prog, dkb_last_error());
                status = 1;
                break;
            }
        } else if (in_processes) {
            rc = dkb_measure_processes(&o.cfg, exe, args, i, k, o.processes, o.processes_given,
                                       &stop_signal, &results[done]);
            if (rc == DK_ENOTSUP) {
                /* Not a program that can be run again as a worker: this
                 * benchmark and the rest are measured here. */
                dkb_say("%s: measuring within this one process: %s", prog, dkb_last_error());
                in_processes = false;
                one_process = "this program does not act as a worker when run again";
                if (dkb_source_open_dkperf(&src) != 0 && src.self == NULL) {
                    dkb_say("%s: %s", prog, dkb_last_error());
                    status = 1;
                    break;
                }
                continue;
            }
        } else {
            rc = measure_here(&o.cfg, &src, &plan, chosen, i, k, &results[done]);
            for (size_t j = 0; rc == 0 && j < k; j++) {
                results[done + j].n_processes = 1;
                snprintf(results[done + j].one_process, sizeof results[done + j].one_process, "%s",
                         one_process);
            }
        }
        if (rc != 0 && stop_signal != 0)
            break; /* no report of a run cut short */
        if (rc != 0) {
            /* The harness's messages start with the benchmark's name (in a
             * group, the member that failed). */
            const char *why = dkb_last_error();
            bool named = false;
            for (size_t j = 0; j < k && !named; j++) {
                const char *nm = dkb_registry_at(chosen[i + j])->name;
                size_t len = strlen(nm);
                named = strncmp(why, nm, len) == 0 && why[len] == ':';
            }
            if (k > 1)
                dkb_say("%s: %s%s%s (group %.*s, run interleaved, not measured)", prog,
                        named ? "" : e->name, named ? "" : ": ", why,
                        (int)(strchr(e->name, '/') - e->name), e->name);
            else
                dkb_say("%s: %s%s%s", prog, named ? "" : e->name, named ? "" : ": ", why);
            status = 1;
            i += k;
            continue;
        }
        for (size_t j = 0; j < k; j++) {
            dkb_result *r = &results[done + j];
            const dkb_result *old = base ? find_result(base_sorted, n_base, r->name) : NULL;
            if (others != NULL && e->body != NULL) {
                /* Run here, one run a sample: there are no pairs to test. */
                dkb_say("%s: %s: not compared with %s: an external body is measured in this "
                        "process only, not in pairs of processes",
                        prog, r->name, other_exe);
            } else if (others != NULL) {
                old = &others[done + j];
                for (size_t q = 0; q < r->n_measures; q++)
                    if (r->m[q].no_change[0] != '\0')
                        dkb_say("%s: %s: %s: not compared with %s: %s", prog, r->name, r->m[q].name,
                                other_exe, r->m[q].no_change);
            }
            if (old != NULL && others == NULL) { /* --ab compared it already */
                dkb_compare_baseline(r, old, o.noise, o.cfg.resamples, o.cfg.seed);
                for (size_t q = 0; q < r->n_measures; q++)
                    if (r->m[q].no_change[0] != '\0')
                        dkb_say("%s: %s: %s: not compared with baseline '%s': %s", prog, r->name,
                                r->m[q].name, o.baseline, r->m[q].no_change);
            }
            rp[done + j] = r;
            bp[done + j] = old;
            if (!o.quiet && dkb_report_terminal(stdout, &run, r, color, o.verbose) != 0) {
                dkb_say("%s: writing to stdout failed: %s", prog, dkb_last_error());
                status = 1;
            }
        }
        if (k > 1)
            print_ratios(&o, &results[done], k);
        fflush(stdout);
        done += k;
        i += k;
    }
    if (stop_signal != 0) /* no report of a run cut short */
        goto out;
    if (base != NULL)
        say_unmatched(prog, o.baseline, results, done, base, n_base, base_sorted);
    for (size_t k = 0; k < n_rf; k++)
        if (rf[k].f != NULL)
            status |= dkb_write_report(prog, &rf[k], &run, rp, bp, done);
    if (o.gb.format != NULL && done > 0) {
        /* --benchmark_format: stdout holds google benchmark's layout, its
         * description of the machine going to stderr as it writes it. */
        rc = strcmp(o.gb.format, "json") == 0
                 ? dkb_report_gbench_view(stdout, &run, rp, done, &gshow)
             : strcmp(o.gb.format, "csv") == 0
                 ? dkb_report_gbench_csv(stdout, stderr, &run, rp, done, &gshow)
                 : dkb_report_gbench_console(stdout, stderr, &run, rp, done, &gshow);
        if (rc != 0) {
            dkb_say("%s: writing to stdout failed: %s", prog, dkb_last_error());
            status = 1;
        }
    }
    if (o.save_build != NULL && status == 0 && done > 0 &&
        (exe[0] != '\0' || dkb_self_exe(exe, sizeof exe)) &&
        dkb_build_save(o.results_dir, o.save_build, exe) != 0) {
        dkb_say("%s: saving build '%s' in %s failed: %s", prog, o.save_build, o.results_dir,
                dkb_last_error());
        status = 1;
    }
    if (o.save_baseline != NULL && done > 0) {
        if (dkb_baseline_save(o.results_dir, o.save_baseline, &run, rp, done) != 0) {
            dkb_say("%s: saving baseline '%s' in %s failed: %s", prog, o.save_baseline,
                    o.results_dir, dkb_last_error());
            status = 1;
        }
    }
out:
    /* Left open: the run was cut short or failed before its reports. */
    for (size_t k = 0; k < n_rf; k++)
        dkb_close_report(&rf[k], false);
    if (made_results_dir)
        rmdir(o.results_dir); /* only if nothing was saved in it */
    if (have_re)
        regfree(&re);
    for (size_t i = 0; i < done; i++) {
        dkb_result_free(&results[i]);
        if (others != NULL)
            dkb_result_free(&others[i]);
    }
    free(others);
    free(other_args);
    free(names_of);
    for (size_t i = 0; i < n_base; i++)
        dkb_result_free(&base[i]);
    free(base);
    free(base_sorted);
    dkb_source_close_dkperf(&src);
    release_signals(&held);
    free(results);
    free(rp);
    free(bp);
    free(chosen);
    free(evbuf);
    free(args);
    return status;
}
