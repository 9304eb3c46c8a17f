/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_run.c - dkperf stat's runs of the command, and its signals.
 *
 * The child is forked and held before its exec until its counters are open
 * (tools/common/process/child.c), then released. On Linux the counters follow the
 * child and everything it starts (inherit) and begin at the exec; on a Mac
 * they are the child's instructions and cycles (proc_pid_rusage), or with
 * -a every CPU's counters. Signals that would stop dkperf are held from
 * before the counters are taken until they are given back: passed to the
 * child while it runs, acted on once nothing is held otherwise.
 *
 * With -I or --timeout, and when attached to running processes (-p, -t),
 * dkperf waits in a loop instead: the held signals and SIGCHLD are blocked
 * while it looks at the state (command exited, signal caught, ids gone,
 * deadline passed) and unblocked only inside pselect(), which a signal then
 * interrupts: none falls between the look and the wait. Deadlines are
 * multiples of the interval from the start on the monotonic clock, so the
 * intervals do not drift; a deadline missed entirely (a loaded machine) is
 * skipped, and the next interval is longer, never printed twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "signals.h"
#include "child.h"
#include "proc.h"
#include "stat.h"

static uint64_t tv_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

/* Which metric role each event plays: the event the group resolved it to,
 * against what the role's portable name resolves to, by pointer (modifiers
 * do not change it: "cycles:u" still makes insn per cycle). */
static void fill_roles(dk_sampler *s, const dk_group *g, size_t n, report *rep)
{
    static const struct {
        const char *portable;
        int role;
    } roles[] = {{"task-clock", ROLE_CLOCK},
                 {"cpu-clock", ROLE_CLOCK}, /* -a's clock: CPUs utilized too, as perf */
                 {"instructions", ROLE_INSTRUCTIONS},
                 {"cycles", ROLE_CYCLES},
                 {"branches", ROLE_BRANCHES},
                 {"branch-misses", ROLE_MISSES}};
    const dk_database_event *role_ev[sizeof roles / sizeof roles[0]];
    for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++)
        if (dk_sampler_resolve(s, roles[r].portable, &role_ev[r]) != 0)
            role_ev[r] = NULL;
    for (size_t i = 0; i < n; i++) {
        const dk_database_event *ev = dk_group_event(g, i);
        rep->role[i] = ROLE_NONE;
        for (size_t r = 0; ev != NULL && r < sizeof roles / sizeof roles[0]; r++)
            if (ev == role_ev[r]) {
                rep->role[i] = roles[r].role;
                break;
            }
    }
}

/* How often an attached process or thread is looked at: its exit is
 * noticed this late at most (nothing signals the end of a process that is
 * not dkperf's child). */
#define POLL_NS 50000000u

/* Something to wake pselect() when the command exits. */
static void on_child(int sig) { (void)sig; }

/* What the wait loop watches: the command, or the attached ids. */
typedef struct watch {
    const stat_options *o;
    report *rep;
    stat_interval iv;
    pid_t child;       /* the command, or 0 when attached */
    dk_group **groups; /* the command's one group, or one per attached id, or with
                          -a one for every CPU while the attached ids run */
    size_t ngroups;
    size_t nids;                     /* attached: how many ids (o->pids) */
    bool system;                     /* attached with -a: groups[0] counts every CPU */
    uint64_t (*last)[DK_MAX_EVENTS]; /* attached: each group's last reading */
    dk_reading (*last_info)[DK_MAX_EVENTS];
    bool *gone; /* attached: the id has ended */
    uint64_t t0;
    bool timed_out;
    bool refresh; /* read between intervals: an ended id's counts vanish (macOS) */
} watch;

/* The groups' counts, summed. A group whose process has ended and cannot
 * be read any more (macOS, once it is reaped) keeps its last reading; so
 * does any group when quiet (the attached ids' readings between intervals,
 * kept for that case: one may end between a look and a read). */
