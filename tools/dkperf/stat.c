/*
 * stat.c - dkperf stat: run a command and report its counts, in the manner
 * of perf stat.
 *
 * The child is forked and held on a pipe until its counters are open, then
 * released to exec the command. On Linux the counters follow the child and
 * everything it starts (inherit) and begin at the exec; on a Mac they are
 * the child's instructions and cycles (proc_pid_rusage), or with -a every
 * CPU's counters. Signals that would stop dkperf are held from before the
 * counters are taken until they are given back: passed to the child while
 * it runs, acted on once nothing is held otherwise. The counts are still
 * reported and the counters always released.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "spawn.h"
#include "stat_options.h"
#include "stats.h"

typedef struct run {
    uint64_t values[DK_MAX_EVENTS];
    dk_reading info[DK_MAX_EVENTS];
    uint64_t elapsed_ns, user_ns, system_ns;
} run;

/* The roles derived metrics need. */
enum { ROLE_NONE, ROLE_INSTRUCTIONS, ROLE_CYCLES, ROLE_BRANCHES, ROLE_MISSES, ROLE_CLOCK };

typedef struct report {
    size_t n;
    const char *names[DK_MAX_EVENTS];  /* as asked */
    char native[DK_MAX_EVENTS][128]; /* copies: the group is closed after each run */
    const char *unit[DK_MAX_EVENTS];  /* owned by the sampler's database */
    bool supported[DK_MAX_EVENTS];
    char why[DK_MAX_EVENTS][256];
    int role[DK_MAX_EVENTS];
    run *runs;
    size_t nruns;
    int exit_status;
    bool signaled; /* the last run's command was killed by a signal */
    char scope[128];
} report;

/*
 * Signals dkperf passes on to the command while it runs, and the
 * dispositions dkperf was started with: the command gets those back before
 * exec, so it sees what it would have seen without dkperf.
 */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])
static struct sigaction saved[NFORWARDED], saved_pipe;

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t got_signal;     /* the last signal caught, or 0 */
static volatile sig_atomic_t pending_signal; /* the last one caught while no command ran */

static void forward_signal(int sig)
{
    got_signal = sig;
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
    else
        pending_signal = sig;
}

static void catch_signals(void)
{
    struct sigaction sa, ign;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < NFORWARDED; k++) {
        /* A signal dkperf was told to ignore (nohup) stays ignored, for both. */
        sigaction(forwarded[k], NULL, &saved[k]);
        if (saved[k].sa_handler != SIG_IGN)
            sigaction(forwarded[k], &sa, NULL);
    }
    /* A command that dies before it is let go must not take dkperf with it. */
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &saved_pipe);
}

static void restore_signals(void)
{
    for (size_t k = 0; k < NFORWARDED; k++)
        sigaction(forwarded[k], &saved[k], NULL);
    sigaction(SIGPIPE, &saved_pipe, NULL);
}

static uint64_t tv_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

/* Which metric role an event plays, by what the portable names resolve to. */
static int role_of(dk_sampler *s, const char *asked, const char *native)
{
    static const struct {
        const char *portable;
        int role;
    } roles[] = {{"instructions", ROLE_INSTRUCTIONS},
                 {"cycles", ROLE_CYCLES},
                 {"branches", ROLE_BRANCHES},
                 {"branch-misses", ROLE_MISSES}};
    if (strcmp(native, "task-clock") == 0)
        return ROLE_CLOCK;
    for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
        const dk_database_event *ev = NULL;
        if (strcmp(asked, roles[r].portable) == 0 ||
            (dk_sampler_resolve(s, roles[r].portable, &ev) == 0 && strcmp(ev->name, native) == 0))
            return roles[r].role;
    }
    return ROLE_NONE;
}

/* Gives up on a command that was never let go. */
static void abandon(spawn_child *c, dk_group *g)
{
    child_pid = 0; /* nothing is passed on to a pid that may be reused */
    spawn_abandon(c);
    dk_group_close(g);
}

/*
 * One run: fork CMD held on a pipe, open the counters on it (or every CPU),
 * let it exec, wait, read, reap. Returns 0, or the exit status dkperf must
 * end with on a setup failure; *exec_failed is set when CMD could not run.
 */
