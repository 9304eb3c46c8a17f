/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * libsystem_sim.c - a simulated macOS libsystem_kernel.dylib for the
 * unprivileged counters: thread_selfcounts(), proc_pid_rusage() and the
 * sysctlbyname() nodes the library reads (hw.nperflevels,
 * hw.perflevelN.name; kperf.* through the kperf sim), and for sampling sysctl() of the kdebug trace buffer
 * and proc_pidinfo(PROC_PIDREGIONPATHINFO, PROC_PIDTBSDINFO). Test code;
 * see README.md.
 *
 * A thread's instructions and cycles follow its own CPU time, split into
 * performance levels by the CPU it runs on (CPU number modulo the levels):
 * level 0 ("Performance") at 3 GHz and 2.5 instructions per cycle, level 1
 * ("Efficiency") at 2 GHz and 2 per cycle. A process's totals follow its
 * CPU time at the level-0 rates.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "sim_kernel.h"
#include "sys/libsystem.h"

#define LEVELS_MAX 4

static const struct {
    uint32_t cycles_per_us;
    uint32_t insts_per_us;
    const char *name;
} level_rates[LEVELS_MAX] = {
    {3000, 7500, "Performance"},
    {2000, 4000, "Efficiency"},
    {1500, 2500, "Level2"},
    {1000, 1500, "Level3"},
};

/* hw.nperflevels: DKPERF_SIM_PERFLEVELS, else the chip's layout (2 on
 * Apple chips, 1 on Intel). */
static unsigned levels(void) { return sim_cpu_layout()->levels; }

static uint64_t cpu_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifndef SIM_OMIT_SELFCOUNTS
typedef struct thread_counts {
    bool started;
    uint64_t last_ns;
    struct dk__thsc_cpi level[LEVELS_MAX];
} thread_counts;

static _Thread_local thread_counts self;

/* Charge the CPU time since the last call to the level of this CPU. */
static void settle(void)
{
    uint64_t now = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    if (self.started) {
        int cpu = sched_getcpu();
        unsigned level = (unsigned)(cpu < 0 ? 0 : cpu) % levels();
        uint64_t delta = now - self.last_ns;
        self.level[level].tcpi_cycles += delta * level_rates[level].cycles_per_us / 1000;
        self.level[level].tcpi_instructions += delta * level_rates[level].insts_per_us / 1000;
    }
    self.started = true;
    self.last_ns = now;
}

SIM_API int thread_selfcounts(int kind, void *dst, size_t size)
{
    int code;
    if (sim_fault("thread_selfcounts", &code)) {
        errno = code;
        return -1;
    }
    if (dst == NULL) {
        errno = EFAULT;
        return -1;
    }
    settle();
    unsigned n = levels();
    if (kind == DK__THSC_CPI) {
        struct dk__thsc_cpi total = {0, 0};
        for (unsigned i = 0; i < n; i++) {
            total.tcpi_instructions += self.level[i].tcpi_instructions;
            total.tcpi_cycles += self.level[i].tcpi_cycles;
        }
        memcpy(dst, &total, size < sizeof total ? size : sizeof total);
        return 0;
    }
    if (kind == DK__THSC_CPI_PER_PERF_LEVEL) {
        size_t bytes = n * sizeof self.level[0];
        memcpy(dst, self.level, size < bytes ? size : bytes);
        return 0;
    }
    errno = EINVAL;
    return -1;
}
#endif

/* utime + stime of another process from /proc, in ns. */
static int other_process_ns(int pid, uint64_t *ns)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long long utime = 0, stime = 0;
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return -1;
    *ns = (utime + stime) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
    return 0;
}

