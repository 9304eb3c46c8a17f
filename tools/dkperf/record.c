/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * record.c - dkperf record: run a command (or watch a process, or every
 * CPU) with sampling armed from its exec, drain the samples while it runs
 * and append them to the recording (tools/common/dkrec/dkrec.c), flushed after
 * every drain so that a killed dkperf leaves a readable file.
 *
 * Signals are held as dkperf stat holds them (signals.c): Ctrl-C goes to
 * the command, and dkperf ends the file, gives the sampling back and exits
 * as the command did.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dkrec.h"
#include "imageid.h"
#include "record.h"
#include "signals.h"
#include "child.h"
#include "proc.h"

/* Identities of the images seen, by path: each file is read once. */
typedef struct image_id {
    char *path;
    unsigned kind;
    size_t len;
    uint8_t id[DKREC_ID_MAX];
    struct image_id *next;
} image_id;

typedef struct recorder {
    dkrec_writer *w;
    image_id *ids;
    int error; /* the first write error (negative errno) */
    /* Processes named so far: a process the target forks is not named by
     * an exec, so its name is read when its first sample comes. */
    int32_t *named;
    size_t nnamed, capnamed;
    int32_t last_pid;
} recorder;

static void synthesize_comm(recorder *r, int pid);

/* The name of a running process, from /proc (Linux); false elsewhere. */
static bool read_comm(int pid, char *comm, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    bool ok = fgets(comm, (int)size, f) != NULL;
    fclose(f);
    if (ok)
        comm[strcspn(comm, "\n")] = '\0';
    return ok;
}

/* Notes that pid has a name; returns whether it had one already. */
static bool named(recorder *r, int32_t pid)
{
    if (pid == r->last_pid && r->nnamed > 0)
        return true;
    for (size_t i = 0; i < r->nnamed; i++)
        if (r->named[i] == pid) {
            r->last_pid = pid;
            return true;
        }
    if (r->nnamed == r->capnamed) {
        size_t cap = r->capnamed ? r->capnamed * 2 : 16;
        int32_t *p = realloc(r->named, cap * sizeof *p);
        if (p == NULL)
            return true; /* the name is a convenience: do without */
        r->named = p;
        r->capnamed = cap;
    }
    r->named[r->nnamed++] = pid;
    r->last_pid = pid;
    return false;
}

/* Forgets pid's name at its process's exit. */
static void unname(recorder *r, int32_t pid)
{
    for (size_t i = 0; i < r->nnamed; i++)
        if (r->named[i] == pid) {
            r->named[i] = r->named[--r->nnamed];
            break;
        }
    r->last_pid = -1;
}

static const image_id *identity(recorder *r, const char *path)
{
    for (image_id *i = r->ids; i != NULL; i = i->next)
        if (strcmp(i->path, path) == 0)
            return i;
    image_id *i = calloc(1, sizeof *i);
    if (i == NULL || (i->path = strdup(path)) == NULL) {
        free(i);
        return NULL;
    }
    i->len = imageid_read(path, &i->kind, i->id, sizeof i->id);
    i->next = r->ids;
    r->ids = i;
    return i;
}

