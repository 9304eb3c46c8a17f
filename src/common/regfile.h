/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * regfile.h - opening a file that untrusted data names (an image path in a
 * recording, a map of a recorded process, a baseline a benchmark program is
 * given) for reading, only when it is a regular file on an ordinary file
 * system. Part of the common layer (see CMakeLists.txt here).
 *
 * A path is not opened because a recording names it: opening a device
 * node can act on the device, opening a FIFO can block, and reading
 * /proc/kmsg takes the bytes from the one reader of the kernel's log.
 * A regular-file rule alone is not enough, since /proc/kmsg and
 * /proc/self/mem stat as regular files: the file system is checked too.
 */
#ifndef DKPERF_COMMON_REGFILE_H
#define DKPERF_COMMON_REGFILE_H

#include <stddef.h>
#include <sys/stat.h>

/*
 * Checks path with stat and statfs, and opens it (O_RDONLY | O_NONBLOCK |
 * O_NOCTTY | O_CLOEXEC) only when it is a regular file on an ordinary file
 * system: not a kernel file system (procfs, sysfs, debugfs, tracefs,
 * securityfs, cgroup, bpf, configfs, pstore, efivarfs and the like; devfs
 * on macOS). Then fstat and fstatfs of the open file confirm the same
 * file (st_dev, st_ino) under the same rules, before anything is read.
 * On Linux the file is first opened O_PATH (which runs no device's or
 * FIFO's open) and vetted so, then reopened through /proc/self/fd: a
 * device or FIFO swapped in after the stat is never opened. Without
 * procfs at /proc, and on macOS, the path itself is opened, and such a
 * file is refused only after its open.
 * Returns the descriptor, with *st (may be NULL) its fstat; or -1 with why
 * set to one phrase: "cannot open: No such file or directory", "not a
 * regular file (a FIFO)", "on procfs, a kernel file system, not an
 * ordinary one", ...
 */
int regfile_open(const char *path, struct stat *st, char *why, size_t whylen);

#ifndef __APPLE__
#include <stdint.h>
/* The kernel file system of statfs magic f_type (procfs, sysfs, ...), whose
 * files regfile_open refuses, or NULL for an ordinary one. */
const char *regfile_linux_fs(uint32_t magic);
#endif

/* What a file of this mode is, for errors: "a directory", "a FIFO", "a
 * character device", "a block device", "a socket", "a regular file". */
const char *regfile_kind(mode_t mode);

#endif /* DKPERF_COMMON_REGFILE_H */
