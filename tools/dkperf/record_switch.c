/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * record_switch.c - dkperf record --switch-output (see record.h): the
 * recording goes on in a new file on SIGUSR2, past a size or every period
 * of time, each ended file renamed OUTPUT.YYYYMMDDhhmmsscc as perf names
 * them (local time, centiseconds). The writer starts each file with the
 * meta, event, map and comm records it still needs (dkrec_writer_switch),
 * so every file reads alone; the switch falls between two drains, so no
 * sample is lost between files. With --pprof-dir each ended file is also
 * written as pprof there, for an agent to upload to a continuous profiler.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/clock.h"
#include "record.h"
#include "report.h"

static volatile sig_atomic_t switch_asked;

static void on_usr2(int sig)
{
    (void)sig;
    switch_asked = 1;
}

void record_switch_signal(const record_options *o)
{
    if (o->switch_mode != SWITCH_SIGNAL)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL); /* signals_restore puts the caller's back */
}

int record_switch_check(const record_options *o)
{
    if (o->switch_mode == SWITCH_NONE)
        return 0;
    /* Each ended file is renamed: never a device, a FIFO or a link (as
     * root, -o /dev/null would move the device away). */
    struct stat st;
    if (lstat(o->output, &st) == 0 && !S_ISREG(st.st_mode)) {
        cli_error("record",
                  "--switch-output: -o %s is not a regular file (the files are renamed "
                  "as they end): give a file name",
                  o->output);
        return EXIT_SETUP;
    }
    if (o->pprof_dir != NULL) {
        if (stat(o->pprof_dir, &st) != 0) {
            cli_error("record", "--pprof-dir %s: %s", o->pprof_dir, strerror(errno));
            return EXIT_SETUP;
        }
        if (!S_ISDIR(st.st_mode)) {
            cli_error("record", "--pprof-dir %s: not a directory", o->pprof_dir);
            return EXIT_SETUP;
        }
        if (access(o->pprof_dir, W_OK | X_OK) != 0) {
            cli_error("record", "--pprof-dir %s: %s", o->pprof_dir, strerror(errno));
            return EXIT_SETUP;
        }
    }
    return 0;
}

void record_switch_init(record_switch *sw, const record_options *o, const dkrec_writer *w)
{
    memset(sw, 0, sizeof sw[0]);
    sw->o = o;
    uint64_t now = dk__monotonic_ns();
    sw->next_ns = o->switch_ns > UINT64_MAX - now ? UINT64_MAX : now + o->switch_ns;
    sw->base_bytes = dkrec_bytes(w);
}

bool record_switch_due(record_switch *sw, const dkrec_writer *w)
{
    switch (sw->o->switch_mode) {
    case SWITCH_SIGNAL:
        if (!switch_asked)
            return false;
        switch_asked = 0;
        return true;
    case SWITCH_SIZE: /* the file's own bytes, not those it starts with */
        return dkrec_bytes(w) - sw->base_bytes >= sw->o->switch_bytes;
    case SWITCH_TIME: {
        uint64_t now = dk__monotonic_ns();
        if (now < sw->next_ns)
            return false;
        /* The next window from this switch: a late one does not make the
         * next short. */
        sw->next_ns = sw->o->switch_ns > UINT64_MAX - now ? UINT64_MAX : now + sw->o->switch_ns;
        return true;
    }
    default:
        return false;
    }
}

/* Whether the ended file name, or its pprof file in --pprof-dir, exists
 * (a file record did not write, which it must neither replace nor, with
 * --switch-max-files, remove later). */
static bool taken(const record_switch *sw, const char *name)
{
    struct stat st;
    if (lstat(name, &st) == 0)
        return true;
    if (sw->o->pprof_dir == NULL)
        return false;
    const char *base = strrchr(name, '/');
    base = base != NULL ? base + 1 : name;
    size_t len = strlen(sw->o->pprof_dir) + strlen(base) + 24;
    char *pprof = malloc(len);
    if (pprof == NULL)
        return false; /* write_pprof says so */
    snprintf(pprof, len, "%s/%s.pb.gz", sw->o->pprof_dir, base);
    bool there = lstat(pprof, &st) == 0;
    free(pprof);
    return there;
}