static int on_record(void *ctx, const dk_sample *s)
{
    recorder *r = ctx;
    int rc = 0;
    switch (s->kind) {
    case DK_SAMPLE_KIND_SAMPLE: {
        if (!named(r, s->pid))
            synthesize_comm(r, s->pid);
        dkrec_sample d;
        memset(&d, 0, sizeof d);
        d.event = (uint32_t)s->event;
        d.pid = s->pid;
        d.tid = s->tid;
        d.cpu = s->cpu;
        d.time_ns = s->time_ns;
        d.period = s->period;
        d.flags = (s->user ? 0 : DKREC_SAMPLE_KERNEL) |
                  (s->truncated ? DKREC_SAMPLE_TRUNCATED : 0) |
                  (s->off_cpu ? DKREC_SAMPLE_OFF_CPU : 0);
        uint64_t pc = s->ip;
        d.kernel_frames = s->kernel_frames;
        d.n_kernel_frames = s->user ? 0 : s->n_kernel_frames;
        if (s->n_frames > 0) {
            d.frames = s->frames;
            d.n_frames = s->n_frames;
        } else if (s->user) {
            d.frames = &pc;
            d.n_frames = 1;
        }
        rc = dkrec_write_sample(r->w, &d);
        break;
    }
    case DK_SAMPLE_KIND_MAP: {
        const char *path = s->map_path != NULL ? s->map_path : "";
        const image_id *id = identity(r, path);
        rc = id == NULL ? -ENOMEM
                        : dkrec_write_map(r->w, s->pid, s->map_start, s->map_len, s->map_pgoff,
                                          path, id->kind, id->id, id->len);
        break;
    }
    case DK_SAMPLE_KIND_COMM:
        (void)named(r, s->pid);
        /* An exec's name ends the old image: the report drops its maps. */
        rc = (s->exec ? dkrec_write_exec : dkrec_write_comm)(r->w, s->pid, s->tid,
                                                             s->comm != NULL ? s->comm : "");
        break;
    case DK_SAMPLE_KIND_EXIT:
        rc = dkrec_write_exit(r->w, s->pid, s->tid);
        if (s->tid == (uint64_t)(uint32_t)s->pid)
            unname(r, s->pid); /* a process that takes its pid later is named anew */
        break;
    }
    if (rc != 0 && r->error == 0)
        r->error = rc;
    return 0; /* a write error is reported once the drain is over */
}

#ifdef __linux__
/*
 * The executable maps of a process as they stand, from /proc/PID/maps: for
 * the processes running before a sampling of every CPU began (-a), whose
 * maps the kernel reports no more.
 */
static void synthesize_maps(recorder *r, int pid)
{
    char line[4096 + 256];
    FILE *f = proc_open_maps(pid);
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long start, end, off;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &name_at) <
                4 ||
            strchr(perms, 'x') == NULL || name_at <= 0)
            continue;
        char *name = line + name_at;
        name[strcspn(name, "\n")] = '\0';
        if (name[0] == '\0')
            continue;
        const image_id *id = identity(r, name);
        int rc = id == NULL ? -ENOMEM
                            : dkrec_write_map(r->w, pid, start, end - start, off, name, id->kind,
                                              id->id, id->len);
        if (rc != 0 && r->error == 0)
            r->error = rc;
    }
    fclose(f);
}

/* The name of a process running before the sampling began, or forked by
 * the target. */
static void synthesize_comm(recorder *r, int pid)
{
    (void)named(r, pid);
    char comm[64];
    if (!read_comm(pid, comm, sizeof comm))
        return;
    int rc = dkrec_write_comm(r->w, (int32_t)pid, (uint64_t)pid, comm);
    if (rc != 0 && r->error == 0)
        r->error = rc;
}

/*
 * --switch-output: the maps each next file starts with are those of the
 * processes sampled so far as /proc gives them now (as perf synthesizes
 * them again), not every map recorded since the start: the writer forgets
 * a live process's recorded maps before the switch, and they are read
 * again after it. A child whose parent has exited keeps its images so,
 * and a process that maps and unmaps keeps only what it maps now.
 */
static void maps_now(recorder *r, bool before)
{
    for (size_t i = 0; i < r->nnamed; i++) {
        int pid = (int)r->named[i];
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/maps", pid);
        if (access(path, R_OK) != 0)
            continue; /* gone: its exit dropped what was kept of it */
        if (before)
            dkrec_writer_forget_maps(r->w, pid);
        else
            synthesize_maps(r, pid);
    }
}

/* The name and maps of every process running now, for -a: the kernel
 * reports only what starts or maps afterwards. */
static void synthesize_all(recorder *r)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || pid > 0x7fffffffL)
            continue;
        synthesize_comm(r, (int)pid);
        synthesize_maps(r, (int)pid);
    }
    closedir(d);
}

#else
/* No /proc elsewhere: what a backend reports of running processes is all. */
static void synthesize_comm(recorder *r, int pid)
{
    (void)r;
    (void)pid;
}

static void synthesize_all(recorder *r) { (void)r; }

