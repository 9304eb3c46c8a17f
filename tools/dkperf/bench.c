/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench.c - dkperf bench: run commands many times, each run with
 * process-scope counters that start at its exec, and compare them, in the
 * manner of hyperfine -N. The sampler stays open across the runs. Where
 * the backend has DK_GROUP_CHILDREN (perf_event), one group opened for the
 * whole benchmark counts every command from its exec: a run is read,
 * posix_spawn, wait4, read. On macOS (kperf, selfcounts), where another
 * process's counts are its proc_pid_rusage instructions and cycles, a run
 * is posix_spawn, a wait that does not reap, the zombie's totals, and the
 * reap. Otherwise (events neither way can open, whose errors are then
 * reported for the command) each run forks the command held before its exec (tools/common/child.c), opens the
 * counters on it, releases it, waits without reaping, reads, and reaps, as
 * dkperf stat does. Signals that would stop dkperf are passed to the
 * running command and end the benchmark once nothing is held.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "bench.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/text.h"
#include "options.h"
#include "signals.h"
#include "child.h"

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6; }

typedef struct runner {
    dk_sampler *s;
    const bench_options *o;
    char **names;
    size_t n;
    int null_fd; /* the commands' stdin, and stdout and stderr unless --show-output */
    /* After the first run only the events it could count are opened: an
     * event that cannot be counted costs a failing system call per run. */
    const char *open_names[DK_MAX_EVENTS];
    size_t open_index[DK_MAX_EVENTS], nopen;
    /* Where the backend can: one group, open for the whole benchmark, that
     * counts every command dkperf starts from its exec (DK_GROUP_CHILDREN);
     * a run is then a posix_spawn, a wait and two reads. NULL: each run
     * forks a held child and opens counters on it. */
    dk_group *children;
    /* Else on macOS, where a process's instructions and cycles are its
     * proc_pid_rusage totals: when every event that can be counted is one
     * of those two, a run is a posix_spawn, a wait that does not reap, the
     * zombie's totals (dk_process_cpi) and the reap. cpi_slot[i] says which
     * total event i is: 0 instructions, 1 cycles, -1 not counted. */
    bool cpi;
    int cpi_slot[DK_MAX_EVENTS];
    bench_progress progress; /* the progress line (bench_progress.c) */
} runner;

/* Run a --prepare, --setup or --cleanup command (opt), not measured.
 * Returns 0 or the exit status. */