static int read_all(watch *w, uint64_t *values, dk_reading *info, bool quiet)
{
    size_t n = w->rep->n;
    memset(values, 0, n * sizeof *values);
    memset(info, 0, n * sizeof *info);
    for (size_t k = 0; k < w->ngroups; k++) {
        uint64_t v[DK_MAX_EVENTS];
        dk_reading r[DK_MAX_EVENTS];
        int rc = dk_group_read(w->groups[k], v, r);
        if (rc == 0 && (w->child != 0 || w->system) &&
            stat_rows_restrict(w->groups[k], w->o, w->rep, v) != 0)
            return -1; /* -C's CPUs: said why */
        if (rc != 0 && !quiet && (w->child != 0 || w->system || !w->gone[k])) {
            cli_error("stat", "reading the counters failed: %s", dk_last_error());
            return rc;
        }
        if (rc == 0 && w->last != NULL) {
            stat_rows_note_levels(w->rep, k, w->groups[k]);
            memcpy(w->last[k], v, n * sizeof *v);
            memcpy(w->last_info[k], r, n * sizeof *r);
        } else if (rc != 0 && w->last != NULL) {
            memcpy(v, w->last[k], n * sizeof *v);
            memcpy(r, w->last_info[k], n * sizeof *r);
        }
        for (size_t i = 0; i < n; i++) {
            values[i] += v[i];
            info[i].time_enabled += r[i].time_enabled;
            info[i].time_running += r[i].time_running;
            info[i].multiplexed |= r[i].multiplexed;
            info[i].counted |= r[i].counted;
        }
    }
    return 0;
}

static void add_note(report *rep, const char *what, int id, double seconds)
{
    size_t used = strlen(rep->notes);
    if (used + 2 >= sizeof rep->notes)
        return;
    if (used > 0)
        used += (size_t)snprintf(rep->notes + used, sizeof rep->notes - used, "; ");
    snprintf(rep->notes + used, sizeof rep->notes - used, "%s %d exited after %.3f s", what, id,
             seconds);
}

/*
 * Wait until the command exits (sent SIGTERM at --timeout), or, attached,
 * until a signal, --timeout or the end of every id; print each -I interval
 * as it ends. Returns 0, or what a failed read returned.
 */