SIM_API int proc_pid_rusage(int pid, int flavor, void *buffer)
{
    int code;
    if (sim_fault("proc_pid_rusage", &code)) {
        errno = code;
        return -1;
    }
    if (buffer == NULL || (flavor != DK__RUSAGE_INFO_V4 && flavor != DK__RUSAGE_INFO_V6)) {
        errno = EINVAL;
        return -1;
    }
    uint64_t ns;
    if (pid == getpid()) {
        ns = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    } else if (other_process_ns(pid, &ns) != 0) {
        errno = ESRCH;
        return -1;
    }
    struct dk__rusage_info_v6 ri;
    memset(&ri, 0, sizeof ri);
    ri.v4.ri_user_time = ns;
    ri.v4.ri_cycles = ns * level_rates[0].cycles_per_us / 1000;
    ri.v4.ri_instructions = ns * level_rates[0].insts_per_us / 1000;
    /* V6: the P-core part, fixed shares (a guess: no process's placement
     * is simulated): 70% of the cycles retire 75% of the instructions, so
     * that the E cores show the lower IPC. */
    ri.ri_user_ptime = ns / 10 * 7;
    ri.ri_pcycles = ri.v4.ri_cycles / 10 * 7;
    ri.ri_pinstructions = ri.v4.ri_instructions / 4 * 3;
    memcpy(buffer, &ri, flavor == DK__RUSAGE_INFO_V6 ? sizeof ri : sizeof ri.v4);
    return 0;
}

/* sysctl_io_number / sysctl_handle_string: size with oldp NULL, ENOMEM
 * for a short buffer. */
static int copy_out(const void *v, size_t len, void *oldp, size_t *oldlenp)
{
    if (oldlenp == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (oldp == NULL || *oldlenp < len) {
        *oldlenp = len;
        return oldp == NULL ? 0 : (errno = ENOMEM, -1);
    }
    memcpy(oldp, v, len);
    *oldlenp = len;
    return 0;
}

/* kperf.debug_level (kperfbsd.c kperf_debug_level): stored, not acted on. */
static int kperf_debug_level;

/*
 * The kernel's nodes that need no framework loaded: kperfbsd.c's
 * kperf.limits.* (kperf_sysctl_limits: kptimer_minperiods_ns as a
 * CTLTYPE_QUAD, CTLFLAG_RD|CTLFLAG_ANYBODY; max_action_count the
 * SYSCTL_INT kperf_max_actions, ACTION_MAX 32) and kperf.debug_level (RW
 * without CTLFLAG_ANYBODY: root to write), kern_ktrace.c's
 * ktrace.background_pid (SYSCTL_INT ktrace_bg_pid: background mode is not
 * modelled, 0) and ktrace.configured_by (SYSCTL_STRING
 * ktrace_last_owner_execname). 1: not one of them.
 */
static int kernel_node(const char *name, void *oldp, size_t *oldlenp, const void *newp,
                       size_t newlen)
{
    static const char *const limits[] = {"timer_min_period_ns", "timer_min_bg_period_ns",
                                         "timer_min_pet_period_ns", "timer_min_bg_pet_period_ns"};
    const sim_chip *c = sim_current_chip();
    bool x86 = c != NULL && c->architecture == KPEP_ARCH_X86_64;
    /* kptimer.c kptimer_minperiods_ns: FG, BG, FG_PET, BG_PET. */
    const uint64_t min_ns[] = {x86 ? 20000u : 50000u, 1000000u, 1000000u, 1000000u};
    bool write = newp != NULL || newlen != 0;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        if (strncmp(name, "kperf.limits.", 13) != 0 || strcmp(name + 13, limits[i]) != 0)
            continue;
        if (write) /* kern_newsysctl.c sysctl_root: no CTLFLAG_WR */
            return errno = EPERM, -1;
        return copy_out(&min_ns[i], sizeof min_ns[i], oldp, oldlenp);
    }
    if (strcmp(name, "kperf.limits.max_action_count") == 0 ||
        strcmp(name, "ktrace.background_pid") == 0) {
        if (write)
            return errno = EPERM, -1;
        int32_t v = name[0] == 'k' && name[1] == 'p' ? 32 : 0;
        return copy_out(&v, sizeof v, oldp, oldlenp);
    }
    if (strcmp(name, "ktrace.configured_by") == 0) {
        if (write)
            return errno = EPERM, -1;
        char comm[17];
        simk_configured_by(comm, sizeof comm);
        return copy_out(comm, strlen(comm) + 1, oldp, oldlenp);
    }
    if (strcmp(name, "kperf.debug_level") == 0) {
        /* sysctl_root: a write to a node without CTLFLAG_ANYBODY needs root. */
        if (write && !sim_privileged())
            return errno = EPERM, -1;
        if (write && newlen < sizeof(int))
            return errno = EINVAL, -1;
        int32_t v = __atomic_load_n(&kperf_debug_level, __ATOMIC_RELAXED);
        if (oldp != NULL || oldlenp != NULL) {
            if (copy_out(&v, sizeof v, oldp, oldlenp) != 0)
                return -1;
        }
        if (write) {
            memcpy(&v, newp, sizeof v);
            __atomic_store_n(&kperf_debug_level, v, __ATOMIC_RELAXED);
        }
        return 0;
    }
    return 1;
}