static int run_aside(runner *ru, const char *opt, const char *text, char **words)
{
    child_options so = CHILD_OPTIONS_INIT;
    so.stdin_fd = ru->null_fd;
    if (!ru->o->show_output)
        so.stdout_fd = so.stderr_fd = ru->null_fd;
    so.pid_out = &signals_child_pid;
    so.in_child = signals_restore;
    child_process c;
    int rc = child_prepare(&c, words, &so);
    if (rc != 0) {
        cli_error("bench", "%s: %s: %s", opt, c.failed, strerror(-rc));
        return EXIT_SETUP;
    }
    int e = 0, status = 0;
    if (child_release(&c) != 0) {
        child_abandon(&c);
        signals_child_pid = 0;
        return signals_got() ? 128 + signals_got() : EXIT_SETUP;
    }
    child_exec_result(&c, &e);
    child_reap(&c, &status, NULL);
    signals_child_pid = 0;
    if (signals_got())
        return 128 + signals_got();
    if (e != 0) {
        cli_error("bench", "%s '%s': cannot run '%s': %s", opt, text, words[0], strerror(e));
        return child_exec_status(e);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cli_error("bench", "%s '%s' failed with %s %d", opt, text,
                  WIFEXITED(status) ? "exit status" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return EXIT_SETUP;
    }
    return 0;
}

/* The events as the first run's group found them. */
static void describe_events(runner *ru, bench_report *rep, dk_group *g)
{
    for (size_t i = 0; i < ru->n; i++) {
        bench_event *e = &rep->ev[i];
        const char *unit = dk_group_event_unit(g, i);
        e->name = ru->names[i];
        snprintf(e->native, sizeof e->native, "%s", dk_group_event_name(g, i));
        e->supported = dk_group_supported(g, i);
        snprintf(e->why, sizeof e->why, "%s", dk_group_why(g, i));
        e->time = unit != NULL && strcmp(unit, "ns") == 0;
        const dk_database_event *dbe = NULL;
        e->instructions = strcmp(e->name, "instructions") == 0 ||
                          (dk_sampler_resolve(ru->s, "instructions", &dbe) == 0 &&
                           strcmp(dbe->name, e->native) == 0);
        if (e->supported) {
            ru->open_names[ru->nopen] = ru->names[i];
            ru->open_index[ru->nopen++] = i;
        }
    }
    rep->nev = ru->n;
}

/* Fills out's counts and times from the run's status and usage. Returns 0
 * or the exit status dkperf ends with, as run_once. */
static int finish_run(runner *ru, bench_command *cmd, bench_run *out, int status,
                      const struct rusage *use, int exec_errno)
{
    out->user = tv_s(use->ru_utime);
    out->sys = tv_s(use->ru_stime);
#ifdef __APPLE__
    out->max_rss = (uint64_t)use->ru_maxrss; /* bytes there */
#else
    out->max_rss = (uint64_t)use->ru_maxrss * 1024; /* KiB */
#endif
    out->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (exec_errno != 0) {
        cli_error("bench", "cannot run '%s': %s", cmd->argv[0], strerror(exec_errno));
        return child_exec_status(exec_errno);
    }
    if (signals_got())
        return 128 + signals_got();
    if (out->status != 0 && !ru->o->ignore_failure) {
        if (WIFSIGNALED(status))
            cli_error("bench", "command '%s' was killed by signal %d (use -i to ignore failures)",
                      cmd->text, WTERMSIG(status));
        else
            cli_error("bench", "command '%s' exited with status %d (use -i to ignore failures)",
                      cmd->text, out->status);
        return EXIT_SETUP;
    }
    return 0;
}

/* Whether processes that a command left running are still running. They
 * were adopted by dkperf (a subreaper on Linux, where one group counts
 * every process dkperf starts): the exited are reaped here. */
static bool strays_running(void)
{
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0)
            continue;
        return p == 0;
    }
}

/*
 * Start cmd for a run with posix_spawn. The command gets dkperf's own mask
 * and SIGPIPE and SIGXFSZ as dkperf found them; the caught signals are held until
 * signals_child_pid names it. Returns 0 with *pid (or *exec_errno, when it
 * could not start) and the start time *t0, or 128 + the signal caught
 * since the last run, and then no command is started.
 */
static int start_command(runner *ru, bench_command *cmd, pid_t *pid, uint64_t *t0, int *exec_errno)
{
    sigset_t hold, mask, dfl;
    signals_hold_set(&hold);
    signals_default_set(&dfl);
    sigprocmask(SIG_BLOCK, &hold, &mask);
    if (signals_got()) {
        sigprocmask(SIG_SETMASK, &mask, NULL);
        return 128 + signals_got();
    }
    *t0 = dk__monotonic_ns();
    *exec_errno = child_launch(pid, cmd->argv, ru->null_fd, ru->o->show_output, &mask, &dfl);
    if (*exec_errno == 0)
        signals_child_pid = *pid;
    sigprocmask(SIG_SETMASK, &mask, NULL); /* a signal held until now finds the pid */
    return 0;
}

/*
 * One run on the DK_GROUP_CHILDREN group: read, posix_spawn (no fork of
 * dkperf's pages, no held child, no counters to open), wait, read. The
 * group's readings are running totals over every process dkperf started
 * (a --prepare command's included, but it ends before the first reading),
 * so the run's counts are their difference. When the counters were time
 * shared, each total is scaled as perf does and the difference is of two
 * estimates.
 */