static int run_once(dk_sampler *s, const stat_options *o, char **names, size_t n, report *rep,
                    run *out, int *exec_failed)
{
    *exec_failed = 0;
    /* No signal may fall between fork and child_pid: they are held until it
     * is set; the command's signals are its own again (a Ctrl-C before exec
     * kills it). */
    sigset_t hold;
    sigemptyset(&hold);
    for (size_t k = 0; k < NFORWARDED; k++)
        sigaddset(&hold, forwarded[k]);
    spawn_options so = SPAWN_OPTIONS_INIT;
    so.hold = &hold;
    so.pid_out = &child_pid;
    so.in_child = restore_signals;
    spawn_child c;
    int rc = spawn_prepare(&c, o->cmd, &so);
    if (rc != 0) {
        cli_error("stat", "%s: %s", c.failed, strerror(-rc));
        return EXIT_SETUP;
    }
    pid_t pid = c.pid;

    dk_group *g = NULL;
    unsigned flags = DK_GROUP_PARTIAL | (o->all_cpus ? 0 : DK_GROUP_ENABLE_ON_EXEC);
    rc = dk_group_open(s, o->all_cpus ? DK_SCOPE_SYSTEM : DK_SCOPE_PROCESS,
                       o->all_cpus ? 0 : (int)pid, (const char *const *)names, n, flags, &g);
    if (rc == 0)
        rc = dk_group_start(g); /* a no-op where the kernel starts it at exec */
    if (rc != 0) {
        char why[2048];
        snprintf(why, sizeof why, "%s", dk_last_error()); /* before closing the group */
        abandon(&c, g);
        /* Interrupted before the command ran: end as it would have, quietly. */
        if (got_signal != 0)
            return 128 + got_signal;
        cli_error("stat", "%s", why);
        return EXIT_SETUP;
    }
    if (rep->nruns == 0) {
        snprintf(rep->scope, sizeof rep->scope, "%s", dk_group_scope(g));
        for (size_t i = 0; i < n; i++) {
            snprintf(rep->native[i], sizeof rep->native[i], "%s", dk_group_event_name(g, i));
            rep->unit[i] = dk_group_event_unit(g, i);
            rep->supported[i] = dk_group_supported(g, i);
            snprintf(rep->why[i], sizeof rep->why[i], "%s", dk_group_why(g, i));
            rep->role[i] = role_of(s, names[i], rep->native[i]);
        }
    }

    if (got_signal != 0) { /* Ctrl-C during the setup, or between runs */
        abandon(&c, g);
        return 128 + got_signal;
    }
    uint64_t t0 = monotonic_ns();
    rc = spawn_release(&c);
    if (rc != 0) {
        abandon(&c, g);
        if (got_signal != 0) /* EPIPE: the command was killed before exec */
            return 128 + got_signal;
        cli_error("stat", "cannot start the command: %s", strerror(-rc));
        return EXIT_SETUP;
    }
    int e = 0;
    spawn_exec_result(&c, &e);
    if (e != 0) {
        cli_error("stat", "cannot run '%s': %s", o->cmd[0], strerror(e));
        *exec_failed = spawn_exec_status(e);
    }

    /* Wait without reaping: a Mac can only read an unreaped process's totals. */
    spawn_wait_exit(&c, NULL);
    out->elapsed_ns = monotonic_ns() - t0;
    rc = dk_group_read(g, out->values, out->info);
    if (rc != 0)
        cli_error("stat", "reading the counters failed: %s", dk_last_error());
    /* Stop explicitly: a stop that fails leaves counting on, machine-wide
     * on a Mac, and the user must hear of it. */
    if (dk_group_stop(g) != 0) {
        cli_error("stat", "the counters were not stopped: %s", dk_last_error());
        rc = -1;
    }

    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    child_pid = 0; /* it has exited: once reaped, its pid may be reused */
    spawn_reap(&c, &status, &ru);
    dk_group_close(g);
    out->user_ns = tv_ns(ru.ru_utime);
    out->system_ns = tv_ns(ru.ru_stime);
    rep->signaled = WIFSIGNALED(status);
    if (WIFEXITED(status))
        rep->exit_status = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        rep->exit_status = 128 + WTERMSIG(status);
    return rc != 0 ? EXIT_SETUP : 0;
}

/* The measured quantities of a run. */
typedef enum quantity { Q_COUNT, Q_ELAPSED, Q_USER, Q_SYSTEM } quantity;

