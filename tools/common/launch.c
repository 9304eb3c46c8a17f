/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * launch.c - a command started with posix_spawn (see launch.h). Built
 * without tools/common on the include path, so that <spawn.h> is the
 * system's.
 */
#include "launch.h"

#include <spawn.h>

extern char **environ;

int launch_spawn(pid_t *pid, char *const argv[], int null_fd, bool show_output,
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