static int run_spawned(runner *ru, bench_report *rep, bench_command *cmd, bench_run *out)
{
    dk_group *g = ru->children;
    dk_reading before_info[DK_MAX_EVENTS], after_info[DK_MAX_EVENTS];
    uint64_t before[DK_MAX_EVENTS], after[DK_MAX_EVENTS];
    if (dk_group_read(g, before, before_info) != 0) {
        cli_error("bench", "reading the counters before '%s' failed: %s", cmd->text,
                  dk_last_error());
        return EXIT_SETUP;
    }
    bool strays_before = strays_running();
    pid_t pid = -1;
    uint64_t t0 = 0;
    int exec_errno = 0;
    int sig = start_command(ru, cmd, &pid, &t0, &exec_errno);
    if (sig != 0)
        return sig;
    int status = child_exec_status(exec_errno) << 8; /* as a child whose exec failed */
    struct rusage use;
    memset(&use, 0, sizeof use);
    if (exec_errno == 0) {
        /* Wait for the exit without reaping, forget the pid, then reap: a
         * signal that lands between the reap and forgetting would be passed
         * on to a pid that may be another process's by then. */
        int rc = child_wait_pid_exit(pid, NULL);
        if (rc == 0) {
            signals_child_pid = 0;
            rc = child_reap_pid(pid, &status, &use);
        }
        if (rc < 0) {
            signals_child_pid = 0;
            cli_error("bench", "waiting for '%s' (pid %d): %s", cmd->text, (int)pid, strerror(-rc));
            return EXIT_SETUP;
        }
        if (rep->scope[0] == '\0') /* what was counted, as the held path says it */
            snprintf(rep->scope, sizeof rep->scope,
                     "process %d and the threads and processes it starts", (int)pid);
    }
    signals_child_pid = 0;
    out->wall = (double)(dk__monotonic_ns() - t0) * 1e-9;
    if (strays_running()) {
        cmd->stray_counted = true;
        cmd->strays = cmd->strays || !strays_before;
    }
    /* The child's counts were added to the group before it became a zombie
     * (see DK_GROUP_CHILDREN), so after wait4 they are all in. */
    if (dk_group_read(g, after, after_info) != 0) {
        cli_error("bench", "reading the counters of '%s' failed: %s", cmd->text, dk_last_error());
        return EXIT_SETUP;
    }
    for (size_t i = 0; i < ru->n; i++) {
        out->values[i] = after[i] - before[i];
        out->counted[i] = rep->ev[i].supported &&
                          after_info[i].time_running > before_info[i].time_running;
    }
    return finish_run(ru, cmd, out, status, &use, exec_errno);
}

/*
 * One run on the proc_pid_rusage totals (runner.cpi): posix_spawn, wait
 * without reaping, read the zombie's totals, reap. A process posix_spawn
 * starts has retired nothing before its first instruction, so its totals
 * are the run's counts: no fork of dkperf's pages, no held child, no
 * counters to open. The held path counts from before the exec; this one
 * from the new image, so the exec's own work in the kernel is left out.
 */