/* Elsewhere the backend reports each process's maps: those kept stay. */
static void maps_now(recorder *r, bool before)
{
    (void)r;
    (void)before;
}
#endif

/* Whether pid has exited: gone, or a zombie nobody has reaped yet (not
 * while a thread of it runs on after its first has ended). */
static bool process_gone(long pid) { return !proc_alive((int)pid, false); }

static void write_meta(recorder *r, const record_options *o, dk_sampler *s,
                       const dk_backend_caps *caps)
{
    char buf[4096];
    size_t k = 0;
    buf[0] = '\0';
    for (char **a = o->cmd; a != NULL && *a != NULL && k < sizeof buf - 2; a++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", k ? " " : "", *a);
    if (o->cmd == NULL)
        snprintf(buf, sizeof buf, o->pid ? "pid %ld" : "every CPU", o->pid);
    dkrec_write_meta(r->w, "command", buf);
    /* The name a process of the target without a name of its own takes
     * (a task it cloned that exited before it could be asked). */
    if (o->cmd != NULL) {
        const char *base = strrchr(o->cmd[0], '/');
        dkrec_write_meta(r->w, "comm", base != NULL ? base + 1 : o->cmd[0]);
    } else if (o->pid && read_comm((int)o->pid, buf, sizeof buf)) {
        dkrec_write_meta(r->w, "comm", buf);
    }
    struct utsname u;
    if (uname(&u) == 0) {
        dkrec_write_meta(r->w, "host", u.nodename);
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        dkrec_write_meta(r->w, "os", buf);
    }
    dkrec_write_meta(r->w, "backend", dk_sampler_backend(s));
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) != NULL && strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0)
        dkrec_write_meta(r->w, "time", buf);
    dkrec_write_meta(r->w, "call-graph", o->callgraph ? "fp" : "none");
    if (o->all_cpus) /* the command's name is then not every process's */
        dkrec_write_meta(r->w, "all-cpus", "1");
    /* Why no sample and no frame is in the kernel, for report to say. */
    if (caps->user_only) {
        snprintf(buf, sizeof buf, "user mode only: %s",
                 caps->privileges != NULL ? caps->privileges : "as the sampler was opened");
        dkrec_write_meta(r->w, "kernel", buf);
    }
    if (o->off_cpu)
        dkrec_write_meta(r->w, "off-cpu", "1");
}

/* The default event: cycles where it is counted here, else cpu-clock. The
 * line that says which is left in *notice, printed once the sampling is
 * set up: a mistake (an unwritable -o, a -p that names no process) is
 * said alone. */
/* The backend's event to sample when none is named, said on stderr. */
static const char *default_event(const dk_backend_caps *caps, char *buf, size_t size,
                                 const char **notice)
{
    if (strcmp(caps->sample_event, "cpu-clock") == 0)
        snprintf(buf, size,
                 "dkperf record: sampling cpu-clock: this machine does not count "
                 "cycles (no hardware PMU is visible)\n");
    else
        snprintf(buf, size, "dkperf record: sampling %s (the default event)\n", caps->sample_event);
    *notice = buf;
    return caps->sample_event;
}

static const char *fmt_size(uint64_t b, char *buf, size_t size)
{
    if (b < 10 * 1024)
        snprintf(buf, size, "%" PRIu64 " bytes", b);
    else if (b < 10 * 1024 * 1024)
        snprintf(buf, size, "%.1f KB", (double)b / 1024.0);
    else
        snprintf(buf, size, "%.1f MB", (double)b / (1024.0 * 1024.0));
    return buf;
}

/* Whether the process being recorded has ended (without reaping it). */
static bool target_done(const record_options *o, const child_process *c)
{
    if (c->pid > 0) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        return waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0;
    }
    if (o->pid)
        return process_gone(o->pid);
    return false;
}

/* SIGCHLD interrupts the wait for samples, so that the command's exit is
 * seen at once rather than at the wait's timeout. */
static void child_exited(int sig) { (void)sig; }

/* Fork the command, stopped before its exec (signals_child_prepare); says
 * why on failure. */
