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
    /* The magic numbers of <linux/magic.h>. devtmpfs reports tmpfs's, and
     * holds device nodes, which the regular-file rule refuses. */
    static const struct {
        uint32_t magic;
        const char *name;
    } kinds[] = {
        {0x00009fa0, "procfs"},       {0x62656572, "sysfs"},      {0x64626720, "debugfs"},
        {0x74726163, "tracefs"},      {0x73636673, "securityfs"}, {0x0027e0eb, "cgroup"},
        {0x63677270, "cgroup2"},      {0xcafe4a11, "bpf"},        {0x62656570, "configfs"},
        {0x6165676c, "pstore"},       {0xde5e81e4, "efivarfs"},   {0x00001cd1, "devpts"},
        {0xf97cff8c, "selinuxfs"},    {0x43415d53, "smackfs"},    {0x65735543, "fusectl"},
        {0x42494e4d, "binfmt_misc"},  {0x19800202, "mqueue"},     {0x6e736673, "nsfs"},
        {0x50495045, "pipefs"},       {0x534f434b, "sockfs"},     {0x09041934, "anon_inodefs"},
        {0x62646576, "bdevfs"},       {0x00009fa2, "usbdevfs"},   {0x5345434d, "secretmem"},
        {0x454d444d, "devmem"},       {0x67596969, "rpc_pipefs"}, {0x00009fa1, "openpromfs"},
        {0x6e667364, "nfsd"},
    };
    uint32_t t = (uint32_t)sf->f_type;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].magic == t)
            return kinds[i].name;
    return NULL;
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
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        return -1;
    }
    /* The path may name another file by now (a rename, a symlink changed). */
    if (fstat(fd, &fst) != 0 || fstatfs(fd, &sf) != 0) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
        snprintf(why, whylen, "not read: it was replaced by another file while being opened");
        close(fd);
        return -1;
    }
    if (admit(&fst, &sf, why, whylen) != 0) {
        close(fd);
        return -1;
    }
    if (out != NULL)
        *out = fst;
    return fd;
}