static double quantity_of(const run *x, size_t i, quantity q)
{
    switch (q) {
    case Q_COUNT:
        return (double)x->values[i];
    case Q_ELAPSED:
        return (double)x->elapsed_ns;
    case Q_USER:
        return (double)x->user_ns;
    case Q_SYSTEM:
        return (double)x->system_ns;
    }
    return 0;
}

/* Mean and relative standard deviation of the mean, in percent, of
 * quantity q (of event i for Q_COUNT) over the runs. */
static void summarize(const report *rep, size_t i, quantity q, double *mean, double *rel)
{
    stats acc;
    stats_init(&acc);
    for (size_t r = 0; r < rep->nruns; r++)
        stats_add(&acc, quantity_of(&rep->runs[r], i, q));
    *mean = stats_get(&acc, STATS_MEAN);
    *rel = stats_get(&acc, STATS_REL_STDDEV_MEAN);
}

static double running_fraction(const report *rep, size_t i)
{
    double sum = 0;
    size_t k = 0;
    for (size_t r = 0; r < rep->nruns; r++) {
        const dk_reading *info = &rep->runs[r].info[i];
        if (info->time_enabled > 0) {
            sum += (double)info->time_running / (double)info->time_enabled;
            k++;
        }
    }
    return k ? sum / (double)k : 1.0;
}

static bool counted(const report *rep, size_t i)
{
    for (size_t r = 0; r < rep->nruns; r++)
        if (rep->runs[r].info[i].counted)
            return true;
    return false;
}

static int find_role(const report *rep, int role)
{
    for (size_t i = 0; i < rep->n; i++)
        if (rep->role[i] == role && rep->supported[i] && counted(rep, i))
            return (int)i;
    return -1;
}

/* v divided by the mean of the counted event playing role, times scale:
 * 1 with *out set, 0 when that mean is 0, -1 when no event plays it. */
static int per(const report *rep, int role, double v, double scale, double *out)
{
    int j = find_role(rep, role);
    if (j < 0)
        return -1;
    double other, rel;
    summarize(rep, (size_t)j, Q_COUNT, &other, &rel);
    if (other <= 0)
        return 0;
    *out = v / other * scale;
    return 1;
}

/* A derived metric for event i: value and unit, or false when none. */
static bool metric(const report *rep, size_t i, double elapsed, double *value, const char **unit)
{
    double v, rel;
    summarize(rep, i, Q_COUNT, &v, &rel);
    int r = -1;
    switch (rep->role[i]) {
    case ROLE_CLOCK:
        if (elapsed <= 0)
            return false;
        *value = v / elapsed;
        *unit = "CPUs utilized";
        return true;
    case ROLE_INSTRUCTIONS:
        r = per(rep, ROLE_CYCLES, v, 1, value);
        *unit = "insn per cycle";
        break;
    case ROLE_MISSES:
        r = per(rep, ROLE_BRANCHES, v, 100, value);
        *unit = "% of all branches";
        break;
    case ROLE_CYCLES:
        r = per(rep, ROLE_CLOCK, v, 1, value);
        *unit = "GHz";
        break;
    default:
        break;
    }
    if (r >= 0)
        return r == 1;
    /* Otherwise a rate per second of CPU time, when task-clock is counted. */
    double rate;
    if (find_role(rep, ROLE_CLOCK) == (int)i || per(rep, ROLE_CLOCK, v, 1e9, &rate) != 1)
        return false;
    *unit = rate >= 1e9 ? "G/sec" : rate >= 1e6 ? "M/sec" : rate >= 1e3 ? "K/sec" : "/sec";
    *value = rate >= 1e9 ? rate / 1e9 : rate >= 1e6 ? rate / 1e6 : rate >= 1e3 ? rate / 1e3 : rate;
    return true;
}

static bool in_ns(const report *rep, size_t i)
{
    return rep->unit[i] != NULL && strcmp(rep->unit[i], "ns") == 0;
}

static void print_command(FILE *out, char **cmd)
{
    for (char **a = cmd; *a != NULL; a++)
        fprintf(out, "%s%s", a == cmd ? "" : " ", *a);
}

/* The reason without its "event NAME is " lead, so that shared reasons group. */
static const char *reason_tail(const report *rep, size_t i)
{
    const char *why = rep->why[i];
    size_t len = strlen(rep->native[i]);
    /* "event X needs ..." reads "X: needs ...", "event X is not ..." "X: not ...". */
    if (strncmp(why, "event ", 6) == 0 && strncmp(why + 6, rep->native[i], len) == 0 &&
        why[6 + len] == ' ') {
        why += 7 + len;
        if (strncmp(why, "is ", 3) == 0)
            why += 3;
    }
    return why;
}

