/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * processes.c - a benchmark measured in several fresh processes: the
 * worker's side (its variable, its share of the budget), running a worker
 * and reading what it hands back, and the combination of the workers'
 * results; see processes.h.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "common/error.h"
#include "common/clock.h"
#include "common/stats.h"
#include "libdkbench/cli.h"
#include "libdkbench/compare.h"
#include "libdkbench/processes.h"
#include "libdkbench/report_common.h"
#include "libdkbench/report.h"

extern char **environ;

/* What a worker may hand back: a results document of one benchmark or
 * group, its samples included, is some kilobytes; 256 MiB is far past any. */
#define MAX_WORKER_OUTPUT ((size_t)256 << 20)

static bool parse_field(const char **s, size_t max, size_t *out)
{
    const char *p = *s;
    if (*p < '0' || *p > '9')
        return false;
    size_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (max - (size_t)(*p - '0')) / 10)
            return false;
        v = v * 10 + (size_t)(*p - '0');
    }
    *out = v;
    *s = p;
    return true;
}

int dkb_worker_from_env(dkb_worker *w)
{
    const char *v = getenv(DKB_WORKER_ENV), *name = getenv(DKB_WORKER_NAME_ENV);
    char nm[256];
    snprintf(nm, sizeof nm, "%s", name != NULL ? name : "");
    unsetenv(DKB_WORKER_NAME_ENV);
    if (v == NULL)
        return 0;
    char copy[128];
    snprintf(copy, sizeof copy, "%s", v);
    bool long_value = strlen(v) >= sizeof copy;
    unsetenv(DKB_WORKER_ENV);
    size_t f[5];
    const char *p = copy;
    bool ok = !long_value;
    for (int i = 0; ok && i < 5; i++) {
        ok = parse_field(&p, i == 0 ? (size_t)INT_MAX : SIZE_MAX / 2, &f[i]) &&
             *p == (i < 4 ? ':' : '\0');
        p += i < 4;
    }
    if (!ok || f[2] == 0 || f[4] == 0 || f[4] > DKB_MAX_PROCESSES || f[3] >= f[4])
        return dkb_fail(DK_EINVAL,
                        "%s is set only by a benchmark program for the processes it starts; "
                        "'%s' is not such a value (unset it)",
                        DKB_WORKER_ENV, copy),
               -1;
    if (fcntl((int)f[0], F_GETFD) == -1)
        return dkb_fail(DK_EINVAL,
                        "%s is set only by a benchmark program for the processes it starts; "
                        "it names descriptor %zu, which is not open (unset it)",
                        DKB_WORKER_ENV, f[0]),
               -1;
    *w = (dkb_worker){(int)f[0], f[1], f[2], f[3], f[4], ""};
    memcpy(w->name, nm, sizeof nm);
    return 1;
}

void dkb_worker_config(dkb_config *c, const dkb_worker *w)
{
    double of = (double)w->of;
    c->time_budget /= of;
    c->warmup_bound /= of;
    c->min_time /= of;
    c->seed += w->index;
}

bool dkb_self_exe(char *buf, size_t size)
{
#if defined(__linux__)
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0 || (size_t)n >= size - 1) {
        dkb_fail(DK_EOS, "cannot read /proc/self/exe: %s",
                 n < 0 ? strerror(errno) : "the path is too long");
        return false;
    }
    buf[n] = '\0';
    static const char deleted[] = " (deleted)";
    size_t dl = sizeof deleted - 1;
    if ((size_t)n > dl && strcmp(buf + n - dl, deleted) == 0 && access(buf, X_OK) != 0) {
        dkb_fail(DK_EOS, "the running executable was removed or replaced (%s)", buf);
        return false;
    }
    return true;