/* OUTPUT.YYYYMMDDhhmmsscc, or with -2, -3, ... when that name is taken
 * (two switches in one centisecond, or its pprof name in --pprof-dir). */
static char *ended_name(const record_switch *sw)
{
    const char *output = sw->o->output;
    struct timespec ts = {0, 0};
    struct tm tm;
    char stamp[32] = "0";
    clock_gettime(CLOCK_REALTIME, &ts);
    time_t t = ts.tv_sec;
    if (localtime_r(&t, &tm) != NULL && strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm) > 0) {
        size_t n = strlen(stamp);
        snprintf(stamp + n, sizeof stamp - n, "%02u", (unsigned)(ts.tv_nsec / 10000000));
    }
    size_t len = strlen(output) + sizeof stamp + 16;
    char *name = malloc(len);
    if (name == NULL)
        return NULL;
    snprintf(name, len, "%s.%s", output, stamp);
    for (unsigned k = 2; taken(sw, name); k++) {
        if (k == 1000) { /* never over an existing file */
            free(name);
            errno = EEXIST;
            return NULL;
        }
        snprintf(name, len, "%s.%s-%u", output, stamp, k);
    }
    return name;
}

/* The ended file as pprof in --pprof-dir: written to a hidden name, then
 * renamed, so that an agent never picks up half a file. *written: its
 * name (the caller frees it), or NULL when none was written. */
static int write_pprof(const record_switch *sw, const char *ended, char **written)
{
    *written = NULL;
    char err[512];
    dkrec *rec = NULL;
    if (dkrec_read_file(ended, &rec, err, sizeof err) != 0) {
        cli_error("record", "--pprof-dir: %s", err);
        return -1;
    }
    rprofile p;
    if (rprofile_build(&p, rec, ended) != 0) {
        dkrec_free(rec);
        return -1;
    }
    const char *base = strrchr(ended, '/');
    base = base != NULL ? base + 1 : ended;
    size_t len = strlen(sw->o->pprof_dir) + strlen(base) + 24;
    char *tmp = malloc(len), *final = malloc(len);
    int rc = -1;
    if (tmp != NULL && final != NULL) {
        snprintf(final, len, "%s/%s.pb.gz", sw->o->pprof_dir, base);
        /* A name of its own, made here (O_EXCL): not a file or link that
         * another program put at a fixed name in a shared directory. Its
         * mode is any file's (0666 less the umask, as the recording's):
         * mkstemp's 0600 and a chmod after would not be. */
        uint64_t r = dk__monotonic_ns() ^ (uint64_t)getpid() << 32;
        int fd = -1;
        errno = EEXIST;
        for (unsigned k = 0; k < 100 && fd < 0 && errno == EEXIST; k++) {
            r = (r + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
            snprintf(tmp, len, "%s/.%s.pb.gz.%08x", sw->o->pprof_dir, base, (unsigned)(r >> 32));
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        }
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f == NULL) {
            cli_error("record", "--pprof-dir: %s: %s", tmp, strerror(errno));
            if (fd >= 0) {
                close(fd);
                unlink(tmp);
            }
        } else {
            rc = report_pprof(f, &p);
            bool bad = ferror(f) != 0;
            if (fclose(f) != 0 || bad) {
                cli_error("record", "--pprof-dir: %s: cannot write it", tmp);
                rc = -1;
            }
            if (rc == 0 && rename(tmp, final) != 0) {
                cli_error("record", "--pprof-dir: %s: %s", final, strerror(errno));
                rc = -1;
            }
            if (rc != 0)
                unlink(tmp);
        }
    }
    free(tmp);
    if (rc == 0) {
        *written = final;
        final = NULL;
    }
    free(final);
    rprofile_free(&p);
    dkrec_free(rec);
    return rc;
}

/* What follows a file's end: its name said, the oldest beyond
 * --switch-max-files removed, its pprof written (a failure is said and
 * makes the exit status 1; the recording goes on). */