/* Print a line without trailing blanks. */
static void put_line(FILE *out, char *line)
{
    size_t len = strlen(line);
    while (len > 0 && line[len - 1] == ' ')
        line[--len] = '\0';
    fputs(line, out);
    fputc('\n', out);
}

static void print_human(FILE *out, const report *rep, const stat_options *o, dk_sampler *s)
{
    double elapsed, erel;
    summarize(rep, 0, Q_ELAPSED, &elapsed, &erel);
    fputs("\n Performance counter stats for '", out);
    print_command(out, o->cmd);
    fputc('\'', out);
    if (rep->nruns > 1)
        fprintf(out, " (%zu runs)", rep->nruns);
    fputs(":\n", out);
    fprintf(out, " scope: %s (%s backend)\n\n", rep->scope, dk_sampler_backend(s));
    for (size_t i = 0; i < rep->n; i++) {
        char num[48], line[256];
        size_t used;
        if (!rep->supported[i] || !counted(rep, i)) {
            snprintf(line, sizeof line, "%18s      %s",
                     rep->supported[i] ? "<not counted>" : "<not supported>", rep->names[i]);
            put_line(out, line);
            continue;
        }
        double v, rel;
        summarize(rep, i, Q_COUNT, &v, &rel);
        if (in_ns(rep, i))
            snprintf(line, sizeof line, "%18s msec %-33s", fmt_fixed(v / 1e6, 2, num, sizeof num),
                     rep->names[i]);
        else
            snprintf(line, sizeof line, "%18s      %-33s",
                     fmt_count((uint64_t)(v + 0.5), num, sizeof num), rep->names[i]);
        used = strlen(line);
        double mv;
        const char *mu;
        if (metric(rep, i, elapsed, &mv, &mu))
            used += (size_t)snprintf(line + used, sizeof line - used, " # %8.3f %-16s", mv, mu);
        double frac = running_fraction(rep, i);
        if (rep->nruns > 1 && used < sizeof line)
            used += (size_t)snprintf(line + used, sizeof line - used, "  ( +- %5.2f%% )", rel);
        if (frac < 0.9999 && used < sizeof line)
            snprintf(line + used, sizeof line - used, "  (%.2f%%)", frac * 100);
        put_line(out, line);
    }
    fprintf(out, "\n%18.9f seconds time elapsed", elapsed / 1e9);
    if (rep->nruns > 1)
        fprintf(out, "  ( +- %5.2f%% )", erel);
    fputc('\n', out);
    if (rep->nruns == 1) {
        fprintf(out, "\n%18.9f seconds user\n", (double)rep->runs[0].user_ns / 1e9);
        fprintf(out, "%18.9f seconds sys\n", (double)rep->runs[0].system_ns / 1e9);
    }
    fputc('\n', out);
    /* Why events were not supported, each reason once. */
    bool done[DK_MAX_EVENTS] = {false};
    for (size_t i = 0; i < rep->n; i++) {
        if (rep->supported[i] || done[i] || rep->why[i][0] == '\0')
            continue;
        const char *tail = reason_tail(rep, i);
        fprintf(out, " %s", rep->names[i]);
        for (size_t j = i + 1; j < rep->n; j++)
            if (!rep->supported[j] && !done[j] && strcmp(reason_tail(rep, j), tail) == 0) {
                fprintf(out, ", %s", rep->names[j]);
                done[j] = true;
            }
        fprintf(out, ": %s\n", tail);
    }
}