#else
    /* macOS: _NSGetExecutablePath, looked up so that every platform
     * builds the same file. */
    typedef int (*get_path_fn)(char *, uint32_t *);
    get_path_fn get_path = NULL;
    void *sym = dlsym(RTLD_DEFAULT, "_NSGetExecutablePath");
    memcpy(&get_path, &sym, sizeof get_path);
    uint32_t cap = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    if (get_path == NULL || get_path(buf, &cap) != 0) {
        dkb_fail(DK_EOS, "cannot find the running executable's path");
        return false;
    }
    return true;
#endif
}

static bool is_var(const char *entry, const char *name)
{
    size_t len = strlen(name);
    return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* The environment of a worker: the program's, without any worker
 * variable, with this one's first (var, and name_var when not NULL). NULL
 * when out of memory. */
static char **worker_env(const char *var, const char *name_var)
{
    size_t n = 0;
    for (char **e = environ; e != NULL && *e != NULL; e++)
        n++;
    char **env = malloc((n + 3) * sizeof *env);
    if (env == NULL)
        return NULL;
    size_t k = 0;
    env[k++] = (char *)var;
    if (name_var != NULL)
        env[k++] = (char *)name_var;
    for (size_t i = 0; i < n; i++)
        if (!is_var(environ[i], DKB_WORKER_ENV) && !is_var(environ[i], DKB_WORKER_NAME_ENV))
            env[k++] = environ[i];
    env[k] = NULL;
    return env;
}

static void set_cloexec(int fd) { fcntl(fd, F_SETFD, FD_CLOEXEC); }

static ssize_t read_some(int fd, void *buf, size_t n)
{
    ssize_t r;
    do
        r = read(fd, buf, n);
    while (r < 0 && errno == EINTR);
    return r;
}

/* How often, in ms, a wait for a worker's output looks whether it has
 * exited: a child it left may hold the pipe open after it. */
#define EXIT_CHECK_MS 200

/* Pass a signal the program noted (*stop) on to the worker, once: it ends
 * by it as the program would, after the benchmark under way, and the
 * program is not left waiting for a worker that knows nothing of it. */
static void pass_on(pid_t pid, const volatile sig_atomic_t *stop, bool *passed)
{
    if (stop != NULL && *stop != 0 && !*passed) {
        kill(pid, (int)*stop);
        *passed = true;
    }
}

int dkb_run_worker(const char *exe, char *const *argv, const dkb_worker *w,
                   const volatile sig_atomic_t *stop, char **text, size_t *len, int *signal_out)
{
    *text = NULL;
    *len = 0;
    *signal_out = 0;
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || pipe(out) != 0 || pipe(err) != 0) {
        int rc = dkb_fail(DK_EOS, "cannot start a process: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            if (out[i] >= 0)
                close(out[i]);
            if (err[i] >= 0)
                close(err[i]);
        }
        if (devnull >= 0)
            close(devnull);
        return rc;
    }
    for (int i = 0; i < 2; i++) {
        set_cloexec(out[i]);
        set_cloexec(err[i]);
    }
    char var[128];
    snprintf(var, sizeof var, "%s=%d:%zu:%zu:%zu:%zu", DKB_WORKER_ENV, out[1], w->first, w->count,
             w->index, w->of);
    char name_var[300];
    snprintf(name_var, sizeof name_var, "%s=%s", DKB_WORKER_NAME_ENV, w->name);
    char **env = worker_env(var, w->name[0] != '\0' ? name_var : NULL);
    char *buf = NULL;
    pid_t parent = getpid();
    pid_t pid = env != NULL ? fork() : -1;
    if (pid == 0) {
        /* Only async-signal-safe calls from here to exec. */
#if defined(__linux__)
        /* A parent killed outright (SIGKILL) cannot pass a signal on: the
         * kernel does, and the worker ends as it would by a signal. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
#else
        (void)parent;
#endif
        dup2(devnull, STDIN_FILENO);
        fcntl(out[1], F_SETFD, 0);
        execve(exe, argv, env);
        int e = errno;
        ssize_t wr = write(err[1], &e, sizeof e);
        (void)wr;
        _exit(127);
    }
    int rc = 0, saved = errno;
    close(out[1]);
    close(err[1]);
    close(devnull);
    free(env);
    if (pid < 0) {
        close(out[0]);
        close(err[0]);
        return dkb_fail(env == NULL ? DK_ENOMEM : DK_EOS, "cannot start a process: %s",
                        env == NULL ? "out of memory" : strerror(saved));
    }
    int exec_errno = 0;
    bool exec_failed = read_some(err[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
    close(err[0]);
    size_t cap = 0, n = 0;
    int status = 0;
    bool exited = false, passed = false;
    for (;;) {
        if (n + 1 >= cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *nb = ncap <= MAX_WORKER_OUTPUT + 1 ? realloc(buf, ncap) : NULL;
            if (nb == NULL) {
                rc = ncap > MAX_WORKER_OUTPUT + 1
                         ? dkb_fail(DK_EINVAL, "%s handed back more than %zu MiB", exe,
                                    MAX_WORKER_OUTPUT >> 20)
                         : dkb_fail(DK_ENOMEM, "out of memory reading a worker process");
                kill(pid, SIGKILL);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        if (!exited) {
            struct pollfd pfd = {out[0], POLLIN, 0};
            int pr = poll(&pfd, 1, EXIT_CHECK_MS);
            pass_on(pid, stop, &passed);
            if (pr < 0 && errno != EINTR) {
                rc = dkb_fail(DK_EOS, "reading a worker process: %s", strerror(errno));
                break;
            }
            if (pr <= 0) {
                /* Exited: what it wrote is all in the pipe; read it
                 * without waiting for whoever else holds the pipe. */
                if (waitpid(pid, &status, WNOHANG) == pid) {
                    exited = true;
                    fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
                }
                continue;
            }
        }
        ssize_t r = read_some(out[0], buf + n, cap - 1 - n);
        if (r <= 0) {
            if (r < 0 && !(exited && (errno == EAGAIN || errno == EWOULDBLOCK)))
                rc = dkb_fail(DK_EOS, "reading a worker process: %s", strerror(errno));
            break;
        }
        n += (size_t)r;
    }
    close(out[0]);
    pid_t got = pid;
    if (!exited) {
        while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
            pass_on(pid, stop, &passed);
    }
    if (rc == 0 && exec_failed)
        rc = dkb_fail(DK_EOS, "cannot run %s: %s", exe, strerror(exec_errno));
    else if (rc == 0 && got == pid && WIFSIGNALED(status)) {
        *signal_out = WTERMSIG(status);
        rc = dkb_fail(DK_EOS, "its process was ended by signal %d (%s)", WTERMSIG(status),
                      strsignal(WTERMSIG(status)));
    } else if (rc == 0 && (got != pid || !WIFEXITED(status)))
        rc = dkb_fail(DK_EOS, "its process could not be waited for");
    else if (rc == 0 && WEXITSTATUS(status) != 0)
        rc = dkb_fail(DK_EOS, "its process exited with status %d", WEXITSTATUS(status));
    if (buf == NULL && (buf = malloc(1)) == NULL)
        return dkb_fail(DK_ENOMEM, "out of memory reading a worker process");
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Combining the processes' results                                          */
/* ------------------------------------------------------------------------ */

