/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_child.c - a command held before its exec (tools/common/process/child.c).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "child.h"

static int run(char **argv, int *exec_errno, int *status)
{
    child_process c;
    CHECK_INT(child_prepare(&c, argv, NULL), ==, 0);
    CHECK(c.pid > 0);
    CHECK_INT(child_release(&c), ==, 0);
    CHECK_INT(child_exec_result(&c, exec_errno), ==, 0);
    CHECK_INT(child_reap(&c, status, NULL), ==, 0);
    CHECK_INT(c.pid, ==, -1);
    return 0;
}

TEST_CASE(held_until_released)
{
    int p[2];
    CHECK_INT(pipe(p), ==, 0);
    char *argv[] = {"sh", "-c", "echo ran", NULL};
    child_options o = CHILD_OPTIONS_INIT;
    o.stdout_fd = p[1];
    child_process c;
    CHECK_INT(child_prepare(&c, argv, &o), ==, 0);
    close(p[1]);
    /* Held: it has not exited, and wrote nothing. */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CHECK_INT(waitid(P_PID, (id_t)c.pid, &si, WEXITED | WNOHANG | WNOWAIT), ==, 0);
    CHECK_INT(si.si_pid, ==, 0);
    CHECK_INT(child_release(&c), ==, 0);
    int e = -1;
    CHECK_INT(child_exec_result(&c, &e), ==, 0);
    CHECK_INT(e, ==, 0);
    char buf[16] = {0};
    CHECK_INT(read(p[0], buf, sizeof buf - 1), ==, 4);
    CHECK_STR(buf, "ran\n");
    close(p[0]);
    /* Waited for without reaping: still there to be reaped, with its usage. */
    CHECK_INT(child_wait_exit(&c, &si), ==, 0);
    CHECK_INT(si.si_code, ==, CLD_EXITED);
    CHECK_INT(kill(c.pid, 0), ==, 0);
    int status = -1;
    struct rusage ru;
    CHECK_INT(child_reap(&c, &status, &ru), ==, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_CASE(exec_failures_are_127_and_126)
{
    int e, status;
    char *missing[] = {"/nonexistent/command", NULL};
    run(missing, &e, &status);
    CHECK_INT(e, ==, ENOENT);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 127);
    CHECK_INT(child_exec_status(e), ==, 127);
    char *not_executable[] = {"/dev/null", NULL};
    run(not_executable, &e, &status);
    CHECK_INT(e, ==, EACCES);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 126);
    CHECK_INT(child_exec_status(e), ==, 126);
    char *exit3[] = {"sh", "-c", "exit 3", NULL};
    run(exit3, &e, &status);
    CHECK_INT(e, ==, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
}

TEST_CASE(a_child_dead_before_release_fails_it)
{
    signal(SIGPIPE, SIG_IGN);
    char *argv[] = {"true", NULL};
    child_process c;
    CHECK_INT(child_prepare(&c, argv, NULL), ==, 0);
    CHECK_INT(kill(c.pid, SIGKILL), ==, 0);
    CHECK_INT(child_wait_exit(&c, NULL), ==, 0);
    CHECK_INT(child_release(&c), ==, -EPIPE);
    int status;
    CHECK_INT(child_reap(&c, &status, NULL), ==, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_CASE(abandoned_child_never_runs)
{
    char *argv[] = {"sh", "-c", "echo ran", NULL};
    int p[2];
    CHECK_INT(pipe(p), ==, 0);
    child_options o = CHILD_OPTIONS_INIT;
    o.stdout_fd = p[1];
    child_process c;
    CHECK_INT(child_prepare(&c, argv, &o), ==, 0);
    close(p[1]);
    pid_t pid = c.pid;
    child_abandon(&c);
    CHECK_INT(c.pid, ==, -1);
    CHECK_INT(c.go_fd, ==, -1);
    CHECK_INT(c.err_fd, ==, -1);
    char buf[8];
    CHECK_INT(read(p[0], buf, sizeof buf), ==, 0); /* nothing written, every writer gone */
    close(p[0]);
    CHECK_INT(kill(pid, 0), ==, -1); /* reaped */
    char *none[] = {NULL};
    CHECK_INT(child_prepare(&c, none, NULL), ==, -EINVAL);
    CHECK_INT(c.pid, ==, -1);
}

TEST_MAIN()