static int run_rusage(runner *ru, bench_report *rep, bench_command *cmd, bench_run *out)
{
    pid_t pid = -1;
    uint64_t t0 = 0;
    int exec_errno = 0;
    int sig = start_command(ru, cmd, &pid, &t0, &exec_errno);
    if (sig != 0)
        return sig;
    int status = child_exec_status(exec_errno) << 8; /* as a child whose exec failed */
    struct rusage use;
    memset(&use, 0, sizeof use);
    for (size_t i = 0; i < ru->n; i++)
        out->counted[i] = false;
    if (exec_errno != 0) {
        out->wall = (double)(dk__monotonic_ns() - t0) * 1e-9;
        return finish_run(ru, cmd, out, status, &use, exec_errno);
    }
    char why[2048] = "";
    int rc = child_wait_pid_exit(pid, NULL);
    if (rc != 0)
        snprintf(why, sizeof why, "waiting for '%s' (pid %d): %s", cmd->text, (int)pid,
                 strerror(-rc));
    out->wall = (double)(dk__monotonic_ns() - t0) * 1e-9;
    /* A zombie takes no signal, and once reaped its pid may be another
     * process's: the pid is forgotten before the reap. (If the wait failed,
     * the command may still run, and a signal is still passed on to it.) */
    if (why[0] == '\0')
        signals_child_pid = 0;
    uint64_t cpi[2] = {0, 0};
    if (why[0] == '\0' && dk_process_cpi(ru->s, (int)pid, &cpi[0], &cpi[1]) != 0)
        snprintf(why, sizeof why, "reading the instructions and cycles of '%s' (pid %d) failed: %s",
                 cmd->text, (int)pid, dk_last_error());
    rc = child_reap_pid(pid, &status, &use);
    if (rc != 0 && why[0] == '\0')
        snprintf(why, sizeof why, "waiting for '%s' (pid %d): %s", cmd->text, (int)pid,
                 strerror(-rc));
    signals_child_pid = 0;
    if (why[0] != '\0') {
        cli_error("bench", "%s", why);
        return EXIT_SETUP;
    }
    if (rep->scope[0] == '\0') /* as the held path's group says it */
        snprintf(rep->scope, sizeof rep->scope, "process %d (its own threads)", (int)pid);
    for (size_t i = 0; i < ru->n; i++) {
        out->counted[i] = ru->cpi_slot[i] >= 0;
        out->values[i] = out->counted[i] ? cpi[ru->cpi_slot[i]] : 0;
    }
    return finish_run(ru, cmd, out, status, &use, 0);
}

/*
 * Whether the runs can be read from proc_pid_rusage totals (runner.cpi):
 * on a Darwin backend (which has no DK_GROUP_CHILDREN), the events are
 * opened once on dkperf itself, and when every one that can be counted is
 * instructions or cycles, they are described from that group and the runs
 * take run_rusage. Returns false (nothing described) otherwise, and the
 * held path opens and reports the events on each command.
 */
static bool use_rusage_totals(runner *ru, bench_report *rep)
{
    if (dk_sampler_framework_root(ru->s) == NULL)
        return false;
    dk_group *g = NULL;
    if (dk_group_open(ru->s, DK_SCOPE_PROCESS, (int)getpid(), (const char *const *)ru->names, ru->n,
                      DK_GROUP_PARTIAL, &g) != 0)
        return false;
    const char *native[2] = {NULL, NULL};
    const char *which[2] = {"instructions", "cycles"};
    for (int k = 0; k < 2; k++) {
        const dk_database_event *ev = NULL;
        if (dk_sampler_resolve(ru->s, which[k], &ev) == 0 && ev != NULL)
            native[k] = ev->name;
    }
    bool ok = true;
    for (size_t i = 0; i < ru->n && ok; i++) {
        ru->cpi_slot[i] = -1;
        if (!dk_group_supported(g, i))
            continue;
        const char *name = dk_group_event_name(g, i);
        for (int k = 0; k < 2; k++)
            if (native[k] != NULL && name != NULL && strcmp(name, native[k]) == 0)
                ru->cpi_slot[i] = k;
        ok = ru->cpi_slot[i] >= 0;
    }
    if (ok) {
        describe_events(ru, rep, g);
        ru->cpi = true;
    }
    dk_group_close(g);
    return ok;
}

/*
 * One run of cmd with its counters. Returns 0, or the exit status dkperf
 * ends with (after its line): EXIT_SETUP, 127/126 when the command cannot
 * run, 128 + signal when interrupted.
 */