/* value SEP unit SEP event SEP run-time SEP percent SEP metric SEP metric-unit SEP spread */
static void print_csv(FILE *out, const report *rep, const stat_options *o)
{
    const char *x = o->sep;
    double elapsed, erel;
    summarize(rep, 0, Q_ELAPSED, &elapsed, &erel);
    for (size_t i = 0; i < rep->n; i++) {
        if (!rep->supported[i] || !counted(rep, i)) {
            /* value, unit, event, run time, percent, metric, metric unit, spread */
            const char *value = rep->supported[i] ? "<not counted>" : "<not supported>";
            fprintf(out, "%s%s%s%s%s0%s0.00%s%s%s\n", value, x, x, rep->names[i], x, x, x, x, x);
            continue;
        }
        double v, rel, mv = 0;
        const char *mu = "";
        summarize(rep, i, Q_COUNT, &v, &rel);
        bool has_metric = metric(rep, i, elapsed, &mv, &mu);
        uint64_t run_ns = 0;
        for (size_t r = 0; r < rep->nruns; r++)
            run_ns += rep->runs[r].info[i].time_running;
        run_ns = rep->nruns ? run_ns / rep->nruns : 0;
        if (in_ns(rep, i))
            fprintf(out, "%.2f%smsec", v / 1e6, x);
        else
            fprintf(out, "%.0f%s", v, x);
        fprintf(out, "%s%s%s%llu%s%.2f%s", x, rep->names[i], x, (unsigned long long)run_ns, x,
                running_fraction(rep, i) * 100, x);
        if (has_metric)
            fprintf(out, "%.3f%s%s", mv, x, mu);
        else
            fprintf(out, "%s", x);
        fprintf(out, "%s", x);
        if (rep->nruns > 1)
            fprintf(out, "%.2f%%", rel);
        fputc('\n', out);
    }
}

