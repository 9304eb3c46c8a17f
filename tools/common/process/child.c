/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * child.c - a command run as a child process (see child.h).
 */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void close_pair(int p[2])
{
    close_fd(&p[0]);
    close_fd(&p[1]);
}

static int cloexec(int fd) { return fcntl(fd, F_SETFD, FD_CLOEXEC); }

/* In the child: async-signal-safe calls only, and _exit. */
static void child(int go[2], int err[2], char *const argv[], const child_options *o,
                  const sigset_t *mask)
{
    if (o->in_child != NULL)
        o->in_child();
    if (o->hold != NULL)
        sigprocmask(SIG_SETMASK, mask, NULL);
    close(go[1]);
    close(err[0]);
    char c;
    if (read(go[0], &c, 1) != 1)
        _exit(127); /* given up on before the command could run */
    close(go[0]);
    const int fds[3] = {o->stdin_fd, o->stdout_fd, o->stderr_fd};
    int e = 0;
    for (int k = 0; k < 3 && e == 0; k++)
        if (fds[k] >= 0 && fds[k] != k && dup2(fds[k], k) != k)
            e = errno;
    if (e == 0) {
        execvp(argv[0], argv);
        e = errno;
    }
    if (write(err[1], &e, sizeof e) != (ssize_t)sizeof e)
        _exit(127);
    _exit(child_exec_status(e));
}

int child_prepare(child_process *c, char *const argv[], const child_options *o)
{
    static const child_options none = CHILD_OPTIONS_INIT;
    int go[2] = {-1, -1}, err[2] = {-1, -1};
    c->pid = -1;
    c->go_fd = c->err_fd = -1;
    c->failed = "pipe";
    if (o == NULL)
        o = &none;
    if (argv == NULL || argv[0] == NULL) {
        c->failed = "execvp";
        return -EINVAL;
    }
    /* The child's ends of go and err are its own: the command keeps none. */
    if (pipe(go) != 0 || pipe(err) != 0 || cloexec(go[1]) != 0 || cloexec(err[0]) != 0 ||
        cloexec(err[1]) != 0) {
        int why = errno;
        close_pair(go);
        close_pair(err);
        return -why;
    }
    sigset_t mask;
    if (o->hold != NULL)
        sigprocmask(SIG_BLOCK, o->hold, &mask);
    pid_t pid = fork();
    if (pid == 0)
        child(go, err, argv, o, &mask);
    int why = errno;
    if (pid > 0 && o->pid_out != NULL)
        *o->pid_out = pid;
    if (o->hold != NULL)
        sigprocmask(SIG_SETMASK, &mask, NULL); /* a signal held until now finds the pid */
    close_fd(&go[0]);
    close_fd(&err[1]);
    if (pid < 0) {
        c->failed = "fork";
        close_pair(go);
        close_pair(err);
        return -why;
    }
    c->pid = pid;
    c->failed = NULL;
    c->go_fd = go[1];
    c->err_fd = err[0];
    return 0;
}

int child_release(child_process *c)
{
    if (c->go_fd < 0)
        return -EBADF;
    ssize_t wrote;
    while ((wrote = write(c->go_fd, "g", 1)) < 0 && errno == EINTR)
        ;
    int why = wrote == 1 ? 0 : wrote < 0 ? errno : EIO;
    close_fd(&c->go_fd);
    return -why;
}

int child_exec_result(child_process *c, int *exec_errno)
{
    *exec_errno = 0;
    if (c->err_fd < 0)
        return -EBADF;
    int e = 0;
    ssize_t got;
    while ((got = read(c->err_fd, &e, sizeof e)) < 0 && errno == EINTR)
        ;
    int why = got < 0 ? errno : 0;
    close_fd(&c->err_fd);
    if (got == (ssize_t)sizeof e)
        *exec_errno = e;
    return -why;
}

int child_exec_status(int exec_errno) { return exec_errno == ENOENT ? 127 : 126; }

int child_wait_pid_exit(pid_t pid, siginfo_t *si)
{
    siginfo_t ignored;
    if (pid <= 0)
        return -ECHILD;
    memset(si != NULL ? si : &ignored, 0, sizeof *si);
    while (waitid(P_PID, (id_t)pid, si != NULL ? si : &ignored, WEXITED | WNOWAIT) != 0)
        if (errno != EINTR)
            return -errno;
    return 0;
}

int child_wait_exit(const child_process *c, siginfo_t *si)
{
    return child_wait_pid_exit(c->pid, si);
}

int child_reap_pid(pid_t pid, int *status, struct rusage *ru)
{
    int st = 0;
    if (pid <= 0)
        return -ECHILD;
    if (ru != NULL)
        memset(ru, 0, sizeof *ru);
    while (wait4(pid, &st, 0, ru) < 0)
        if (errno != EINTR)
            return -errno;
    if (status != NULL)
        *status = st;
    return 0;
}

int child_reap(child_process *c, int *status, struct rusage *ru)
{
    close_fd(&c->go_fd);
    close_fd(&c->err_fd);
    int rc = child_reap_pid(c->pid, status, ru);
    if (rc == 0)
        c->pid = -1;
    return rc;
}

void child_abandon(child_process *c)
{
    close_fd(&c->go_fd);
    close_fd(&c->err_fd);
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        child_reap(c, NULL, NULL);
    }
}

int child_launch(pid_t *pid, char *const argv[], int null_fd, bool show_output,
                 const sigset_t *mask, const sigset_t *dfl)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0)
        return rc;
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    sigemptyset(&none);
    for (int k = 0; k < 3 && rc == 0; k++)
        if (k == 0 || !show_output)
            rc = posix_spawn_file_actions_adddup2(&fa, null_fd, k);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, mask);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, dfl != NULL ? dfl : &none);
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0)
        rc = posix_spawnp(pid, argv[0], &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}