SIM_API int sysctlbyname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
{
    if (name == NULL) {
        errno = EINVAL;
        return -1;
    }
    int k = kernel_node(name, oldp, oldlenp, newp, newlen);
    if (k <= 0)
        return k;
    /* kperf's nodes (kperf.*), readable and writable: the kperf sim's. */
    if (strncmp(name, "kperf.", 6) == 0) {
        int e = simk_kperf_sysctl(name, oldp, oldlenp, newp, newlen);
        if (e != 0) {
            errno = e;
            return -1;
        }
        return 0;
    }
    if (newp != NULL || newlen != 0) {
        /* Every other node here is CTLFLAG_RD: kern_newsysctl.c sysctl_root
         * finds the name first (ENOENT), then refuses the write with EPERM. */
        size_t len = 0;
        errno = sysctlbyname(name, NULL, &len, NULL, 0) == 0 ? EPERM : ENOENT;
        return -1;
    }
    if (oldlenp == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (strcmp(name, "hw.nperflevels") == 0) {
        int32_t n = (int32_t)levels();
        if (oldp == NULL || *oldlenp < sizeof n) {
            *oldlenp = sizeof n;
            return oldp == NULL ? 0 : (errno = ENOMEM, -1);
        }
        memcpy(oldp, &n, sizeof n);
        *oldlenp = sizeof n;
        return 0;
    }
    const sim_layout *lay = sim_cpu_layout();
    unsigned physical = 0;
    for (unsigned l = 0; l < lay->levels; l++)
        physical += lay->physical[l];
    int32_t number = -1;
    unsigned level;
    char rest[32];
    if (strcmp(name, "hw.ncpu") == 0 || strcmp(name, "hw.logicalcpu") == 0)
        number = (int32_t)lay->ncpu;
    else if (strcmp(name, "hw.physicalcpu") == 0)
        number = (int32_t)physical;
    else if (strcmp(name, "ktrace.owning_pid") == 0) /* a plain SYSCTL_INT: public, as it is */
        number = (int32_t)simk_owning_pid();
    else if (simk_ktrace_value(name, &number)) /* ktrace.state, ktrace.active_mask */
        ;
    else if (sscanf(name, "hw.perflevel%u.%31s", &level, rest) == 2 && level < levels() &&
             strcmp(rest, "logicalcpu") == 0)
        number = (int32_t)lay->logical[level];
    else if (sscanf(name, "hw.perflevel%u.%31s", &level, rest) == 2 && level < levels() &&
             strcmp(rest, "physicalcpu") == 0)
        number = (int32_t)lay->physical[level];
    if (number >= 0) {
        if (oldp == NULL || *oldlenp < sizeof number) {
            *oldlenp = sizeof number;
            return oldp == NULL ? 0 : (errno = ENOMEM, -1);
        }
        memcpy(oldp, &number, sizeof number);
        *oldlenp = sizeof number;
        return 0;
    }
    if (sscanf(name, "hw.perflevel%u.%31s", &level, rest) == 2 && strcmp(rest, "name") == 0 &&
        level < levels()) {
        size_t len = strlen(level_rates[level].name) + 1;
        if (oldp == NULL || *oldlenp < len) {
            *oldlenp = len;
            return oldp == NULL ? 0 : (errno = ENOMEM, -1);
        }
        memcpy(oldp, level_rates[level].name, len);
        *oldlenp = len;
        return 0;
    }
    errno = ENOENT;
    return -1;
}

/*
 * sysctl(): the kdebug trace buffer ({CTL_KERN, KERN_KDEBUG, op, value}),
 * answered by the simulated kernel (kernel_sim.c) that the simulated kperf
 * framework emits into. Any other name: ENOENT.
 */
SIM_API int sysctl(int *name, unsigned namelen, void *oldp, size_t *oldlenp, void *newp,
                   size_t newlen)
{
    int code;
    if (sim_fault("sysctl", &code)) {
        errno = code;
        return -1;
    }
    if (name == NULL || namelen < 2) {
        errno = EINVAL;
        return -1;
    }
    int e = simk_kdebug_sysctl(name, namelen, oldp, oldlenp, newp, newlen);
    if (e != 0) {
        errno = e;
        return -1;
    }
    return 0;
}

/*
 * proc_pidinfo(pid, PROC_PIDTBSDINFO, arg, ...): struct proc_bsdinfo
 * (bsd/kern/proc_info.c proc_pidinfo_internal, proc_pidbsdinfo) from
 * /proc/<pid>: pbi_comm from comm (Linux keeps 15 characters, as
 * pbi_comm does), pbi_name from the basename of argv[0] (cmdline), pid,
 * ppid, status (SRUN 2, SZOMB 5). A zombie keeps p_name on XNU
 * (proc_pidbsdinfo copies it whatever p_stat is), but Linux drops a
 * zombie's cmdline: its pbi_name is the one this process saw while it ran
 * (same pid and start time), else comm, which Linux keeps. A zombie is
 * found only with a non-zero arg (findzomb), else ESRCH, as is a pid that
 * is gone; a buffer under 136 bytes is ENOMEM.
 */
static void put_name(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Names seen alive, by pid and start time (a reused pid is another
 * process), so that a zombie keeps its own. */
#define SEEN_NAMES 64
static struct seen_name {
    int pid;
    unsigned long long start;
    char name[2 * 16 + 1]; /* MAXCOMLEN * 2 */
} seen_names[SEEN_NAMES];
static unsigned seen_next;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static struct seen_name *seen_of(int pid, unsigned long long start)
{
    for (size_t i = 0; i < SEEN_NAMES; i++)
        if (seen_names[i].pid == pid && seen_names[i].start == start)
            return &seen_names[i];
    return NULL;
}

static int bsdinfo(int pid, uint64_t arg, void *buffer, int buffersize)
{
    struct dk__proc_bsdinfo bi;
    if (buffer == NULL || buffersize < (int)sizeof bi) {
        errno = ENOMEM;
        return 0;
    }
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        errno = ESRCH;
        return 0;
    }
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    const char *close_paren = ok ? strrchr(line, ')') : NULL;
    char state = 0;
    int ppid = 0;
    unsigned long long start = 0;
    /* Fields 3 and 4 (state, ppid), then 22 (starttime). */
    if (close_paren == NULL ||
        sscanf(close_paren + 1,
               " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
               &state, &ppid, &start) != 3) {
        errno = ESRCH;
        return 0;
    }
    if ((state == 'Z' || state == 'X') && arg == 0) {
        errno = ESRCH;
        return 0;
    }
    memset(&bi, 0, sizeof bi);
    bi.pbi_pid = (uint32_t)pid;
    bi.pbi_ppid = (uint32_t)ppid;
    bi.pbi_status = state == 'Z' || state == 'X' ? 5u : 2u;
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if ((f = fopen(path, "r")) != NULL) {
        if (fgets(line, sizeof line, f) != NULL) {
            line[strcspn(line, "\n")] = '\0';
            put_name(bi.pbi_comm, sizeof bi.pbi_comm, line);
        }
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    if ((f = fopen(path, "r")) != NULL) {
        size_t n = fread(line, 1, sizeof line - 1, f);
        line[n] = '\0'; /* argv[0] ends at its NUL */
        fclose(f);
        const char *base = strrchr(line, '/');
        base = base != NULL ? base + 1 : line;
        put_name(bi.pbi_name, sizeof bi.pbi_name, base);
    }
    pthread_mutex_lock(&seen_lock);
    struct seen_name *seen = seen_of(pid, start);
    if (bi.pbi_status == 5u) {
        put_name(bi.pbi_name, sizeof bi.pbi_name, seen != NULL ? seen->name : bi.pbi_comm);
    } else if (bi.pbi_name[0] != '\0') {
        if (seen == NULL)
            seen = &seen_names[seen_next++ % SEEN_NAMES];
        seen->pid = pid;
        seen->start = start;
        put_name(seen->name, sizeof seen->name, bi.pbi_name);
    }
    pthread_mutex_unlock(&seen_lock);
    memcpy(buffer, &bi, sizeof bi);
    return (int)sizeof bi;
}

/*
 * proc_pidinfo(pid, PROC_PIDREGIONPATHINFO, address, ...): the region at or
 * after address, with the path of the file it maps (bsd/kern/proc_info.c
 * proc_pidregionpathinfo, fill_procregioninfo), from /proc/<pid>/maps. Like
 * libproc, 0 with errno on failure; the bytes filled on success.
 */
SIM_API int proc_pidinfo(int pid, int flavor, uint64_t arg, void *buffer, int buffersize)
{
    int code;
    if (sim_fault("proc_pidinfo", &code)) {
        errno = code;
        return 0;
    }
    if (flavor == DK__PROC_PIDTBSDINFO)
        return bsdinfo(pid, arg, buffer, buffersize);
    struct dk__proc_regionwithpathinfo ri;
    if (flavor != DK__PROC_PIDREGIONPATHINFO || buffer == NULL || buffersize < (int)sizeof ri) {
        errno = EINVAL;
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        errno = ESRCH;
        return 0;
    }
    char line[4096 + 256];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        unsigned long long start, end, off;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perms, &off, &name_at) < 4)
            continue;
        if (end <= arg)
            continue;
        memset(&ri, 0, sizeof ri);
        ri.prp_prinfo.pri_address = start;
        ri.prp_prinfo.pri_size = end - start;
        ri.prp_prinfo.pri_offset = off;
        ri.prp_prinfo.pri_protection = (perms[0] == 'r' ? 1u : 0) | (perms[1] == 'w' ? 2u : 0) |
                                       (perms[2] == 'x' ? 4u : 0);
        const char *name = line + name_at;
        while (*name == ' ')
            name++;
        size_t len = strcspn(name, "\n");
        /* Only files: "[heap]", "[vdso]" and anonymous regions have no vnode. */
        if (name[0] == '/' && len < sizeof ri.prp_vip.vip_path) {
            memcpy(ri.prp_vip.vip_path, name, len);
            ri.prp_vip.vip_path[len] = '\0';
        }
        found = true;
    }
    fclose(f);
    if (!found) {
        errno = EINVAL; /* no region at or after the address */
        return 0;
    }
    memcpy(buffer, &ri, sizeof ri);
    return (int)sizeof ri;
}
