/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * baseline_save.c - writing a baseline: the check before anything runs
 * that it can be saved, and the save itself (the JSON report, written to a
 * temporary file and renamed onto the baseline's path); baseline.c reads.
 * And builds saved for --ab (--save-build), and the check of --ab's
 * program.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "libdkbench/cli.h"
#include "libdkbench/report.h"

/* dir/name.ext, what ("baseline", "build") naming the kind in errors. */
static int results_path(char *out, size_t size, const char *dir, const char *name, const char *ext,
                        const char *what, const char *fn)
{
    if (dir == NULL || name == NULL || name[0] == 0 || strchr(name, '/') != NULL ||
        strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return dkb_fail(DK_EINVAL, "%s: the %s name \"%s\" must be non-empty and have no '/'", fn,
                        what, name ? name : "(null)");
    if (dir[0] == '\0') /* else "/NAME.json", at the root */
        return dkb_fail(DK_EINVAL, "%s: the results directory must not be empty", fn);
    if ((size_t)snprintf(out, size, "%s/%s.%s", dir, name, ext) >= size)
        return dkb_fail(DK_EINVAL, "%s: the %s path %s/%s.%s is too long", fn, what, dir, name,
                        ext);
    return 0;
}

int dkb__baseline_path(char *out, size_t size, const char *dir, const char *name, const char *fn)
{
    return results_path(out, size, dir, name, "json", "baseline", fn);
}

int dkb_build_path(char *out, size_t size, const char *dir, const char *name)
{
    return results_path(out, size, dir, name, "build", "build", "--save-build");
}

int dkb_build_save(const char *dir, const char *name, const char *exe)
{
    char path[4096], tmp[4200];
    int rc = dkb_build_path(path, sizeof path, dir, name);
    if (rc != 0)
        return rc;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return dkb_fail(DK_EOS, "build directory %s: cannot create it (%s)", dir, strerror(errno));
    int in = open(exe, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return dkb_fail(DK_EOS, "build %s: cannot read %s (%s)", path, exe, strerror(errno));
    snprintf(tmp, sizeof tmp, "%s/.%s.build.XXXXXX", dir, name);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        rc = dkb_fail(DK_EOS, "build %s: cannot create a temporary file in %s (%s)", path, dir,
                      strerror(errno));
        close(in);
        return rc;
    }
    char buf[65536];
    ssize_t got;
    while (rc == 0 && (got = read(in, buf, sizeof buf)) != 0) {
        if (got < 0) {
            if (errno != EINTR)
                rc = dkb_fail(DK_EOS, "build %s: reading %s: %s", path, exe, strerror(errno));
            continue;
        }
        for (ssize_t off = 0; rc == 0 && off < got;) {
            ssize_t w = write(fd, buf + off, (size_t)(got - off));
            if (w < 0 && errno != EINTR)
                rc = dkb_fail(DK_EOS, "build %s: writing: %s", path, strerror(errno));
            off += w > 0 ? w : 0;
        }
    }
    close(in);
    if (rc == 0 && fchmod(fd, 0755) != 0)
        rc = dkb_fail(DK_EOS, "build %s: chmod: %s", path, strerror(errno));
    if (close(fd) != 0 && rc == 0)
        rc = dkb_fail(DK_EOS, "build %s: writing: %s", path, strerror(errno));
    if (rc == 0 && rename(tmp, path) != 0)
        rc =
            dkb_fail(DK_EOS, "build %s: cannot rename %s onto it (%s)", path, tmp, strerror(errno));
    if (rc != 0)
        unlink(tmp);
    return rc;
}

int dkb_baseline_check(const char *dir, const char *name, bool *created)
{
    char path[4096], tmp[4200];
    *created = false;
    int rc = dkb__baseline_path(path, sizeof path, dir, name, "--save-baseline");
    if (rc != 0)
        return rc;
    if (mkdir(dir, 0777) == 0)
        *created = true;
    else if (errno != EEXIST)
        return dkb_fail(DK_EOS, "baseline directory %s: cannot create it (%s)", dir,
                        strerror(errno));
    /* A file made and removed at once: the one sure test that the
     * baseline can be written there (access() ignores read-only mounts
     * and ACLs on some systems). */
    snprintf(tmp, sizeof tmp, "%s/.%s.json.XXXXXX", dir, name);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        rc = dkb_fail(DK_EOS, "baseline %s: cannot create a file in %s (%s)", path, dir,
                      strerror(errno));
        if (*created && rmdir(dir) == 0)
            *created = false;
        return rc;
    }
    close(fd);
    unlink(tmp);
    /* The file is renamed onto the path at the end: a directory there
     * would refuse it only after every run. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return dkb_fail(DK_EOS, "baseline %s: is a directory; name another baseline", path);
    return 0;
}

int dkb_baseline_save(const char *dir, const char *name, const dkb_run_info *run,
                      const dkb_result *const *results, size_t n)
{
    char path[4096], tmp[4200];
    int rc = dkb__baseline_path(path, sizeof path, dir, name, "dkb_baseline_save");
    if (rc != 0)
        return rc;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return dkb_fail(DK_EOS, "baseline directory %s: cannot create it (%s)", dir,
                        strerror(errno));
    snprintf(tmp, sizeof tmp, "%s/.%s.json.XXXXXX", dir, name);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return dkb_fail(DK_EOS, "baseline %s: cannot create a temporary file in %s (%s)", path, dir,
                        strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        rc = dkb_fail(DK_EOS, "baseline %s: fdopen failed (%s)", path, strerror(errno));
        close(fd);
        unlink(tmp);
        return rc;
    }
    rc = dkb_report_json(f, run, results, n);
    if (rc == 0 && fsync(fileno(f)) != 0)
        rc = dkb_fail(DK_EOS, "baseline %s: fsync failed (%s)", path, strerror(errno));
    if (fclose(f) != 0 && rc == 0)
        rc = dkb_fail(DK_EOS, "baseline %s: writing failed (%s)", path, strerror(errno));
    if (rc == 0 && rename(tmp, path) != 0)
        rc = dkb_fail(DK_EOS, "baseline %s: cannot rename %s onto it (%s)", path, tmp,
                      strerror(errno));
    if (rc != 0) {
        if (strstr(dkb_last_error(), "JSON report") != NULL) {
            char why[1024];
            snprintf(why, sizeof why, "%s", dkb_last_error());
            rc = dkb_fail(rc, "baseline %s: %s", path, why);
        }
        unlink(tmp);
    }
    return rc;
}

int dkb_ab_check(const char *prog, const dkb_options *o, char *path, size_t size)
{
    if (o->baseline != NULL) {
        dkb_say("%s: --ab and --baseline: compare with one of them at a time", prog);
        return 2;
    }
    if (o->processes_given && o->processes < 2) {
        dkb_say("%s: --ab needs 2 pairs of processes or more (--processes %zu)", prog,
                o->processes);
        return 2;
    }
    if (strchr(o->ab, '/') != NULL) {
        snprintf(path, size, "%s", o->ab);
    } else if (dkb_build_path(path, size, o->results_dir, o->ab) != 0) {
        dkb_say("%s: --ab %s: %s", prog, o->ab, dkb_last_error());
        return 2;
    } else if (access(path, F_OK) != 0) {
        dkb_say("%s: --ab %s: no saved build of that name in %s (save one with --save-build "
                "%s; a program in this directory is ./%s)",
                prog, o->ab, o->results_dir, o->ab, o->ab);
        return 1;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, X_OK) != 0) {
        dkb_say("%s: --ab %s: cannot run it: %s", prog, path,
                stat(path, &st) != 0   ? strerror(errno)
                : !S_ISREG(st.st_mode) ? "not a regular file"
                                       : strerror(errno));
        return 1;
    }
    return 0;
}