static int mismatch(const dkb_result *a, const dkb_result *b, const char *what)
{
    return dkb_fail(DK_EINVAL,
                    "%s: its processes do not agree on %s ('%s' against '%s'): does the program "
                    "register the same benchmarks each time it runs?",
                    a->name, what, a->name, b->name);
}

static int concat(const dkb_result *per, size_t n, size_t total, dkb_result *out)
{
    out->iterations = malloc(total * sizeof *out->iterations);
    bool pre = true;
    for (size_t j = 0; j < n; j++)
        pre &= per[j].switches_counted && per[j].preempted != NULL;
    if (pre)
        out->preempted = calloc(total, 1);
    if (out->iterations == NULL || (pre && out->preempted == NULL))
        return dkb_fail(DK_ENOMEM, "out of memory combining %s", out->name);
    out->switches_counted = pre;
    for (size_t i = 0; i < out->n_measures; i++) {
        dkb_measure *m = &out->m[i];
        if (m->available && (m->y = malloc(total * sizeof *m->y)) == NULL)
            return dkb_fail(DK_ENOMEM, "out of memory combining %s", out->name);
    }
    size_t at = 0;
    for (size_t j = 0; j < n; j++) {
        const dkb_result *r = &per[j];
        memcpy(out->iterations + at, r->iterations, r->n_samples * sizeof *out->iterations);
        if (pre) {
            memcpy(out->preempted + at, r->preempted, r->n_samples);
            out->n_preempted += r->n_preempted;
        }
        for (size_t i = 0; i < out->n_measures; i++)
            if (out->m[i].available)
                memcpy(out->m[i].y + at, r->m[i].y, r->n_samples * sizeof *out->m[i].y);
        at += r->n_samples;
    }
    out->n_samples = total;
    return 0;
}

