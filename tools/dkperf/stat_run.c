/*
 * stat_run.c - dkperf stat's runs of the command, and its signals.
 *
 * The child is forked and held before its exec until its counters are open
 * (tools/common/spawn.c), then released. On Linux the counters follow the
 * child and everything it starts (inherit) and begin at the exec; on a Mac
 * they are the child's instructions and cycles (proc_pid_rusage), or with
 * -a every CPU's counters. Signals that would stop dkperf are held from
 * before the counters are taken until they are given back: passed to the
 * child while it runs, acted on once nothing is held otherwise.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "clock.h"
#include "signals.h"
#include "spawn.h"
#include "stat.h"

static uint64_t tv_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

/* name without its modifiers ("cycles" of "cycles:u"), as the library
 * splits them: letters after the last ':' that is not inside a pmu/.../. */
static const char *unmodified(const char *name, char *buf, size_t size)
{
    const char *colon = strrchr(name, ':');
    const char *slash = strrchr(name, '/');
    if (colon == NULL || colon[1] == '\0' || (slash != NULL && colon < slash))
        return name;
    for (const char *m = colon + 1; *m != '\0'; m++)
        if (!((*m >= 'a' && *m <= 'z') || (*m >= 'A' && *m <= 'Z')))
            return name;
    snprintf(buf, size, "%.*s", (int)(colon - name), name);
    return buf;
}

/* Which metric role an event plays, by what the portable names resolve to;
 * modifiers do not change it ("cycles:u" still makes insn per cycle). */
static int role_of(dk_sampler *s, const char *asked_mod, const char *native_mod)
{
    char abuf[256], nbuf[256];
    const char *asked = unmodified(asked_mod, abuf, sizeof abuf);
    const char *native = unmodified(native_mod, nbuf, sizeof nbuf);
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
    signals_child_pid = 0; /* nothing is passed on to a pid that may be reused */
    spawn_abandon(c);
    dk_group_close(g);
}

int stat_run_once(dk_sampler *s, const stat_options *o, char **names, size_t n, report *rep,
                  run *out, int *exec_failed)
{
    *exec_failed = 0;
    /* No signal may fall between fork and signals_child_pid: they are held
     * until it is set; the command's signals are its own again (a Ctrl-C
     * before exec kills it). */
    sigset_t hold;
    signals_hold_set(&hold);
    spawn_options so = SPAWN_OPTIONS_INIT;
    so.hold = &hold;
    so.pid_out = &signals_child_pid;
    so.in_child = signals_restore;
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
        if (signals_got() != 0)
            return 128 + signals_got();
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

    rc = stat_rows_open(g, o, rep); /* -C, -A, --per-core, --per-level */
    if (rc != 0) {
        abandon(&c, g);
        return rc;
    }
    if (signals_got() != 0) { /* Ctrl-C during the setup, or between runs */
        abandon(&c, g);
        return 128 + signals_got();
    }
    uint64_t t0 = monotonic_ns();
    rc = spawn_release(&c);
    if (rc != 0) {
        abandon(&c, g);
        if (signals_got() != 0) /* EPIPE: the command was killed before exec */
            return 128 + signals_got();
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
    /* It has exited: a signal from now on has nobody to go to, and is kept
     * for dkperf's own exit status instead of going to a zombie. */
    signals_child_pid = 0;
    out->elapsed_ns = monotonic_ns() - t0;
    rc = dk_group_read(g, out->values, out->info);
    if (rc != 0)
        cli_error("stat", "reading the counters failed: %s", dk_last_error());
    else if (stat_rows_capture(g, o, rep, out) != 0)
        rc = -1;
    /* Stop explicitly: a stop that fails leaves counting on, machine-wide
     * on a Mac, and the user must hear of it. */
    if (dk_group_stop(g) != 0) {
        cli_error("stat", "the counters were not stopped: %s", dk_last_error());
        rc = -1;
    }

    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
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
