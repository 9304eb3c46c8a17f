/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * libsystem.h - the unprivileged macOS counter calls: thread_selfcounts()
 * (macOS 12.4+) and proc_pid_rusage(), looked up at run time. Not installed.
 *
 * On a Mac they come from libSystem (dlsym(RTLD_DEFAULT, ...)); with a
 * framework root they come from <root>/usr/lib/system/libsystem_kernel.dylib,
 * which the simulated root provides.
 */
#ifndef DKPERF_SYS_LIBSYSTEM_H
#define DKPERF_SYS_LIBSYSTEM_H

#include <stddef.h>
#include <stdint.h>

#define DK__LIBSYSTEM_KERNEL_PATH "/usr/lib/system/libsystem_kernel.dylib"

/* thread_selfcounts kinds (sys/resource_private.h). */
#define DK__THSC_CPI 1                /* struct dk__thsc_cpi of the calling thread */
#define DK__THSC_CPI_PER_PERF_LEVEL 2 /* one per hw.nperflevels, P cores first */

struct dk__thsc_cpi {
    uint64_t tcpi_instructions;
    uint64_t tcpi_cycles;
};

#define DK__RUSAGE_INFO_V4 4

/* struct rusage_info_v4 of <sys/resource.h> (296 bytes). */
struct dk__rusage_info_v4 {
    uint8_t ri_uuid[16];
    uint64_t ri_user_time;
    uint64_t ri_system_time;
    uint64_t ri_pkg_idle_wkups;
    uint64_t ri_interrupt_wkups;
    uint64_t ri_pageins;
    uint64_t ri_wired_size;
    uint64_t ri_resident_size;
    uint64_t ri_phys_footprint;
    uint64_t ri_proc_start_abstime;
    uint64_t ri_proc_exit_abstime;
    uint64_t ri_child_user_time;
    uint64_t ri_child_system_time;
    uint64_t ri_child_pkg_idle_wkups;
    uint64_t ri_child_interrupt_wkups;
    uint64_t ri_child_pageins;
    uint64_t ri_child_elapsed_abstime;
    uint64_t ri_diskio_bytesread;
    uint64_t ri_diskio_byteswritten;
    uint64_t ri_cpu_time_qos_default;
    uint64_t ri_cpu_time_qos_maintenance;
    uint64_t ri_cpu_time_qos_background;
    uint64_t ri_cpu_time_qos_utility;
    uint64_t ri_cpu_time_qos_legacy;
    uint64_t ri_cpu_time_qos_user_initiated;
    uint64_t ri_cpu_time_qos_user_interactive;
    uint64_t ri_billed_system_time;
    uint64_t ri_serviced_system_time;
    uint64_t ri_logical_writes;
    uint64_t ri_lifetime_max_phys_footprint;
    uint64_t ri_instructions;
    uint64_t ri_cycles;
    uint64_t ri_billed_energy;
    uint64_t ri_serviced_energy;
    uint64_t ri_interval_max_phys_footprint;
    uint64_t ri_runnable_time;
};

_Static_assert(sizeof(struct dk__rusage_info_v4) == 296, "rusage_info_v4 is 296 bytes");
_Static_assert(offsetof(struct dk__rusage_info_v4, ri_instructions) == 248,
               "ri_instructions at 248");
_Static_assert(offsetof(struct dk__rusage_info_v4, ri_cycles) == 256, "ri_cycles at 256");

#define DK__RUSAGE_INFO_V6 6

/* struct rusage_info_v6 (macOS 12+, 464 bytes): v4, ri_flags, then the
 * performance-core shares of time, instructions, cycles and energy. */
struct dk__rusage_info_v6 {
    struct dk__rusage_info_v4 v4;
    uint64_t ri_flags;
    uint64_t ri_user_ptime;
    uint64_t ri_system_ptime;
    uint64_t ri_pinstructions;
    uint64_t ri_pcycles;
    uint64_t ri_energy_nj;
    uint64_t ri_penergy_nj;
    uint64_t ri_reserved[14];
};

_Static_assert(sizeof(struct dk__rusage_info_v6) == 464, "rusage_info_v6 is 464 bytes");
_Static_assert(offsetof(struct dk__rusage_info_v6, ri_pinstructions) == 320,
               "ri_pinstructions at 320");
_Static_assert(offsetof(struct dk__rusage_info_v6, ri_pcycles) == 328, "ri_pcycles at 328");

typedef int (*dk__thread_selfcounts_fn)(int kind, void *dst, size_t size);
typedef int (*dk__proc_pid_rusage_fn)(int pid, int flavor, void *buffer);
typedef int (*dk__sysctlbyname_fn)(const char *name, void *oldp, size_t *oldlenp, void *newp,
                                   size_t newlen);

typedef int (*dk__sysctl_fn)(int *name, unsigned namelen, void *oldp, size_t *oldlenp, void *newp,
                             size_t newlen);
typedef int (*dk__proc_pidinfo_fn)(int pid, int flavor, uint64_t arg, void *buffer, int buffersize);

/* proc_pidinfo flavor (bsd/sys/proc_info.h): the region at or after an
 * address, with the path of the file it maps. */
#define DK__PROC_PIDREGIONPATHINFO 8

