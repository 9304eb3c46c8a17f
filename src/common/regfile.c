/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * regfile.c - opening a file that untrusted data names, only when it is a
 * regular file on an ordinary file system (see regfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/regfile.h"

#ifdef __APPLE__
#include <sys/mount.h>
#else
#include <sys/vfs.h>
#endif

const char *regfile_kind(mode_t mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

#ifndef __APPLE__
/* The file systems whose files are views of kernel or device state, by
 * their statfs magic (<linux/magic.h> and the drivers that define their
 * own), each with why a read of one of its files must not be made: */
static const struct {
    uint32_t magic;
    const char *name;
} kernel_kinds[] = {
    {0x00009fa0, "procfs"},       /* /proc/kmsg consumes the log, /proc/self/mem reads memory */
    {0x62656572, "sysfs"},        /* attributes read from drivers, some acting on read */
    {0x64626720, "debugfs"},      /* driver internals; some files act or block on read */
    {0x74726163, "tracefs"},      /* trace_pipe consumes the trace and blocks */
    {0x73636673, "securityfs"},   /* LSM and IMA policy and measurement files */
    {0x5a3c69f0, "apparmorfs"},   /* AppArmor's policy interface */
    {0xf97cff8c, "selinuxfs"},    /* SELinux's policy interface, some files act on access */
    {0x43415d53, "smackfs"},      /* Smack's policy interface */
    {0x0027e0eb, "cgroup"},       /* control files of the cgroup hierarchy */
    {0x63677270, "cgroup2"},      /* the same, version 2; memory.* files can block */
    {0x07655821, "resctrl"},      /* cache and memory bandwidth allocation, read from MSRs */
    {0xcafe4a11, "bpf"},          /* pinned BPF maps and programs */
    {0x62656570, "configfs"},     /* kernel objects made and configured by file operations */
    {0x6165676c, "pstore"},       /* the records of past crashes, erased by their reader */
    {0xde5e81e4, "efivarfs"},     /* UEFI variables, read from the firmware */
    {0x00001cd1, "devpts"},       /* terminals (refused as devices too) */
    {0x65735543, "fusectl"},      /* FUSE connections: reading "waiting", writing "abort" */
    {0x42494e4d, "binfmt_misc"},  /* the kernel's table of binary formats */
    {0x19800202, "mqueue"},       /* POSIX message queues: a read gives queue state, not bytes */
    {0x00000187, "autofs"},       /* mount points that mount when walked; no files of its own */
    {0x6e736673, "nsfs"},         /* namespaces, reached through /proc/PID/ns */
    {0x50494446, "pidfs"},        /* pidfds, reached through /proc/PID/fd */
    {0x50495045, "pipefs"},       /* pipes, reached through /proc/PID/fd: a read blocks */
    {0x534f434b, "sockfs"},       /* sockets, the same */
    {0x09041934, "anon_inodefs"}, /* eventfds, timerfds, signalfds, the same */
    {0xa10a10a1, "aio"},          /* the rings of asynchronous I/O contexts */
    {0x444d4142, "dma_buf"},      /* device buffers shared between drivers */
    {0x474d454d, "guest_memfd"},  /* the private memory of virtual machines */
    {0x5345434d, "secretmem"},    /* memory kept from the kernel itself: reads fail or fault */
    {0x454d444d, "devmem"},       /* /dev/mem's own inodes: physical memory */
    {0x62646576, "bdevfs"},       /* the inodes of block devices */
    {0x00009fa2, "usbdevfs"},     /* USB devices: reads are requests to the device */
    {0x0a647361, "functionfs"},   /* USB gadget endpoints: a read waits for the host */
    {0xaee71ee7, "gadgetfs"},     /* USB gadget endpoints, the older interface, the same */
    {0x6c6f6f70, "binderfs"},     /* Android binder devices and their state */
    {0xabba1974, "xenfs"},        /* the Xen hypervisor's interfaces (xenbus blocks) */
    {0x00687970, "hypfs"},        /* s390 hypervisor data, read from the hypervisor */
    {0x76a9f425, "ocfs2_dlmfs"},  /* OCFS2 cluster locks: opening takes a lock, reads its state */
    {0x67596969, "rpc_pipefs"},   /* pipes to the NFS and Kerberos daemons: a read consumes */
    {0x6e667364, "nfsd"},         /* the NFS server's transaction files: a read acts */
    {0x00009fa1, "openpromfs"},   /* firmware properties, read from the PROM */
};
/* Not listed, on purpose: ext4, XFS, btrfs and other disk file systems;
 * NFS, SMB and FUSE (sshfs, AppImage mounts), where images are found;
 * tmpfs (devtmpfs reports its magic, and holds device nodes, which the
 * regular-file rule refuses), ramfs and hugetlbfs, whose regular files are
 * memory that a read only copies. */

const char *regfile_linux_fs(uint32_t magic)
{
    for (size_t i = 0; i < sizeof kernel_kinds / sizeof kernel_kinds[0]; i++)
        if (kernel_kinds[i].magic == magic)
            return kernel_kinds[i].name;
    return NULL;
}
#endif

/* The name of a kernel file system (whose files are views of kernel state,
 * where reading can consume or act), or NULL for an ordinary one. */
static const char *kernel_fs(const struct statfs *sf)
{
#ifdef __APPLE__
    static const char *const names[] = {"devfs", "fdesc"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(sf->f_fstypename, names[i]) == 0)
            return names[i];
    return NULL;
#else
    return regfile_linux_fs((uint32_t)sf->f_type);
#endif
}

/* 0 when st and sf describe a regular file on an ordinary file system;
 * -1 with why set otherwise. */
static int admit(const struct stat *st, const struct statfs *sf, char *why, size_t whylen)
{
    if (!S_ISREG(st->st_mode)) {
        snprintf(why, whylen, "not a regular file (%s)", regfile_kind(st->st_mode));
        return -1;
    }
    const char *fs = kernel_fs(sf);
    if (fs != NULL) {
        snprintf(why, whylen, "on %s, a kernel file system, not an ordinary one", fs);
        return -1;
    }
    return 0;
}

/* fstat and fstatfs of fd: the file st described, still admitted; the
 * fstat into *out. Returns 0, or -1 with why set. */
static int confirm(int fd, const struct stat *st, struct stat *out, char *why, size_t whylen)
{
    struct statfs sf;
    if (fstat(fd, out) != 0 || fstatfs(fd, &sf) != 0) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        return -1;
    }
    /* The path may name another file by now (a rename, a symlink changed). */
    if (out->st_dev != st->st_dev || out->st_ino != st->st_ino) {
        snprintf(why, whylen, "not read: it was replaced by another file while being opened");
        return -1;
    }
    return admit(out, &sf, why, whylen);
}

#if defined(__linux__) && defined(O_PATH)
/* The race-free open: an O_PATH descriptor opens no device and no FIFO
 * (no driver's open runs), so the file it holds is vetted before anything
 * opens it, then reopened through /proc/self/fd, which opens that very
 * file whatever the path names by now. Returns the descriptor, -1 with
 * why set, or -2 when /proc is not procfs here (the caller falls back). */
static int open_vetted(const char *path, const struct stat *st, struct stat *out, char *why,
                       size_t whylen)
{
    struct statfs pf;
    if (statfs("/proc/self/fd", &pf) != 0 || (uint32_t)pf.f_type != 0x00009fa0u)
        return -2;
    int pfd = open(path, O_PATH | O_CLOEXEC);
    if (pfd < 0) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat pst;
    if (confirm(pfd, st, &pst, why, whylen) != 0) {
        close(pfd);
        return -1;
    }
    char self[40];
    snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
    int fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int err = errno;
    close(pfd);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open: %s", strerror(err));
        return -1;
    }
    if (confirm(fd, st, out, why, whylen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}
#endif

int regfile_open(const char *path, struct stat *out, char *why, size_t whylen)
{
    struct stat st, fst;
    struct statfs sf;
    if (stat(path, &st) != 0 || (S_ISREG(st.st_mode) && statfs(path, &sf) != 0)) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        return -1;
    }
    if (admit(&st, S_ISREG(st.st_mode) ? &sf : NULL, why, whylen) != 0)
        return -1;
    int fd;
#if defined(__linux__) && defined(O_PATH)
    fd = open_vetted(path, &st, &fst, why, whylen);
    if (fd == -1)
        return -1;
    if (fd >= 0) {
        if (out != NULL)
            *out = fst;
        return fd;
    }
#endif
    /* Without O_PATH (macOS) or /proc: a file swapped in between the stat
     * and the open is opened before fstat refuses it. */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        return -1;
    }
    if (confirm(fd, &st, &fst, why, whylen) != 0) {
        close(fd);
        return -1;
    }
    if (out != NULL)
        *out = fst;
    return fd;
}
