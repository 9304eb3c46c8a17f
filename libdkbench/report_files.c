/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_files.c - the files a benchmark program writes its reports to
 * (--json, --csv, --markdown, --gbench-json, --html): opened before
 * anything runs, written at the end; see report.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "libdkbench/cli.h"
#include "libdkbench/report.h"

int dkb_open_report(const char *prog, dkb_report_file *r)
{
    struct stat st;
    bool exists = stat(r->path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        dkb_say("%s: %s %s: cannot write the %s report there: %s", prog, r->option, r->path,
                r->what, strerror(EISDIR));
        return 1;
    }
    int fd = open(r->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0 || (r->f = fdopen(fd, "w")) == NULL) {
        dkb_say("%s: %s %s: cannot write the %s report there: %s", prog, r->option, r->path,
                r->what, strerror(errno));
        if (fd >= 0)
            close(fd);
        if (fd >= 0 && !exists)
            unlink(r->path);
        return 1;
    }
    r->created = !exists;
    return 0;
}

/* Closes r's file; when nothing was written to it (keep false), a file
 * this run made is removed. */
void dkb_close_report(dkb_report_file *r, bool keep)
{
    if (r->f == NULL)
        return;
    fclose(r->f);
    r->f = NULL;
    if (!keep && r->created)
        unlink(r->path);
}

int dkb_write_report(const char *prog, dkb_report_file *r, const dkb_run_info *run,
                     const dkb_result *const *rs, const dkb_result *const *base, size_t n)
{
    FILE *f = r->f;
    const char *what = r->what, *path = r->path;
    r->f = NULL;
    /* A regular file loses what it held before; a pipe or a device
     * cannot be truncated, and need not be. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fileno(f), 0) != 0) {
        dkb_say("%s: cannot write the %s report to %s: %s", prog, what, path, strerror(errno));
        fclose(f);
        return 1;
    }
    int rc;
    if (strcmp(what, "JSON") == 0)
        rc = dkb_report_json(f, run, rs, n);
    else if (strcmp(what, "CSV") == 0)
        rc = dkb_report_csv(f, run, rs, n);
    else if (strcmp(what, "Markdown") == 0)
        rc = dkb_report_markdown(f, run, rs, n);
    else if (strncmp(what, "google benchmark ", 17) == 0) {
        dkb_gbench_view dflt = {.executable = prog};
        const dkb_gbench_view *v = r->view != NULL ? r->view : &dflt;
        /* google benchmark's file reporters write the machine's
         * description into the file too. */
        if (strcmp(what + 17, "console") == 0)
            rc = dkb_report_gbench_console(f, NULL, run, rs, n, v);
        else if (strcmp(what + 17, "CSV") == 0)
            rc = dkb_report_gbench_csv(f, NULL, run, rs, n, v);
        else
            rc = dkb_report_gbench_view(f, run, rs, n, v);
    } else
        rc = dkb_report_html(f, run, rs, base, n);
    if (fclose(f) != 0 && rc == 0)
        rc = dkb_fail(DK_EOS, "closing %s: %s", path, strerror(errno));
    if (rc != 0) {
        dkb_say("%s: writing the %s report to %s failed: %s", prog, what, path, dkb_last_error());
        return 1;
    }
    return 0;
}