struct dk__proc_regioninfo {
    uint32_t pri_protection; /* VM_PROT_READ 1, WRITE 2, EXECUTE 4 */
    uint32_t pri_max_protection;
    uint32_t pri_inheritance;
    uint32_t pri_flags;
    uint64_t pri_offset;
    uint32_t pri_behavior;
    uint32_t pri_user_wired_count;
    uint32_t pri_user_tag;
    uint32_t pri_pages_resident;
    uint32_t pri_pages_shared_now_private;
    uint32_t pri_pages_swapped_out;
    uint32_t pri_pages_dirtied;
    uint32_t pri_ref_count;
    uint32_t pri_shadow_depth;
    uint32_t pri_share_mode;
    uint32_t pri_private_pages_resident;
    uint32_t pri_shared_pages_resident;
    uint32_t pri_obj_id;
    uint32_t pri_depth;
    uint64_t pri_address;
    uint64_t pri_size;
};

/* struct vnode_info_path: vinfo_stat (136 bytes), vi_type, vi_pad, fsid_t,
 * then the path (MAXPATHLEN). Only the path is read. */
struct dk__vnode_info_path {
    unsigned char vip_vi[152];
    char vip_path[1024];
};

struct dk__proc_regionwithpathinfo {
    struct dk__proc_regioninfo prp_prinfo;
    struct dk__vnode_info_path prp_vip;
};

_Static_assert(sizeof(struct dk__proc_regioninfo) == 96, "proc_regioninfo is 96 bytes");
_Static_assert(sizeof(struct dk__proc_regionwithpathinfo) == 1272,
               "proc_regionwithpathinfo is 1272 bytes");

/* proc_pidinfo flavor PROC_PIDTBSDINFO (bsd/sys/proc_info.h, xnu-11417):
 * struct proc_bsdinfo, 136 bytes. pbi_comm is char[MAXCOMLEN] (16) and
 * pbi_name char[2 * MAXCOMLEN] (32), both NUL-terminated by the kernel
 * (bsd/kern/proc_info.c proc_pidbsdinfo); pbi_name is empty when no name
 * was registered. A non-zero arg finds a zombie too (proc_pidinfo_internal:
 * findzomb); with arg 0 a process that has exited is ESRCH. */
#define DK__PROC_PIDTBSDINFO 3
#define DK__MAXCOMLEN 16

struct dk__proc_bsdinfo {
    uint32_t pbi_flags;
    uint32_t pbi_status;
    uint32_t pbi_xstatus;
    uint32_t pbi_pid;
    uint32_t pbi_ppid;
    uint32_t pbi_uid, pbi_gid, pbi_ruid, pbi_rgid, pbi_svuid, pbi_svgid;
    uint32_t rfu_1;
    char pbi_comm[DK__MAXCOMLEN];
    char pbi_name[2 * DK__MAXCOMLEN];
    uint32_t pbi_nfiles;
    uint32_t pbi_pgid;
    uint32_t pbi_pjobc;
    uint32_t e_tdev;
    uint32_t e_tpgid;
    int32_t pbi_nice;
    uint64_t pbi_start_tvsec;
    uint64_t pbi_start_tvusec;
};

_Static_assert(sizeof(struct dk__proc_bsdinfo) == 136, "proc_bsdinfo is 136 bytes");
_Static_assert(offsetof(struct dk__proc_bsdinfo, pbi_comm) == 48, "pbi_comm at 48");
_Static_assert(offsetof(struct dk__proc_bsdinfo, pbi_name) == 64, "pbi_name at 64");
_Static_assert(offsetof(struct dk__proc_bsdinfo, pbi_start_tvsec) == 120, "pbi_start_tvsec at 120");

/* Any of the pointers may be NULL: the symbol is missing. */
typedef struct dk__libsystem {
    dk__thread_selfcounts_fn thread_selfcounts;
    dk__proc_pid_rusage_fn proc_pid_rusage;
    dk__sysctlbyname_fn sysctlbyname;
    dk__sysctl_fn sysctl;             /* the kdebug trace buffer (sampling) */
    dk__proc_pidinfo_fn proc_pidinfo; /* image regions, process names (sampling) */
} dk__libsystem;

/*
 * Resolve the calls for a framework root (see dk_framework_root). Cached
 * per root, never unloaded. Returns 0 and sets *out, or DK_ELOAD with the
 * path and dlerror() text.
 */
int dk__libsystem_load(const char *root, const dk__libsystem **out);

/*
 * Instructions and cycles process pid (0: this one) has retired, from
 * proc_pid_rusage(RUSAGE_INFO_V4). Returns 0, DK_ELOAD, DK_ENOTSUP, DK_EPERM,
 * DK_EOS.
 */
int dk__proc_cpi(const char *root, int pid, uint64_t *instructions, uint64_t *cycles);

/*
 * As dk__proc_cpi, with the part retired on performance cores
 * (RUSAGE_INFO_V6: ri_pinstructions, ri_pcycles). Returns 0, DK_ENOTSUP
 * (the kernel refuses the V6 flavor: before macOS 12), or as dk__proc_cpi.
 */
int dk__proc_cpi_p(const char *root, int pid, uint64_t counts[4]);

/* An int sysctl through sysctlbyname under root. Returns 0 with *value set,
 * or -1 (missing call or node). */
int dk__sysctl_int(const char *root, const char *name, int *value);
/* A string sysctl; returns 0 or -1. */
int dk__sysctl_text(const char *root, const char *name, char *buf, size_t size);

#endif /* DKPERF_SYS_LIBSYSTEM_H */
