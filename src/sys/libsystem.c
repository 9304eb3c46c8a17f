/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * libsystem.c - resolve thread_selfcounts, proc_pid_rusage and sysctlbyname,
 * from libSystem on a Mac or from <root>/usr/lib/system/libsystem_kernel.dylib.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dkperf/kperf.h"
#include "sys/image_cache.h"
#include "sys/libsystem.h"
#include "util/util.h"

/* dk__image_fill: resolve the calls from libSystem (no root) or from
 * <root>/usr/lib/system/libsystem_kernel.dylib. A call the image lacks
 * stays NULL: its users say which is missing. */
static int load_calls(const char *root, void *slot, void *ctx)
{
    (void)ctx;
    dk__libsystem *calls = slot;
    void *handle;
    char path[DK_LOAD_PATH_MAX];
    if (root[0] == '\0') {
#ifdef __APPLE__
        handle = RTLD_DEFAULT;
        snprintf(path, sizeof path, "libSystem");
#else
        return dk__fail(DK_ELOAD, "thread_selfcounts and proc_pid_rusage exist only on macOS (or "
                                  "under a framework root)");
#endif
    } else {
        int n = snprintf(path, sizeof path, "%s%s", root, DK__LIBSYSTEM_KERNEL_PATH);
        if (n < 0 || (size_t)n >= sizeof path)
            return dk__fail(DK_ELOAD, "the framework root is too long for %s",
                            DK__LIBSYSTEM_KERNEL_PATH);
        handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
        if (handle == NULL) {
            const char *why = dlerror();
            return dk__fail(DK_ELOAD, "cannot open %.1023s: %.400s", path,
                            why != NULL ? why : "unknown dlopen error");
        }
    }
    void *p = dlsym(handle, "thread_selfcounts");
    memcpy(&calls->thread_selfcounts, &p, sizeof p);
    p = dlsym(handle, "proc_pid_rusage");
    memcpy(&calls->proc_pid_rusage, &p, sizeof p);
    p = dlsym(handle, "sysctlbyname");
    memcpy(&calls->sysctlbyname, &p, sizeof p);
    p = dlsym(handle, "sysctl");
    memcpy(&calls->sysctl, &p, sizeof p);
    p = dlsym(handle, "proc_pidinfo");
    memcpy(&calls->proc_pidinfo, &p, sizeof p);
    return 0;
}

int dk__libsystem_load(const char *root, const dk__libsystem **out)
{
    void *slot = NULL;
    int rc = dk__image_once("libSystem", root, sizeof(dk__libsystem), load_calls, NULL, &slot);
    if (rc == 0)
        *out = slot;
    return rc;
}

/* proc_pid_rusage(pid, flavor) into ri: 0, or the failure said. The V6
 * flavor is refused before macOS 12 (EINVAL or ENOTSUP: DK_ENOTSUP). */
static int pid_rusage(const char *root, int pid, int flavor, void *ri)
{
    const dk__libsystem *ls = NULL;
    int rc = dk__libsystem_load(root, &ls);
    if (rc != 0)
        return rc;
    if (ls->proc_pid_rusage == NULL)
        return dk__fail(DK_ENOTSUP, "proc_pid_rusage is missing from libSystem");
    if (pid == 0)
        pid = getpid();
    if (ls->proc_pid_rusage(pid, flavor, ri) == 0)
        return 0;
    int e = errno != 0 ? errno : EIO;
    if (flavor == DK__RUSAGE_INFO_V6 && (e == EINVAL || e == ENOTSUP))
        return dk__fail_os(DK_ENOTSUP, e,
                           "proc_pid_rusage(%d, RUSAGE_INFO_V6) was refused: "
                           "the per-level split needs macOS 12 or later",
                           pid);
    if (e == EPERM || e == EACCES)
        return dk__fail_os(DK_EPERM, e, "proc_pid_rusage(%d) was refused", pid);
    return dk__fail_os(DK_EOS, e, "proc_pid_rusage(%d) failed", pid);
}

int dk__proc_cpi(const char *root, int pid, uint64_t *instructions, uint64_t *cycles)
{
    struct dk__rusage_info_v4 ri;
    memset(&ri, 0, sizeof ri);
    int rc = pid_rusage(root, pid, DK__RUSAGE_INFO_V4, &ri);
    if (rc != 0)
        return rc;
    *instructions = ri.ri_instructions;
    *cycles = ri.ri_cycles;
    return 0;
}

int dk__proc_cpi_p(const char *root, int pid, uint64_t counts[4])
{
    struct dk__rusage_info_v6 ri;
    memset(&ri, 0, sizeof ri);
    int rc = pid_rusage(root, pid, DK__RUSAGE_INFO_V6, &ri);
    if (rc != 0)
        return rc;
    counts[0] = ri.v4.ri_instructions;
    counts[1] = ri.v4.ri_cycles;
    counts[2] = ri.ri_pinstructions;
    counts[3] = ri.ri_pcycles;
    return 0;
}

int dk__sysctl_int(const char *root, const char *name, int *value)
{
    const dk__libsystem *ls = NULL;
    dk__error_state saved;
    dk__error_save(&saved); /* a missing node is an answer, not an error */
    int rc = dk__libsystem_load(root, &ls);
    dk__error_restore(&saved);
    if (rc != 0 || ls->sysctlbyname == NULL)
        return -1;
    int32_t v = 0;
    size_t len = sizeof v;
    if (ls->sysctlbyname(name, &v, &len, NULL, 0) != 0 || len != sizeof v)
        return -1;
    *value = v;
    return 0;
}

int dk__sysctl_text(const char *root, const char *name, char *buf, size_t size)
{
    const dk__libsystem *ls = NULL;
    dk__error_state saved;
    dk__error_save(&saved);
    int rc = dk__libsystem_load(root, &ls);
    dk__error_restore(&saved);
    if (rc != 0 || ls->sysctlbyname == NULL || size == 0)
        return -1;
    size_t len = size - 1;
    if (ls->sysctlbyname(name, buf, &len, NULL, 0) != 0)
        return -1;
    buf[len < size ? len : size - 1] = '\0';
    return 0;
}