static void print_json(FILE *out, const report *rep, const stat_options *o, dk_sampler *s)
{
    double elapsed, erel, user, urel, sys, srel;
    summarize(rep, 0, Q_ELAPSED, &elapsed, &erel);
    summarize(rep, 0, Q_USER, &user, &urel);
    summarize(rep, 0, Q_SYSTEM, &sys, &srel);
    fputs("{\"command\": [", out);
    for (char **a = o->cmd; *a != NULL; a++) {
        fputs(a == o->cmd ? "" : ", ", out);
        json_string(out, *a);
    }
    fprintf(out, "], \"exit_status\": %d, \"runs\": %zu, \"backend\": ", rep->exit_status,
            rep->nruns);
    json_string(out, dk_sampler_backend(s));
    fputs(", \"scope\": ", out);
    json_string(out, rep->scope);
    fprintf(out, ", \"all_cpus\": %s, \"elapsed_ns\": %.0f, \"elapsed_relative_stddev\": %.4f",
            o->all_cpus ? "true" : "false", elapsed, erel);
    fprintf(out, ", \"user_ns\": %.0f, \"system_ns\": %.0f, \"events\": [", user, sys);
    for (size_t i = 0; i < rep->n; i++) {
        double v = 0, rel = 0, mv = 0;
        const char *mu = NULL;
        bool ok = rep->supported[i] && counted(rep, i);
        if (ok)
            summarize(rep, i, Q_COUNT, &v, &rel);
        bool has_metric = ok && metric(rep, i, elapsed, &mv, &mu);
        fputs(i ? ", {\"name\": " : "{\"name\": ", out);
        json_string(out, rep->names[i]);
        fputs(", \"event\": ", out);
        json_string(out, rep->native[i]);
        if (ok)
            fprintf(out, rep->nruns > 1 ? ", \"value\": %.2f" : ", \"value\": %.0f", v);
        else
            fputs(", \"value\": null", out);
        fputs(", \"unit\": ", out);
        json_string(out, rep->unit[i]);
        fprintf(out, ", \"supported\": %s, \"counted\": %s, \"running_fraction\": %.4f",
                rep->supported[i] ? "true" : "false", ok ? "true" : "false",
                ok ? running_fraction(rep, i) : 0.0);
        fprintf(out, ", \"relative_stddev\": %.4f", rel);
        if (has_metric) {
            fprintf(out, ", \"metric\": {\"value\": %.6f, \"unit\": ", mv);
            json_string(out, mu);
            fputc('}', out);
        } else {
            fputs(", \"metric\": null", out);
        }
        fputs(", \"reason\": ", out);
        json_string(out, rep->supported[i] ? NULL : rep->why[i]);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

/*
 * The -o file, opened before the counters are taken: open() of a FIFO
 * blocks until a reader comes, and a Ctrl-C then must find nothing held.
 * The report file is dkperf's, not the command's: it is closed on exec.
 */
static FILE *open_report(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (out == NULL) {
        int why = errno;
        if (fd >= 0)
            close(fd);
        cli_error("stat", "-o %s: %s", path,
                  why == ENOMEM ? "out of memory while opening the report file" : strerror(why));
    }
    return out;
}

int cmd_stat(int argc, char **argv)
{
    stat_options o;
    int rc = stat_parse_args(argc, argv, &o);
    if (rc != 0) {
        stat_options_free(&o);
        return rc < 0 ? 0 : rc;
    }

    FILE *out = stderr;
    if (o.output != NULL && (out = open_report(o.output)) == NULL) {
        stat_options_free(&o);
        return EXIT_SETUP;
    }

    /*
     * From before the counters are taken until they are given back, the
     * signals that would stop dkperf are caught: passed to the command while
     * it runs, remembered otherwise, and acted on once nothing is held.
     */
    catch_signals();
    dk_sampler *s = cli_open_sampler("stat", o.backend);
    report rep;
    memset(&rep, 0, sizeof rep);
    char **names = o.events;
    size_t n = o.nevents;
    char **defaults = NULL;
    size_t ndefaults = 0;
    if (s == NULL) {
        rc = EXIT_SETUP;
    } else if (n == 0) {
        bool linux_backend = strcmp(dk_sampler_backend(s), "perf_event") == 0;
        rc = split_event_list(linux_backend ? "task-clock,context-switches,page-faults,"
                                              "instructions,cycles,branches,branch-misses"
                                            : "instructions,cycles,branches,branch-misses",
                              &defaults, &ndefaults);
        names = defaults;
        n = ndefaults;
    }
    /* Names no database knows are mistakes: refuse them before running anything. */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const dk_database_event *ev;
        int r = dk_sampler_resolve(s, names[i], &ev);
        if (r == DK_ENOMEM) {
            cli_error("stat", "out of memory while looking up event '%s'", names[i]);
            rc = EXIT_SETUP;
        } else if (r != 0 && r != DK_EUNAVAILABLE) {
            cli_error("stat", "event '%s': %s", names[i], dk_last_error());
            rc = EXIT_SETUP;
        }
    }
    rep.n = n;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rep.names[i] = names[i];
    rep.runs = rc == 0 ? calloc((size_t)o.repeat, sizeof *rep.runs) : NULL;
    if (rc == 0 && rep.runs == NULL) {
        cli_error("stat", "out of memory while allocating %ld runs", o.repeat);
        rc = EXIT_SETUP;
    }

    int exec_failed = 0, interrupted = 0;
    for (long r = 0; rc == 0 && got_signal == 0 && r < o.repeat; r++) {
        rc = run_once(s, &o, names, n, &rep, &rep.runs[rep.nruns], &exec_failed);
        if (rc != 0 || exec_failed)
            break;
        rep.nruns++;
        /* A command killed by a signal, or a Ctrl-C sent to dkperf, ends the repeats. */
        if (rep.signaled)
            break;
    }
    /* Give the counters back while the signals are still held. */
    char release_error[1024];
    int released = s != NULL ? cli_release_sampler(s, release_error, sizeof release_error) : 0;
    restore_signals();
    /* A run interrupted before its command ran ended quietly with 128 + signal. */
    if (rc > 128) {
        interrupted = rc;
        rc = 0;
    }
    /* A signal that reached dkperf while no command ran to take it. */
    if (interrupted == 0 && pending_signal != 0)
        interrupted = 128 + pending_signal;

    if (rc == 0 && !exec_failed && rep.nruns > 0) {
        if (o.json)
            print_json(out, &rep, &o, s);
        else if (o.sep != NULL)
            print_csv(out, &rep, &o);
        else
            print_human(out, &rep, &o, s);
    }
    if (released != 0) /* below the report, where it is seen */
        cli_error("stat", "%s", release_error);
    if (out != stderr) {
        bool bad = ferror(out) != 0;
        errno = 0;
        if (fclose(out) != 0 || bad) {
            cli_error("stat", "-o %s: cannot write the report: %s", o.output,
                      errno != 0 ? strerror(errno) : "write error");
            if (rc == 0)
                rc = EXIT_SETUP;
        }
    } else if (fflush(stderr) != 0 || ferror(stderr)) {
        rc = rc != 0 ? rc : EXIT_SETUP; /* the report is lost, and so would be a message */
    }
    free(rep.runs);
    free_event_list(defaults, ndefaults);
    stat_options_free(&o);
    dk_sampler_close(s);
    if (rc != 0)
        return rc;
    if (released != 0)
        return EXIT_SETUP;
    if (exec_failed)
        return exec_failed;
    if (interrupted)
        return interrupted;
    return rep.exit_status;
}