static void ended(record_switch *sw, char *name, uint64_t samples)
{
    sw->files++;
    sw->samples += samples;
    fprintf(stderr, "[ dkperf record: dump %s (%llu samples) ]\n", name,
            (unsigned long long)samples);
    char *pprof = NULL;
    if (sw->o->pprof_dir != NULL && write_pprof(sw, name, &pprof) != 0)
        sw->failed = true; /* said; the recording goes on */
    if (sw->o->switch_max_files > 0) {
        if (sw->nkept == (size_t)sw->o->switch_max_files) {
            /* The oldest goes, with the pprof file record wrote of it
             * (the directory would grow without bound otherwise). */
            for (int k = 0; k < 2; k++) {
                const char *gone = k == 0 ? sw->kept[0] : sw->kept_pprof[0];
                if (gone != NULL && unlink(gone) != 0 && errno != ENOENT)
                    cli_error("record", "--switch-max-files: cannot remove %s: %s", gone,
                              strerror(errno));
            }
            free(sw->kept[0]);
            free(sw->kept_pprof[0]);
            memmove(sw->kept, sw->kept + 1, (sw->nkept - 1) * sizeof *sw->kept);
            memmove(sw->kept_pprof, sw->kept_pprof + 1, (sw->nkept - 1) * sizeof *sw->kept_pprof);
            sw->nkept--;
        }
        if (sw->kept == NULL)
            sw->kept = calloc((size_t)sw->o->switch_max_files, sizeof *sw->kept);
        if (sw->kept_pprof == NULL)
            sw->kept_pprof = calloc((size_t)sw->o->switch_max_files, sizeof *sw->kept_pprof);
        if (sw->kept == NULL || sw->kept_pprof == NULL) {
            cli_error("record", "--switch-max-files: out of memory: %s is kept", name);
            sw->failed = true;
            free(name);
            free(pprof);
            return;
        }
        sw->kept_pprof[sw->nkept] = pprof;
        sw->kept[sw->nkept++] = name;
    } else {
        free(name);
        free(pprof);
    }
}

int record_switch_now(record_switch *sw, dkrec_writer *w, int *fd)
{
    char *name = ended_name(sw);
    if (name == NULL) {
        cli_error("record", "--switch-output: no name for the file ending: %s; it goes on",
                  strerror(errno));
        sw->failed = true;
        return 0;
    }
    uint64_t samples = dkrec_samples(w);
    /* The file keeps its descriptor through the rename; the writer ends it
     * there and goes on in a new one under the recording's name. A rename
     * or an open that fails leaves the recording going on in the file it
     * was in, and says so. */
    if (rename(sw->o->output, name) != 0) {
        cli_error("record",
                  "--switch-output: cannot rename %s to %s: %s; the recording goes on "
                  "in %s",
                  sw->o->output, name, strerror(errno), sw->o->output);
        sw->failed = true;
        free(name);
        return 0;
    }
    int nfd = open(sw->o->output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (nfd < 0) {
        int e = errno;
        bool back = rename(name, sw->o->output) == 0;
        cli_error("record", "--switch-output: cannot make %s: %s; the recording goes on in %s",
                  sw->o->output, strerror(e), back ? sw->o->output : name);
        sw->failed = true;
        free(name);
        return 0;
    }
    int rc = dkrec_writer_switch(w, nfd);
    if (close(*fd) != 0 && rc == 0)
        rc = -errno;
    *fd = nfd;
    if (rc != 0) {
        free(name); /* the writer's error ends the recording, said by the caller */
        return rc;
    }
    ended(sw, name, samples);
    return 0;
}

int record_switch_last(record_switch *sw, dkrec_writer *w)
{
    char *name = ended_name(sw);
    if (name == NULL || rename(sw->o->output, name) != 0) {
        cli_error("record", "--switch-output: the last file is left as %s: %s", sw->o->output,
                  strerror(errno));
        sw->failed = true;
        free(name);
        return 0;
    }
    ended(sw, name, dkrec_samples(w));
    return 0;
}

void record_switch_free(record_switch *sw)
{
    for (size_t i = 0; i < sw->nkept; i++) {
        free(sw->kept[i]);
        free(sw->kept_pprof[i]);
    }
    free(sw->kept);
    free(sw->kept_pprof);
    memset(sw, 0, sizeof *sw);
}