static int run_once(runner *ru, bench_report *rep, bench_command *cmd, bench_run *out)
{
    if (cmd->prepare != NULL) {
        int rc = run_aside(ru, "--prepare", cmd->bcase->prepare, cmd->prepare);
        if (rc != 0)
            return rc;
    }
    if (ru->children != NULL)
        return run_spawned(ru, rep, cmd, out);
    if (ru->cpi)
        return run_rusage(ru, rep, cmd, out);
    child_options so = CHILD_OPTIONS_INIT;
    so.stdin_fd = ru->null_fd;
    if (!ru->o->show_output)
        so.stdout_fd = so.stderr_fd = ru->null_fd;
    child_process c;
    int rc = signals_child_prepare(&c, cmd->argv, &so);
    if (rc != 0) {
        cli_error("bench", "%s: %s", c.failed, strerror(-rc));
        return EXIT_SETUP;
    }
    dk_group *g = NULL;
    bool first = rep->nev == 0;
    bool all = first || ru->nopen == 0; /* with nothing counted, the group keeps every event */
    rc = dk_group_open(ru->s, DK_SCOPE_PROCESS, (int)c.pid,
                       all ? (const char *const *)ru->names : ru->open_names,
                       all ? ru->n : ru->nopen, DK_GROUP_PARTIAL | DK_GROUP_ENABLE_ON_EXEC, &g);
    if (rc == 0)
        rc = dk_group_start(g);
    if (rc != 0 || signals_got()) {
        char why[2048];
        snprintf(why, sizeof why, "%s", dk_last_error());
        signals_child_pid = 0;
        child_abandon(&c);
        dk_group_close(g);
        if (signals_got())
            return 128 + signals_got();
        cli_error("bench", "%s", why);
        return EXIT_SETUP;
    }
    if (rep->nev == 0) {
        snprintf(rep->scope, sizeof rep->scope, "%s", dk_group_scope(g));
        describe_events(ru, rep, g);
    }
    uint64_t t0 = dk__monotonic_ns();
    rc = child_release(&c);
    if (rc != 0) {
        signals_child_pid = 0;
        child_abandon(&c);
        dk_group_close(g);
        if (signals_got())
            return 128 + signals_got();
        cli_error("bench", "cannot start '%s': %s", cmd->text, strerror(-rc));
        return EXIT_SETUP;
    }
    int e = 0;
    child_exec_result(&c, &e);
    child_wait_exit(&c, NULL);
    signals_child_pid = 0;
    out->wall = (double)(dk__monotonic_ns() - t0) * 1e-9;
    dk_reading info[DK_MAX_EVENTS];
    uint64_t values[DK_MAX_EVENTS];
    rc = dk_group_read(g, values, info);
    char why[2048] = "";
    if (rc != 0)
        snprintf(why, sizeof why, "reading the counters of '%s' failed: %s", cmd->text,
                 dk_last_error());
    if (dk_group_stop(g) != 0 && rc == 0) {
        snprintf(why, sizeof why, "the counters were not stopped: %s", dk_last_error());
        rc = -1;
    }
    int status = 0;
    struct rusage use;
    memset(&use, 0, sizeof use);
    child_reap(&c, &status, &use);
    dk_group_close(g);
    if (rc != 0) {
        cli_error("bench", "%s", why);
        return EXIT_SETUP;
    }
    for (size_t i = 0; i < ru->n; i++)
        out->counted[i] = false;
    for (size_t j = 0; j < (all ? ru->n : ru->nopen); j++) {
        size_t i = all ? j : ru->open_index[j];
        out->values[i] = values[j];
        out->counted[i] = rep->ev[i].supported && info[j].counted;
    }
    return finish_run(ru, cmd, out, status, &use, e);
}

/* What a command's body and the per-result callback share. */
typedef struct bench_driver {
    runner *ru;
    bench_report *rep;
    FILE *report;
    size_t done;                   /* the commands that ran all their runs */
    int status;                    /* the exit status a run or the report ended with, 0 */
    struct bench_body_ctx *bodies; /* one per command, in its order */
} bench_driver;