static int prepare_child(child_process *c, char **cmd)
{
    child_options sp = CHILD_OPTIONS_INIT;
    int rc = signals_child_prepare(c, cmd, &sp);
    if (rc != 0)
        cli_error("record", "%s: %s", c->failed, strerror(-rc));
    return rc;
}

int cmd_record(int argc, char **argv)
{
    record_options o;
    int rc = record_parse_args(argc, argv, &o);
    if (rc != 0) {
        record_options_free(&o);
        return rc < 0 ? 0 : rc;
    }
    recorder r;
    memset(&r, 0, sizeof r);
    dk_sampling_event evs[DK_MAX_EVENTS];
    size_t n = o.nevents ? o.nevents : 1;
    int fd = -1, status = 0, exit_rc = 0;
    bool file_made = false, ran = false;
    char *kept = NULL; /* FILE.old, when an earlier recording was moved there */
    dk_sampling *smp = NULL;
    child_process c = {-1, -1, -1, NULL};
    record_switch sw;
    memset(&sw, 0, sizeof sw);

    /* A process to watch that is not there is the whole answer. */
    if (o.pid && process_gone(o.pid)) {
        cli_error("record", "-p %ld: %s", o.pid,
                  kill((pid_t)o.pid, 0) != 0 && errno == ESRCH ? "there is no such process"
                                                               : "the process has exited");
        record_options_free(&o);
        return EXIT_SETUP;
    }
    const char *notice = NULL;
    signals_catch();
    record_switch_signal(&o); /* at once: an early SIGUSR2 asks for a switch */
    struct sigaction chld, saved_chld;
    memset(&chld, 0, sizeof chld);
    chld.sa_handler = child_exited; /* no SA_RESTART: the wait returns */
    sigemptyset(&chld.sa_mask);
    sigaction(SIGCHLD, &chld, &saved_chld);
    dk_sampler *s = cli_open_sampler("record", o.backend);
    if (s == NULL) {
        exit_rc = EXIT_SETUP;
        goto out;
    }
    /* An event given no rate of its own (no EV/N, EV@HZ, -c or -F) samples
     * at the backend's default, said once the sampling is open. */
    dk_backend_caps caps = {.size = sizeof caps};
    (void)dk_sampler_caps(s, &caps);
    uint64_t freq = o.freq ? (uint64_t)o.freq : 0;
    char default_notice[256];
    for (size_t i = 0; i < n; i++) {
        const char *name =
            o.nevents ? o.events[i].name
                      : default_event(&caps, default_notice, sizeof default_notice, &notice);
        /* An event no database knows is a mistake: refuse it before running
         * anything. "timer" is no event of a database but the library's
         * time-based sampling, where the backend has one. */
        bool timer = strcmp(name, "timer") == 0;
        bool unavailable = false;
        int r2 = timer ? 0 : cli_check_event("record", s, name, &unavailable);
        if (r2 == 0 && unavailable) {
            /* Known but not here: nothing to sample it with. */
            cli_error("record", "event '%.64s': %s", name, dk_last_error());
            r2 = EXIT_SETUP;
        }
        if (r2 != 0) {
            exit_rc = r2;
            goto out;
        }
        evs[i].name = name;
        evs[i].period = o.nevents && o.events[i].period ? o.events[i].period
                        : o.nevents && o.events[i].freq ? 0
                                                        : (uint64_t)o.period;
        evs[i].freq = evs[i].period ? 0 : o.nevents && o.events[i].freq ? o.events[i].freq : freq;
    }

    if ((exit_rc = record_switch_check(&o)) != 0)
        goto out;
    /* An earlier recording is kept as FILE.old, as perf keeps perf.data.old
     * (any name; an empty file or one that is not a regular file, such as
     * /dev/null, is not a recording). */
    struct stat old_st;
    if (stat(o.output, &old_st) == 0 && S_ISREG(old_st.st_mode) && old_st.st_size > 0) {
        size_t len = strlen(o.output) + sizeof ".old";
        kept = malloc(len);
        if (kept == NULL) {
            cli_error("record", "out of memory");
            exit_rc = EXIT_SETUP;
            goto out;
        }
        snprintf(kept, len, "%s.old", o.output);
        if (rename(o.output, kept) != 0) {
            cli_error("record", "-o %s: cannot keep the earlier recording as %s: %s", o.output,
                      kept, strerror(errno));
            free(kept);
            kept = NULL;
            exit_rc = EXIT_SETUP;
            goto out;
        }
    }

    /* The file, before anything runs: a path that cannot be written is
     * said at once. Closed on exec: it is dkperf's, not the command's. */
    fd = open(o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        cli_error("record", "-o %s: %s", o.output, strerror(errno));
        exit_rc = EXIT_SETUP;
        goto out;
    }
    file_made = true;
    rc = dkrec_writer_open(fd, &r.w);
    if (rc != 0) {
        cli_error("record", "-o %s: cannot write: %s", o.output, strerror(-rc));
        exit_rc = EXIT_SETUP;
        goto out;
    }
    if (o.switch_mode != SWITCH_NONE) {
        dkrec_writer_keep(r.w); /* what each next file starts with */
        record_switch_init(&sw, &o, r.w);
    }
    write_meta(&r, &o, s, &caps);

    dk_sampling_options so = DK_SAMPLING_OPTIONS_INIT;
    so.record = DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_CPU | DK_SAMPLE_IP | DK_SAMPLE_PERIOD |
                (o.callgraph ? DK_SAMPLE_CALLCHAIN | DK_SAMPLE_KERNEL_CALLCHAIN : 0u);
    if (o.cmd != NULL && !o.all_cpus) {
        rc = prepare_child(&c, o.cmd);
        if (rc != 0) {
            exit_rc = EXIT_SETUP;
            goto out;
        }
        so.scope = DK_SCOPE_PROCESS;
        so.pid = (int)c.pid;
        so.flags = DK_SAMPLING_ENABLE_ON_EXEC | DK_SAMPLING_INHERIT;
    } else if (o.pid) {
        so.scope = DK_SCOPE_PROCESS;
        so.pid = (int)o.pid;
        so.flags = DK_SAMPLING_INHERIT;
    } else {
        so.scope = DK_SCOPE_SYSTEM;
    }
    if (o.off_cpu)
        so.flags |= DK_SAMPLING_OFF_CPU;
    rc = dk_sampling_open(s, evs, n, &so, &smp);
    if (rc != 0) {
        char why[2048];
        snprintf(why, sizeof why, "%s", dk_last_error());
        if (signals_got() != 0) { /* interrupted during the setup: end quietly */
            exit_rc = 128 + signals_got();
            goto out;
        }
        cli_error("record", "%s", why);
        exit_rc = EXIT_SETUP;
        goto out;
    }
    char rate_notice[512] = "";
    for (size_t i = 0; i < n; i++) {
        uint64_t period = 0, hz = 0;
        (void)dk_sampling_event_rate(smp, i, &period, &hz);
        /* A backend without a frequency mode took its period for an event
         * given no rate: say so, and how to set one. */
        if (evs[i].period == 0 && evs[i].freq == 0 && !caps.frequency && period != 0 &&
            evs[i].name != NULL && strcmp(evs[i].name, "timer") != 0)
            snprintf(rate_notice, sizeof rate_notice,
                     "dkperf record: sampling %s%s, one sample every %" PRIu64 " events (the %s "
                     "backend has no frequency mode; EV/N or -c sets the period)\n",
                     evs[i].name, o.nevents ? "" : " (the default event)", period,
                     dk_sampler_backend(s));
        /* The rate it samples at: the backend's when none was asked for,
         * the one asked for when the backend took it (a timer at HZ runs
         * every 10^9/HZ ns), else the one the backend took instead (a kperf
         * timer below its minimum period). */
        bool asked = evs[i].period != 0 || evs[i].freq != 0;
        bool taken = (period == evs[i].period && hz == evs[i].freq) ||
                     (hz == 0 && evs[i].freq != 0 && period == 1000000000u / evs[i].freq);
        bool keep = (asked && taken) || (period == 0 && hz == 0);
        dkrec_write_event(r.w, (uint32_t)i, dk_sampling_event_name(smp, i),
                          keep ? evs[i].period : period, keep ? evs[i].freq : hz);
    }
    if (rate_notice[0] != '\0')
        notice = rate_notice;
    if (notice != NULL)
        fputs(notice, stderr);
    /* Call chains asked for, but the kernel's cannot come: say why once. */
    if (o.callgraph && caps.user_only)
        fprintf(stderr,
                "dkperf record: note: no kernel call chains: time in the kernel is not "
                "sampled (%s)\n",
                caps.privileges != NULL ? caps.privileges : "user mode only");
    if (o.pid) /* its maps come from the library, read at the first start */
        synthesize_comm(&r, (int)o.pid);
    else if (o.all_cpus)
        synthesize_all(&r);
    if (o.switch_mode != SWITCH_NONE) { /* SIZE: the first file's own bytes too */
        if (r.error == 0)
            r.error = dkrec_flush(r.w);
        sw.base_bytes = dkrec_bytes(r.w);
    }
    if (so.scope != DK_SCOPE_PROCESS || o.pid) {
        rc = dk_sampling_start(smp);
        if (rc != 0) {
            cli_error("record", "cannot start sampling: %s", dk_last_error());
            exit_rc = EXIT_SETUP;
            goto out;
        }
    }
    if (o.cmd != NULL && o.all_cpus) {
        /* Every CPU while the command runs: started after the sampling. */
        rc = prepare_child(&c, o.cmd);
        if (rc != 0) {
            exit_rc = EXIT_SETUP;
            goto out;
        }
    }
    if (c.pid > 0) {
        if (signals_got() != 0) {
            exit_rc = 128 + signals_got();
            goto out;
        }
        rc = child_release(&c);
        if (rc != 0) {
            if (signals_got() == 0)
                cli_error("record", "cannot start the command: %s", strerror(-rc));
            exit_rc = signals_got() ? 128 + signals_got() : EXIT_SETUP;
            goto out;
        }
        int e = 0;
        child_exec_result(&c, &e);
        if (e != 0) {
            cli_error("record", "cannot run '%s': %s", o.cmd[0], strerror(e));
            exit_rc = child_exec_status(e);
            goto out;
        }
        ran = true; /* its maps come from the kernel: sampling was armed at its exec */
    } else {
        ran = true;
    }

    /* Drain while it runs; a chunk is written after every drain that
     * found something. The wait ends early when the target exits (the
     * kernel hangs its events up); its timeout bounds how late an exit
     * that raced the wait is seen. */
    dk_sampling_stats last;
    memset(&last, 0, sizeof last);
    for (;;) {
        bool done = target_done(&o, &c);
        if (!done && c.pid <= 0 && signals_got() != 0)
            done = true; /* -p or -a alone: Ctrl-C ends the recording */
        if (!done)
            dk_sampling_wait(smp, 100);
        int d = dk_sampling_drain(smp, on_record, &r);
        if (d < 0) {
            cli_error("record", "reading the samples failed: %s", dk_last_error());
            exit_rc = EXIT_SETUP;
            break;
        }
        /* The kernel's losses as they come, written only when they grow. */
        dk_sampling_stats st;
        if (dk_sampling_stats_get(smp, &st) == 0 &&
            (st.lost != last.lost || st.throttled != last.throttled ||
             st.unthrottled != last.unthrottled)) {
            dkrec_write_stats(r.w, st.lost, st.throttled, st.unthrottled);
            last = st;
        }
        if (r.error == 0)
            r.error = dkrec_flush(r.w);
        if (r.error != 0 || done)
            break;
        /* Between two drains: every sample so far is in the file ending. */
        if (o.switch_mode != SWITCH_NONE && record_switch_due(&sw, r.w)) {
            maps_now(&r, true);
            r.error = record_switch_now(&sw, r.w, &fd);
            if (r.error != 0)
                break;
            maps_now(&r, false);
            /* SIZE counts the file's own bytes, past what it starts with. */
            if (r.error == 0)
                r.error = dkrec_flush(r.w);
            sw.base_bytes = dkrec_bytes(r.w);
        }
    }
    signals_child_pid = 0; /* it has exited: signals from now on are dkperf's */
    if (dk_sampling_stop(smp) != 0) {
        cli_error("record", "the sampling was not stopped: %s", dk_last_error());
        exit_rc = EXIT_SETUP; /* something may be left armed: not a success */
    }
    dk_sampling_drain(smp, on_record, &r);
    dk_sampling_stats st;
    memset(&st, 0, sizeof st);
    dk_sampling_stats_get(smp, &st);
    if (r.error == 0)
        dkrec_write_stats(r.w, st.lost, st.throttled, st.unthrottled);
    if (r.error == 0)
        r.error = dkrec_finish(r.w);
    /* The last file ends as the others did. */
    if (r.error == 0 && o.switch_mode != SWITCH_NONE) {
        if (close(fd) != 0)
            r.error = -errno;
        fd = -1;
        if (r.error == 0)
            r.error = record_switch_last(&sw, r.w);
    }
    /* Losses are said with what they count and why, never only counted. */
    if (st.lost > 0)
        cli_error("record", "note: %llu lost: %s", (unsigned long long)st.lost,
                  caps.lost_means != NULL ? caps.lost_means : "what the kernel dropped");
    if (sw.failed && exit_rc == 0)
        exit_rc = EXIT_SETUP; /* a file the switch could not make or name: said */
    if (r.error != 0) {
        cli_error("record", "-o %s: cannot write the recording: %s", o.output, strerror(-r.error));
        if (exit_rc == 0)
            exit_rc = EXIT_SETUP;
    } else if (o.switch_mode != SWITCH_NONE) {
        char b1[32], b2[32], b3[32];
        fprintf(stderr,
                "[ dkperf record: %s samples (%s lost, %s throttled) written to %zu files "
                "%s.<time>%s ]\n",
                fmt_count(sw.samples, b1, sizeof b1), fmt_count(st.lost, b2, sizeof b2),
                fmt_count(st.throttled, b3, sizeof b3), sw.files, o.output,
                sw.files > sw.nkept && sw.nkept > 0 ? ", the newest kept" : "");
    } else {
        char b1[32], b2[32], b3[32], b4[32];
        uint64_t ns = dkrec_samples(r.w), bytes = dkrec_bytes(r.w);
        fprintf(stderr,
                "[ dkperf record: %s samples (%s lost, %s throttled) written to %s, %s (%.1f "
                "bytes a sample) ]\n",
                fmt_count(ns, b1, sizeof b1), fmt_count(st.lost, b2, sizeof b2),
                fmt_count(st.throttled, b3, sizeof b3), o.output, fmt_size(bytes, b4, sizeof b4),
                ns ? (double)bytes / (double)ns : 0.0);
    }

out:
    dk_sampling_close(smp);
    if (c.pid > 0) {
        signals_child_pid = 0;
        if (ran)
            child_reap(&c, &status, NULL);
        else
            child_abandon(&c);
    }
    char release_error[1024];
    int released = s != NULL ? cli_release_sampler(s, release_error, sizeof release_error) : 0;
    signals_restore();
    sigaction(SIGCHLD, &saved_chld, NULL);
    if (released != 0)
        cli_error("record", "%s", release_error);
    dk_sampler_close(s);
    dkrec_writer_free(r.w);
    record_switch_free(&sw);
    free(r.named);
    for (image_id *i = r.ids, *next; i != NULL; i = next) {
        next = i->next;
        free(i->path);
        free(i);
    }
    if (fd >= 0 && close(fd) != 0 && exit_rc == 0) {
        cli_error("record", "-o %s: %s", o.output, strerror(errno));
        exit_rc = EXIT_SETUP;
    }
    /* Nothing ran: no recording is left behind to be mistaken for one. */
    if (file_made && !ran)
        unlink(o.output);
    /* ... and the earlier one is put back. */
    if (kept != NULL && !ran && rename(kept, o.output) != 0)
        cli_error("record", "the earlier recording is left as %s: %s", kept, strerror(errno));
    free(kept);
    record_options_free(&o);
    if (exit_rc != 0)
        return exit_rc;
    if (released != 0)
        return EXIT_SETUP;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 0;
}