static int wait_loop(watch *w)
{
    const stat_options *o = w->o;
    sigset_t block, old;
    signals_hold_set(&block);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct sigaction sa, saved_chld;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_child;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, &saved_chld);

    const uint64_t interval = (uint64_t)o->interval_ms * 1000000u;
    const uint64_t timeout = (uint64_t)o->timeout_ms * 1000000u;
    uint64_t next = interval > 0 ? interval : UINT64_MAX; /* since t0 */
    int rc = 0;
    for (;;) {
        uint64_t now = dk__monotonic_ns() - w->t0;
        bool done = false;
        if (w->child != 0) {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            if (waitid(P_PID, w->child, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != 0)
                done = true;
        } else {
            size_t left = 0;
            for (size_t k = 0; k < w->nids; k++) {
                if (!w->gone[k] && !proc_alive(o->pids[k], o->threads)) {
                    w->gone[k] = true;
                    add_note(w->rep, o->threads ? "thread" : "process", o->pids[k],
                             (double)now / 1e9);
                }
                left += !w->gone[k];
            }
            done = left == 0 || signals_got() != 0;
        }
        if (timeout > 0 && now >= timeout && !w->timed_out) {
            w->timed_out = true;
            if (w->child != 0)
                kill(w->child, SIGTERM); /* as perf stat --timeout does; its exit ends the wait */
        }
        if (w->timed_out && w->child == 0)
            done = true;
        if (done)
            break;
        if (now >= next) {
            uint64_t values[DK_MAX_EVENTS];
            dk_reading info[DK_MAX_EVENTS];
            rc = read_all(w, values, info, false);
            uint64_t read_at = dk__monotonic_ns(); /* the interval ends at its read */
            /* The rows' per-CPU counts: with -C, read_all has just read
             * them (stat_rows_restrict), so rows and totals are one read. */
            if (rc == 0 && stat_rows_per_interval(w->rep) && (w->child != 0 || w->system) &&
                o->cpus == NULL)
                rc = stat_rows_read(w->groups[0], w->rep) != 0 ? -1 : 0;
            if (rc != 0)
                break;
            stat_interval_print(w->rep->out, w->rep, o, &w->iv, read_at - w->t0, values, info);
            /* The output is gone (EPIPE: SIGPIPE is ignored): no interval can
             * be seen any more. Attached, nothing else ends the wait; a
             * command is waited for as without -I. */
            if (ferror(w->rep->out)) {
                if (w->child == 0)
                    break;
                next = UINT64_MAX;
                continue;
            }
            /* Missed whole intervals (a read as long as one): skip to the
             * next one ahead of the time after the read, so that the wait
             * below, where signals are let in, is always reached. */
            next += interval;
            uint64_t after = dk__monotonic_ns() - w->t0;
            if (next <= after)
                next = (after / interval + 1) * interval;
            continue;
        }
        if (w->refresh) { /* the counts so far, for an id that ends before the next look */
            uint64_t values[DK_MAX_EVENTS];
            dk_reading info[DK_MAX_EVENTS];
            (void)read_all(w, values, info, true);
        }
        uint64_t wake = next;
        if (timeout > 0 && !w->timed_out && timeout < wake)
            wake = timeout;
        if (w->child == 0 && now + POLL_NS < wake)
            wake = now + POLL_NS;
        struct timespec ts, *tp = NULL;
        if (wake != UINT64_MAX) {
            uint64_t d = wake - now;
            ts.tv_sec = (time_t)(d / 1000000000u);
            ts.tv_nsec = (long)(d % 1000000000u);
            tp = &ts;
        }
        /* Signals are let in only here; EINTR is the wake-up. */
        (void)pselect(0, NULL, NULL, NULL, tp, &old);
    }
    sigaction(SIGCHLD, &saved_chld, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Gives up on a command that was never let go. */
static void abandon(child_process *c, dk_group *g)
{
    signals_child_pid = 0; /* nothing is passed on to a pid that may be reused */
    child_abandon(c);
    dk_group_close(g);
}

static void fill_events(dk_sampler *s, dk_group *g, char **names, size_t n, report *rep);

int stat_run_once(dk_sampler *s, const stat_options *o, char **names, size_t n, report *rep,
                  run *out, int *exec_failed)
{
    *exec_failed = 0;
    /* No signal may fall between fork and signals_child_pid: they are held
     * until it is set; the command's signals are its own again (a Ctrl-C
     * before exec kills it). */
    child_options so = CHILD_OPTIONS_INIT;
    child_process c;
    int rc = signals_child_prepare(&c, o->cmd, &so);
    if (rc != 0) {
        cli_error("stat", "%s: %s%s", c.failed, strerror(-rc),
                  rc == -EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
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
        if (signals_got() != 0)
            return 128 + signals_got();
        cli_error("stat", "%s", why);
        return EXIT_SETUP;
    }
    if (rep->nruns == 0) {
        snprintf(rep->scope, sizeof rep->scope, "%s", dk_group_scope(g));
        fill_events(s, g, names, n, rep);
    }

    rc = stat_rows_open(g, o, rep); /* -C, -A, --per-core, --per-level */
    if (rc != 0) {
        abandon(&c, g);
        return rc;
    }
    if (signals_got() != 0) { /* Ctrl-C during the setup, or between runs */
        abandon(&c, g);
        return 128 + signals_got();
    }
    uint64_t t0 = dk__monotonic_ns();
    rc = child_release(&c);
    if (rc != 0) {
        abandon(&c, g);
        if (signals_got() != 0) /* EPIPE: the command was killed before exec */
            return 128 + signals_got();
        cli_error("stat", "cannot start the command: %s", strerror(-rc));
        return EXIT_SETUP;
    }
    int e = 0;
    child_exec_result(&c, &e);
    if (e != 0) {
        cli_error("stat", "cannot run '%s': %s", o->cmd[0], strerror(e));
        *exec_failed = child_exec_status(e);
    }

    /* Wait without reaping: a Mac can only read an unreaped process's totals. */
    watch w;
    memset(&w, 0, sizeof w);
    w.o = o;
    w.rep = rep;
    w.child = pid;
    w.groups = &g;
    w.ngroups = 1;
    w.t0 = t0;
    int looped = 0;
    if (o->interval_ms > 0 || o->timeout_ms > 0)
        looped = wait_loop(&w);
    child_wait_exit(&c, NULL); /* at once after the loop, but the loop may have failed */
    /* It has exited: a signal from now on has nobody to go to, and is kept
     * for dkperf's own exit status instead of going to a zombie. */
    signals_child_pid = 0;
    rc = looped != 0 ? looped : dk_group_read(g, out->values, out->info);
    /* Stamped just after the read, as each interval's: the last interval's
     * span then covers what its counts cover. */
    out->elapsed_ns = dk__monotonic_ns() - t0;
    if (rc != 0 && looped == 0)
        cli_error("stat", "reading the counters failed: %s", dk_last_error());
    else if (rc == 0 && stat_rows_capture(g, o, rep, out) != 0)
        rc = -1;
    /* The last, partial interval: from the same reading as the total. */
    if (rc == 0 && o->interval_ms > 0)
        stat_interval_print(rep->out, rep, o, &w.iv, out->elapsed_ns, out->values, out->info);
    /* Stop explicitly: a stop that fails leaves counting on, machine-wide
     * on a Mac, and the user must hear of it. */
    if (dk_group_stop(g) != 0) {
        cli_error("stat", "the counters were not stopped: %s", dk_last_error());
        rc = -1;
    }

    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    child_reap(&c, &status, &ru);
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

/* The facts of each event, from the first group (every group has the same
 * events on the same backend). */
static void fill_events(dk_sampler *s, dk_group *g, char **names, size_t n, report *rep)
{
    /* The library says what a process cannot count; which option counts
     * it on every CPU instead is the tool's to say. */
    bool any_unsupported = false;
    for (size_t i = 0; i < n; i++)
        any_unsupported |= !dk_group_supported(g, i);
    dk_backend_caps caps = {.size = sizeof caps};
    bool system_instead = any_unsupported && dk_group_cpu_count(g) == 0 &&
                          dk_sampler_caps(s, &caps) == 0 && !caps.process_events &&
                          caps.system_wide;
    for (size_t i = 0; i < n; i++) {
        snprintf(rep->native[i], sizeof rep->native[i], "%s", dk_group_event_name(g, i));
        rep->unit[i] = dk_group_event_unit(g, i);
        rep->supported[i] = dk_group_supported(g, i);
        /* ... for an event this machine counts, that the scope does not. */
        const dk_database_event *ev = NULL;
        bool hint = system_instead && !rep->supported[i] &&
                    dk_sampler_resolve(s, names[i], &ev) == 0 &&
                    (ev = cli_event_probed(s, ev)) != NULL && ev->supported;
        snprintf(rep->why[i], sizeof rep->why[i], "%s%s", dk_group_why(g, i),
                 hint ? ": dkperf stat -a, or -a -p PID for a running process" : "");
    }
    fill_roles(s, g, n, rep);
}

int stat_run_attach(dk_sampler *s, const stat_options *o, char **names, size_t n, report *rep,
                    run *out)
{
    const char *opt = o->threads ? "-t" : "-p", *what = o->threads ? "thread" : "process";
    size_t m = o->npids;
    for (size_t k = 0; k < m; k++)
        if (kill((pid_t)o->pids[k], 0) != 0 && errno == ESRCH) {
            cli_error("stat", "%s %d: there is no %s %d", opt, o->pids[k], what, o->pids[k]);
            return EXIT_SETUP;
        }
    watch w;
    memset(&w, 0, sizeof w);
    w.o = o;
    w.rep = rep;
    w.nids = m;
    w.system = o->all_cpus;
    w.ngroups = w.system ? 1 : m;
    /* Every CPU's counts stay readable, and where the backend says so a
     * task's after it exits. */
    dk_backend_caps caps = {.size = sizeof caps};
    (void)dk_sampler_caps(s, &caps);
    w.refresh = !w.system && !caps.counts_outlive;
    w.groups = calloc(m, sizeof *w.groups);
    w.last = calloc(m, sizeof *w.last);
    w.last_info = calloc(m, sizeof *w.last_info);
    w.gone = calloc(m, sizeof *w.gone);
    int rc = 0;
    if (w.groups == NULL || w.last == NULL || w.last_info == NULL || w.gone == NULL) {
        cli_error("stat", "out of memory while attaching to %zu %ss", m, what);
        rc = EXIT_SETUP;
        goto out;
    }
    for (size_t k = 0; k < w.ngroups && rc == 0; k++) {
        int r = dk_group_open(s,
                              w.system     ? DK_SCOPE_SYSTEM
                              : o->threads ? DK_SCOPE_THREAD
                                           : DK_SCOPE_PROCESS,
                              w.system ? 0 : o->pids[k], (const char *const *)names, n,
                              DK_GROUP_PARTIAL, &w.groups[k]);
        if (r != 0) {
            if (signals_got() != 0)
                rc = 128 + signals_got(); /* Ctrl-C during the setup: end quietly */
            else if (w.system) {
                cli_error("stat", "-a: %s", dk_last_error());
                rc = EXIT_SETUP;
            } else {
                cli_error("stat", "%s %d: %s", opt, o->pids[k], dk_last_error());
                rc = EXIT_SETUP;
            }
        }
    }
    if (rc != 0)
        goto out;
    fill_events(s, w.groups[0], names, n, rep);
    rep->attached = true;
    /* -C, -A, --per-core, --per-level; without -a a split by level */
    rc = w.system ? stat_rows_open(w.groups[0], o, rep)
                  : stat_rows_open_attached(w.groups, w.ngroups, o, rep);
    if (rc != 0)
        goto out;
    /* Which scope was counted, as the backend says it (one, or the first and how many). */
    if (w.system)
        snprintf(rep->scope, sizeof rep->scope, "%s, while %s %d%s ran",
                 dk_group_scope(w.groups[0]), m == 1 ? "process" : "processes", o->pids[0],
                 m == 1 ? "" : " and the others given");
    else if (m == 1)
        snprintf(rep->scope, sizeof rep->scope, "%s", dk_group_scope(w.groups[0]));
    else
        snprintf(rep->scope, sizeof rep->scope, "%zu %s, each as %s", m,
                 o->threads ? "threads" : "processes", dk_group_scope(w.groups[0]));
    for (size_t k = 0; k < w.ngroups && rc == 0; k++)
        if (dk_group_start(w.groups[k]) != 0) {
            cli_error("stat", "%s %d: starting the counters failed: %s", opt, o->pids[k],
                      dk_last_error());
            rc = EXIT_SETUP;
        }
    if (rc != 0)
        goto out;
    w.t0 = dk__monotonic_ns();
    rc = wait_loop(&w);
    if (rc == 0)
        rc = read_all(&w, out->values, out->info, false);
    out->elapsed_ns = dk__monotonic_ns() - w.t0; /* after the read, as each interval's */
    if (rc == 0 && w.system && stat_rows_capture(w.groups[0], o, rep, out) != 0)
        rc = -1;
    if (rc == 0 && !w.system)
        stat_rows_capture_attached(rep);
    if (rc == 0 && o->interval_ms > 0)
        stat_interval_print(rep->out, rep, o, &w.iv, out->elapsed_ns, out->values, out->info);
    for (size_t k = 0; k < w.ngroups; k++)
        if (dk_group_stop(w.groups[k]) != 0 && (w.system || !w.gone[k])) {
            cli_error("stat", "the counters were not stopped: %s", dk_last_error());
            rc = -1;
        }
    if (rc != 0)
        rc = EXIT_SETUP;
out:
    for (size_t k = 0; w.groups != NULL && k < w.ngroups; k++)
        dk_group_close(w.groups[k]);
    free(w.groups);
    free(w.last);
    free(w.last_info);
    free(w.gone);
    return rc;
}