typedef struct bench_body_ctx {
    bench_driver *d;
    bench_command *cmd;
    bool set_up; /* its --setup ran (or it has none) and its --cleanup has not */
} bench_body_ctx;

/* A command's --cleanup, once its runs are done or after one that failed
 * (what --setup made is removed), but not after a signal. */
static int cleanup_after(bench_body_ctx *b)
{
    if (!b->set_up)
        return 0;
    b->set_up = false;
    if (b->cmd->cleanup == NULL || signals_got())
        return 0;
    bench_progress_clear();
    return run_aside(b->d->ru, "--cleanup", b->cmd->bcase->cleanup, b->cmd->cleanup);
}

/* One run of a command, as libdkbench's external body: the harness plans
 * the runs (hyperfine's rule, bench.h) and estimates; the runs are kept
 * here too, for the exports. */
static int body_run(void *ctx, dk_bench_body_run *run)
{
    bench_body_ctx *b = ctx;
    runner *ru = b->d->ru;
    bench_command *cmd = b->cmd;
    if (!b->set_up) { /* its --setup, once before its first run */
        int rc = cmd->setup != NULL ? run_aside(ru, "--setup", cmd->bcase->setup, cmd->setup) : 0;
        if (rc != 0) {
            b->d->status = rc; /* said by run_aside */
            return DK_ESTATE;
        }
        b->set_up = true;
    }
    if (run->index == 0 && (run->warmup || ru->o->warmup == 0))
        ru->progress.at = 0; /* each command's line shows at once */
    bench_progress_draw(&ru->progress, b->d->rep, cmd, run->warmup != 0, (long)run->index + 1,
                        (long)run->planned);
    bench_run scratch, *slot = &scratch;
    memset(&scratch, 0, sizeof scratch);
    int rc = run->warmup ? 0 : bench_add_run(cmd, &slot);
    if (rc == 0)
        rc = run_once(ru, b->d->rep, cmd, slot);
    if (rc != 0) {
        b->d->status = rc; /* said by run_once */
        return DK_ESTATE;
    }
    if (run->warmup)
        return 0;
    cmd->nruns++;
    run->wall_s = slot->wall;
    run->user_s = slot->user;
    run->system_s = slot->sys;
    run->max_rss = slot->max_rss;
    for (size_t i = 0; i < ru->n; i++) {
        run->counters[i] = slot->values[i];
        run->counted[i] = slot->counted[i];
    }
    return 0;
}

/* Each command's block is printed once its runs are done (and its
 * --cleanup has run): a later command that fails, or a signal, does not
 * take the earlier results with it (nor out of the exports). */
static int body_done(void *arg, const dk_bench_results *res, size_t index)
{
    bench_driver *d = arg;
    bench_progress_clear();
    int rc = cleanup_after(&d->bodies[index]);
    if (rc != 0) {
        d->status = rc; /* said by run_aside */
        return DK_ESTATE;
    }
    bench_summarize_command(d->rep, index, res, index);
    bench_print_command(d->report, d->rep, index);
    d->done++;
    /* The reader is gone (| head): the other commands would run for
     * nothing. Standard output's error is said by main. */
    if (ferror(d->report)) {
        if (d->report == stderr)
            cli_error("bench", "cannot write the report on standard error");
        d->status = EXIT_SETUP;
        return DK_EOS;
    }
    return 0;
}

/* Register each command as an external body of libdkbench, named by its
 * text (the name its baseline result has). Returns 0 or EXIT_USAGE after a
 * line. */