int dkb_combine_processes(const dkb_config *cfg, const dkb_result *per, size_t n, dkb_result *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return dkb_fail(DK_EINVAL, "no process measured the benchmark");
    const dkb_result *r0 = &per[0];
    snprintf(out->name, sizeof out->name, "%s", r0->name);
    snprintf(out->group, sizeof out->group, "%s", r0->group);
    out->n_measures = r0->n_measures;
    size_t total = 0;
    bool flat = true;
    for (size_t j = 0; j < n; j++) {
        const dkb_result *r = &per[j];
        if (strcmp(r->name, r0->name) != 0)
            return mismatch(r0, r, "the name");
        if (r->n_measures != r0->n_measures)
            return mismatch(r0, r, "the measures");
        for (size_t i = 0; i < r->n_measures; i++)
            if (strcmp(r->m[i].name, r0->m[i].name) != 0)
                return mismatch(r0, r, "the measures");
        if (r->n_samples == 0 || r->iterations == NULL || total + r->n_samples < total)
            return dkb_fail(DK_EINVAL, "%s: a process took no sample", r0->name);
        total += r->n_samples;
        flat &= strcmp(r->m[0].estimator, "mean") == 0;
        out->passes = r->passes > out->passes ? r->passes : out->passes;
        out->warmup_s += r->warmup_s;
        out->measure_s += r->measure_s;
        out->moved_levels |= r->moved_levels;
    }
    for (size_t i = 0; i < out->n_measures; i++) {
        dkb_measure *m = &out->m[i];
        const dkb_measure *m0 = &r0->m[i];
        snprintf(m->name, sizeof m->name, "%s", m0->name);
        snprintf(m->unit, sizeof m->unit, "%s", m0->unit);
        snprintf(m->why, sizeof m->why, "%s", m0->why);
        m->available = true;
        for (size_t j = 0; j < n && m->available; j++)
            if (!per[j].m[i].available || per[j].m[i].y == NULL) {
                m->available = false;
                snprintf(m->why, sizeof m->why, "%s", per[j].m[i].why);
            }
    }
    out->throughput_kind = r0->throughput_kind;
    out->throughput_per_iter = r0->throughput_per_iter;
    out->n_levels = r0->n_levels;
    for (size_t l = 0; l < r0->n_levels && l < DKB_MAX_LEVELS; l++) {
        snprintf(out->level_name[l], sizeof out->level_name[l], "%s", r0->level_name[l]);
        for (size_t j = 0; j < n; j++)
            out->level_cycle_share[l] += per[j].level_cycle_share[l] / (double)n;
    }
    snprintf(out->stop_reason, sizeof out->stop_reason, "%zu processes; the last: %.120s", n,
             per[n - 1].stop_reason);
    int rc = concat(per, n, total, out);
    /* The samples of every process together, for the summary, the
     * outliers and the fit the reports show: a least-squares fit (Theil-Sen
     * of every pair would take memory in the square of the samples, 1.6 GB
     * for 500 processes), with fewer resamples for many samples. The
     * headline is the processes' (below), by each one's estimator. */
    dkb_config c = *cfg;
    double cap = 2e7 / (double)total;
    if ((double)c.resamples > cap)
        c.resamples = cap < 200 ? 200 : (size_t)cap;
    for (size_t i = 0; rc == 0 && i < out->n_measures; i++) {
        dkb_measure *m = &out->m[i];
        if (!m->available || m->y == NULL)
            continue;
        rc = dkb_estimate(&c, out->iterations, total, flat, false, NULL, m);
        if (rc == 0 && m->estimator[0] != '\0' && r0->m[i].estimator[0] != '\0') {
            snprintf(m->estimator, sizeof m->estimator, "%s", r0->m[i].estimator);
            m->n_fit = total;
        }
    }
    for (size_t i = 0; rc == 0 && i < out->n_measures; i++) {
        dkb_measure *m = &out->m[i];
        if (!m->available || m->estimator[0] == '\0')
            continue;
        m->proc = malloc(n * sizeof *m->proc);
        m->proc_half = malloc(n * sizeof *m->proc_half);
        if (m->proc == NULL || m->proc_half == NULL) {
            rc = dkb_fail(DK_ENOMEM, "out of memory combining %s", out->name);
            break;
        }
        bool each = true;
        for (size_t j = 0; j < n; j++) {
            const dkb_interval *s = &per[j].m[i].slope;
            each &= per[j].m[i].estimator[0] != '\0' && dkb__has_estimates(&per[j], &per[j].m[i]);
            m->proc[j] = s->point;
            m->proc_half[j] = (s->hi - s->lo) / 2;
            if (!dkb__has_estimates(&per[j], &per[j].m[i])) {
                /* One sample (--benchmark_min_time=1x): what it measured a
                 * iteration, with no interval; no t interval across them. */
                double y = 0, it = 0;
                for (size_t k = 0; per[j].m[i].y != NULL && k < per[j].n_samples; k++) {
                    y += per[j].m[i].y[k];
                    it += per[j].iterations[k];
                }
                m->proc[j] = it > 0 ? y / it : NAN;
                m->proc_half[j] = NAN;
            }
        }
        if (each && dkb_process_summarize(m->proc, m->proc_half, n, 0.95, &m->procs))
            m->slope = m->procs.ci;
        else
            m->procs.n = 0;
    }
    if (rc == 0 && (out->proc_iterations = malloc(n * sizeof *out->proc_iterations)) == NULL)
        rc = dkb_fail(DK_ENOMEM, "out of memory combining %s", out->name);
    for (size_t j = 0; rc == 0 && j < n; j++) {
        out->proc_iterations[j] = 0;
        for (size_t s = 0; s < per[j].n_samples; s++)
            out->proc_iterations[j] += per[j].iterations[s];
    }
    out->n_processes = n;
    if (rc != 0)
        dkb_result_free(out);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Measuring in processes                                                    */
/* ------------------------------------------------------------------------ */

/* Run process j (its index, of `of`, for the worker's share) of exe as a
 * worker of the k benchmarks at first (named `name` when not NULL) and
 * keep its results in per[g][j]. Returns 0 or a DK_E* code; DK_ENOTSUP
 * when the first process did not act as a worker, DK_ENOEVENT when it has
 * no benchmark of that name. */
static int run_one(const char *exe, char *const *argv, size_t first, size_t k, const char *name,
                   size_t j, size_t of, size_t total, const volatile sig_atomic_t *stop,
                   dkb_result **per)
{
    char which[64];
    if (total > 0)
        snprintf(which, sizeof which, "process %zu of %zu", j + 1, total);
    else
        snprintf(which, sizeof which, "process %zu", j + 1);
    dkb_worker w = {-1, first, k, j % of, of, ""};
    if (name != NULL)
        snprintf(w.name, sizeof w.name, "%s", name);
    char *text = NULL;
    size_t len = 0;
    int sig = 0;
    int rc = dkb_run_worker(exe, argv, &w, stop, &text, &len, &sig);
    size_t hello = strlen(DKB_WORKER_HELLO), absent = strlen(DKB_WORKER_NO_SUCH_NAME);
    bool worked = text != NULL && len >= hello && memcmp(text, DKB_WORKER_HELLO, hello) == 0;
    if (worked && name != NULL && len == hello + absent &&
        memcmp(text + hello, DKB_WORKER_NO_SUCH_NAME, absent) == 0) {
        free(text);
        return dkb_fail(DK_ENOEVENT, "not in %s, the other build: not compared", exe);
    }
    if (rc != 0 || !worked) {
        char why[1024];
        snprintf(why, sizeof why, "%s", rc != 0 ? dkb_last_error() : "it exited with status 0");
        free(text);
        if (!worked && j == 0 && sig == 0)
            return dkb_fail(DK_ENOTSUP,
                            "%s did not act as a worker process when run (%s): it is not a "
                            "benchmark program of this libdkbench, or its main does not call "
                            "dk_bench_main every time",
                            exe, why);
        return dkb_fail(rc != 0 ? rc : DK_EINVAL, "%s: %s", which,
                        worked ? why : "it did not act as a worker process");
    }
    dkb_result *rs = NULL;
    size_t n = 0;
    rc = dkb__baseline_parse("the results of a worker process", text + hello, len - hello, &rs, &n);
    free(text);
    if (rc == 0 && n != k)
        rc = dkb_fail(DK_EINVAL,
                      "%s handed back %zu results, not %zu: does main call "
                      "dk_bench_main with its own arguments?",
                      which, n, k);
    for (size_t g = 0; g < n; g++) {
        if (rc == 0)
            per[g][j] = rs[g];
        else
            dkb_result_free(&rs[g]);
    }
    free(rs);
    return rc;
}

/* k arrays of cap results each (zeroed), or NULL. */
static dkb_result **new_per(size_t k, size_t cap)
{
    dkb_result **per = calloc(k, sizeof *per);
    for (size_t g = 0; per != NULL && g < k; g++)
        if ((per[g] = calloc(cap, sizeof **per)) == NULL) {
            for (size_t h = 0; h < g; h++)
                free(per[h]);
            free(per);
            return NULL;
        }
    return per;
}

static void free_per(dkb_result **per, size_t k, size_t n)
{
    for (size_t g = 0; per != NULL && g < k; g++) {
        for (size_t j = 0; j < n; j++)
            dkb_result_free(&per[g][j]);
        free(per[g]);
    }
    free(per);
}

/* out[g] from per[g][0 .. ran), g < k; on failure (or rc != 0 on entry)
 * out is zeroed. */
static int combine_all(const dkb_config *cfg, int rc, dkb_result **per, size_t ran, size_t k,
                       const volatile sig_atomic_t *stop, dkb_result *out)
{
    if (rc == 0 && *stop != 0)
        rc = dkb_fail(DK_ESTATE, "stopped by a signal");
    for (size_t g = 0; g < k; g++) {
        if (rc == 0)
            rc = dkb_combine_processes(cfg, per[g], ran, &out[g]);
        else
            memset(&out[g], 0, sizeof out[g]);
    }
    if (rc != 0)
        for (size_t g = 0; g < k; g++)
            dkb_result_free(&out[g]);
    return rc;
}

int dkb_measure_processes(const dkb_config *cfg, const char *exe, char *const *argv, size_t first,
                          size_t k, size_t procs, bool fixed, const volatile sig_atomic_t *stop,
                          dkb_result *out)
{
    dkb_result **per = new_per(k, procs);
    if (per == NULL)
        return dkb_fail(DK_ENOMEM, "out of memory");
    int rc = 0;
    size_t ran = 0, want = procs;
    for (size_t j = 0; j < want && rc == 0 && *stop == 0; j++) {
        if ((rc = run_one(exe, argv, first, k, NULL, j, procs, procs, stop, per)) == 0)
            ran++;
        /* A body too slow for its share (the first process's warm-up and
         * samples took more than the budget allows them all, as its
         * fewest samples do): as many processes as fit in
         * DKB_SLOW_BUDGETS budgets, DKB_MIN_PROCESSES at least. The
         * process's start is not counted: a busy machine slows that. */
        double t1 = 0;
        for (size_t g = 0; rc == 0 && g < k; g++)
            t1 += per[g][0].warmup_s + per[g][0].measure_s;
        double allowed = DKB_SLOW_BUDGETS * (cfg->time_budget + cfg->warmup_bound) * (double)k;
        if (rc == 0 && j == 0 && !fixed && t1 * (double)procs > allowed) {
            double fit = floor(allowed / t1);
            want = fit < DKB_MIN_PROCESSES ? DKB_MIN_PROCESSES : (size_t)fit;
            want = want < procs ? want : procs;
        }
    }
    rc = combine_all(cfg, rc, per, ran, k, stop, out);
    for (size_t g = 0; rc == 0 && want < procs && g < k; g++) {
        char line[400];
        snprintf(line, sizeof line,
                 "%s (a slow body: %zu processes of %zu, to stay near %d budgets, %d at least)",
                 out[g].stop_reason, want, procs, DKB_SLOW_BUDGETS, DKB_MIN_PROCESSES);
        line[sizeof out[g].stop_reason - 1] = '\0';
        memcpy(out[g].stop_reason, line, sizeof out[g].stop_reason);
    }
    free_per(per, k, procs);
    return rc;
}

int dkb_measure_shuffled(const dkb_config *cfg, const char *exe, char *const *argv, size_t n,
                         size_t procs, const volatile sig_atomic_t *stop, dkb_result *out)
{
    size_t *order = malloc((n * procs > 0 ? n * procs : 1) * sizeof *order);
    dkb_result **per = new_per(n, procs);
    if (order == NULL || per == NULL) {
        free(order);
        free_per(per, n, 0);
        return dkb_fail(DK_ENOMEM, "out of memory");
    }
    for (size_t q = 0; q < n * procs; q++)
        order[q] = q;
    dkb_rng rng;
    dkb_rng_seed(&rng, cfg->seed);
    for (size_t q = n * procs; q > 1; q--) { /* Fisher-Yates */
        size_t r = dkb_rng_below(&rng, q), t = order[q - 1];
        order[q - 1] = order[r];
        order[r] = t;
    }
    int rc = 0;
    for (size_t q = 0; q < n * procs && rc == 0 && *stop == 0; q++) {
        size_t i = order[q] / procs, j = order[q] % procs;
        if ((rc = run_one(exe, argv, i, 1, NULL, j, procs, procs, stop, &per[i])) != 0) {
            char why[1024];
            snprintf(why, sizeof why, "%s", dkb_last_error());
            dkb_fail(rc, "the %zu benchmarks run interleaved, benchmark %zu: %s", n, i + 1, why);
        }
    }
    rc = combine_all(cfg, rc, per, procs, n, stop, out);
    free_per(per, n, procs);
    free(order);
    return rc;
}

/* Whether every benchmark's time change over the first n pairs resolves
 * target or better. */
static bool ab_resolved(dkb_result **per, dkb_result **oper, size_t k, size_t n, double target)
{
    double *a = malloc(2 * n * sizeof *a);
    bool ok = a != NULL && target > 0;
    for (size_t g = 0; ok && g < k; g++) {
        for (size_t j = 0; j < n; j++) {
            a[j] = oper[g][j].m[0].slope.point;
            a[n + j] = per[g][j].m[0].slope.point;
        }
        dkb_change c;
        ok = dkb_change_paired(a, a + n, n, target, 0.05, &c) && c.resolution <= target;
    }
    free(a);
    return ok;
}

static int grow(dkb_result ***per, size_t k, size_t cap, size_t ncap)
{
    for (size_t g = 0; g < k; g++) {
        dkb_result *p = realloc((*per)[g], ncap * sizeof *p);
        if (p == NULL)
            return dkb_fail(DK_ENOMEM, "out of memory");
        memset(p + cap, 0, (ncap - cap) * sizeof *p);
        (*per)[g] = p;
    }
    return 0;
}

int dkb_measure_ab(const dkb_config *cfg, const dkb_ab *ab, size_t first, size_t k,
                   const volatile sig_atomic_t *stop, dkb_result *out, dkb_result *other)
{
    size_t cap = ab->pairs > 0 ? ab->pairs : DKB_AB_MIN_PAIRS;
    size_t of = ab->pairs > 0 ? ab->pairs : DKB_AB_MIN_PAIRS;
    dkb_result **per = new_per(k, cap), **oper = new_per(k, cap);
    int rc = per == NULL || oper == NULL ? dkb_fail(DK_ENOMEM, "out of memory") : 0;
    size_t ran = 0;
    const char *name = ab->names[first];
    uint64_t start = dk__monotonic_ns(), last = start;
    double pair_s = 0; /* the longest pair so far */
    for (size_t j = 0; rc == 0 && *stop == 0; j++) {
        uint64_t now = dk__monotonic_ns();
        double d = (double)(now - last) * 1e-9;
        pair_s = d > pair_s ? d : pair_s;
        last = now;
        /* The budget holds the next pair too: stop when it would end past it. */
        if (ab->pairs > 0
                ? j >= ab->pairs
                : j >= DKB_AB_MIN_PAIRS &&
                      ((double)(now - start) * 1e-9 + pair_s > DKB_AB_BUDGET ||
                       j >= DKB_MAX_PROCESSES || ab_resolved(per, oper, k, j, ab->noise / 2)))
            break;
        if (j == cap && (rc = grow(&per, k, cap, 2 * cap)) == 0 &&
            (rc = grow(&oper, k, cap, 2 * cap)) == 0)
            cap *= 2;
        /* Alternately first in a pair, so that a drift within pairs
         * cancels too. */
        for (int side = 0; side < 2 && rc == 0; side++) {
            bool mine = (side == 0) == (j % 2 == 1);
            rc = mine
                     ? run_one(ab->self, ab->self_argv, first, k, name, j, of, ab->pairs, stop, per)
                     : run_one(ab->other, ab->other_argv, first, k, name, j, of, ab->pairs, stop,
                               oper);
            if (rc != 0 && rc != DK_ENOEVENT && rc != DK_ENOTSUP) {
                char why[1200];
                snprintf(why, sizeof why, "%s", dkb_last_error());
                rc = dkb_fail(rc, "%s: %s", mine ? ab->self : ab->other, why);
            }
        }
        ran += rc == 0;
    }
    if (rc == 0)
        rc = combine_all(cfg, rc, oper, ran, k, stop, other);
    rc = combine_all(cfg, rc, per, ran, k, stop, out);
    if (rc != 0)
        for (size_t g = 0; g < k; g++)
            dkb_result_free(&other[g]);
    for (size_t g = 0; rc == 0 && g < k; g++)
        dkb_compare_paired(&out[g], &other[g], ab->noise);
    free_per(per, k, cap);
    free_per(oper, k, cap);
    return rc;
}