static int register_commands(bench_report *rep, runner *ru, bench_body_ctx *ctx, bench_driver *d)
{
    for (size_t k = 0; k < rep->ncmd; k++) {
        bench_command *c = &rep->cmd[k];
        bench_name_command(rep, k);
        ctx[k].d = d;
        ctx[k].cmd = c;
        dk_bench_body body = {
            sizeof body, c->name, body_run, &ctx[k], (const char *const *)ru->names, ru->n};
        if (dk_bench_register_body(&body) != 0) {
            cli_error("bench", "command '%s': %s", rep->cmd[k].text, dk_bench_last_error());
            return EXIT_USAGE;
        }
    }
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    bench_options o;
    int rc = bench_parse_args(argc, argv, &o);
    if (rc != 0) {
        bench_options_free(&o);
        return rc < 0 ? 0 : rc;
    }
    bench_report rep;
    memset(&rep, 0, sizeof rep);
    rep.o = &o;
    runner ru;
    memset(&ru, 0, sizeof ru);
    ru.o = &o;
    ru.names = o.events;
    ru.n = o.nevents;
    ru.null_fd = -1;
    /* As hyperfine: nothing when standard error is a file or a pipe, nor
     * amid the commands' own output. */
    ru.progress.on = !o.no_progress && !o.show_output && isatty(STDERR_FILENO);
    char **defaults = NULL;
    size_t ndefaults = 0;
    dk_bench_results *results = NULL;
    bench_body_ctx *bodies = NULL;
    dk_sampler *s = NULL;
    char release_error[1024];
    int released = 0;
    bench_export ex[3] = {{"--export-json", o.export_json, 0, NULL, false},
                          {"--export-csv", o.export_csv, 1, NULL, false},
                          {"--export-markdown", o.export_markdown, 2, NULL, false}};
    /* With an export on standard output, the report goes to standard
     * error: what a pipe gets is the export alone. */
    FILE *report = stdout;
    for (int k = 0; k < 3; k++)
        if (ex[k].path != NULL && strcmp(ex[k].path, "-") == 0)
            report = stderr;
    bench_driver drv = {&ru, &rep, report, 0, 0, NULL};

    rep.cmd = calloc(o.cases.n, sizeof *rep.cmd);
    bodies = calloc(o.cases.n, sizeof *bodies);
    if (rep.cmd == NULL || bodies == NULL) {
        cli_error("bench", "out of memory");
        rc = EXIT_SETUP;
        goto out;
    }
    drv.bodies = bodies;
    /* Each benchmark's words, its parameters substituted, before any run. */
    for (size_t k = 0; k < o.cases.n; k++) {
        const bench_case *bc = &o.cases.c[k];
        bench_command *c = &rep.cmd[k];
        c->text = bc->name;
        c->bcase = bc;
        rep.ncmd++;
        if ((c->argv = bench_command_words(&o, "command", bc->command)) == NULL ||
            (bc->setup != NULL &&
             (c->setup = bench_command_words(&o, "--setup", bc->setup)) == NULL) ||
            (bc->prepare != NULL &&
             (c->prepare = bench_command_words(&o, "--prepare", bc->prepare)) == NULL) ||
            (bc->cleanup != NULL &&
             (c->cleanup = bench_command_words(&o, "--cleanup", bc->cleanup)) == NULL)) {
            rc = o.shell == NULL ? EXIT_USAGE : EXIT_SETUP;
            goto out;
        }
    }
    if ((rc = bench_check_old_baseline(&o)) != 0)
        goto out;
    if ((rc = bench_exports_open(ex, 3)) != 0)
        goto out;
    ru.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (ru.null_fd < 0) {
        cli_error("bench", "cannot open /dev/null: %s", strerror(errno));
        rc = EXIT_SETUP;
        goto out;
    }

    signals_catch();
    s = cli_open_sampler("bench", o.backend);
    if (s == NULL) {
        rc = EXIT_SETUP;
    } else if (ru.n == 0) {
        dk_backend_caps caps = {.size = sizeof caps};
        (void)dk_sampler_caps(s, &caps);
        rc = split_event_list("bench",
                              caps.software_events ? "task-clock,instructions,cycles,branches"
                                                   : "instructions,cycles,branches",
                              &defaults, &ndefaults);
        ru.names = defaults;
        ru.n = ndefaults;
    }
    ru.s = s;
    if (s != NULL)
        rep.backend = dk_sampler_backend(s);
    for (size_t i = 0; rc == 0 && i < ru.n; i++)
        rc = cli_check_event("bench", s, ru.names[i], NULL);
    /* A backend without DK_GROUP_CHILDREN, or one that cannot open the
     * events so, leaves the held-child path, which reports what fails. */
    if (rc == 0 && dk_group_open(s, DK_SCOPE_PROCESS, 0, (const char *const *)ru.names, ru.n,
                                 DK_GROUP_PARTIAL | DK_GROUP_CHILDREN, &ru.children) == 0) {
        describe_events(&ru, &rep, ru.children);
#ifdef PR_SET_CHILD_SUBREAPER
        /* The group counts every process dkperf starts and theirs, the
         * ones a command leaves running too: adopted, they can be seen. */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
    } else if (rc == 0) {
        use_rusage_totals(&ru, &rep);
    }
    if (rc == 0)
        rc = register_commands(&rep, &ru, bodies, &drv);
    if (rc == 0 && !signals_got()) {
        dk_bench_options bo;
        dk_bench_options_init(&bo);
        bo.runs = (size_t)o.runs;
        bo.min_runs = BENCH_MIN_RUNS;
        bo.max_runs = BENCH_MAX_RUNS;
        bo.warmup_runs = (size_t)o.warmup;
        bo.min_time = o.min_time;
        bo.results_dir = o.results_dir;
        bo.baseline = o.baseline;
        bo.save_baseline = o.save_baseline;
        bo.on_result = body_done;
        bo.arg = &drv;
        if (dk_bench_run(&bo, &results) != 0) {
            rc = drv.status;
            if (rc == 0) { /* libdkbench's own: the baseline or the results folder */
                const char *opt = o.baseline ? "--baseline" : "--save-baseline";
                const char *name = o.baseline ? o.baseline : o.save_baseline;
                if (name != NULL)
                    cli_error("bench", "%s %s: %s", opt, name, dk_bench_last_error());
                else
                    cli_error("bench", "%s", dk_bench_last_error());
                rc = EXIT_SETUP;
            }
        }
        /* A run that failed leaves its command's --cleanup owed. */
        for (size_t k = 0; k < rep.ncmd; k++)
            cleanup_after(&bodies[k]);
    }
    bench_progress_clear();
    dk_group_close(ru.children);
    ru.children = NULL;
    if (rc == 0 && signals_got())
        rc = 128 + signals_got();
    released = s != NULL ? cli_release_sampler(s, release_error, sizeof release_error) : 0;
    signals_restore();

    bench_report ran = rep;
    ran.ncmd = drv.done;
    bool complete = rc == 0 && drv.done == rep.ncmd;
    bench_print_end(report, &ran, o.baseline ? results : NULL, complete);
    int wrc = bench_exports_finish(ex, 3, &ran);
    if (rc == 0)
        rc = wrc;
    if (released != 0) {
        cli_error("bench", "%s", release_error);
        if (rc == 0)
            rc = EXIT_SETUP;
    }
out:
    bench_exports_finish(ex, 3, NULL); /* what an early error left open */
    dk_sampler_close(s);
    if (ru.null_fd >= 0)
        close(ru.null_fd);
    for (size_t k = 0; k < rep.ncmd; k++) {
        bench_free_words(rep.cmd[k].argv);
        bench_free_words(rep.cmd[k].setup);
        bench_free_words(rep.cmd[k].prepare);
        bench_free_words(rep.cmd[k].cleanup);
        free(rep.cmd[k].runs);
    }
    free(rep.cmd);
    free(bodies);
    dk_bench_results_free(results);
    free_event_list(defaults, ndefaults);
    bench_options_free(&o);
    return rc;
}
