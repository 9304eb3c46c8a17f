/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * events.c - chip-agnostic events, CPU names, and portable event names.
 */
#include <string.h>

#include "core/core.h"
#include "events/tables.h"

#define DK__STR2(x) #x
#define DK__STR(x) DK__STR2(x)

const char *dk_version(void)
{
    return DK__STR(DKPERF_VERSION_MAJOR) "." DK__STR(DKPERF_VERSION_MINOR) "." DK__STR(
        DKPERF_VERSION_PATCH);
}

const char *dk_event_name(dk_event ev) { return dk__event_ident(ev); }

int dk_event_from_name(const char *name, dk_event *out)
{
    if (name == NULL || out == NULL)
        return dk__fail(DK_EINVAL, "dk_event_from_name: name and out must not be NULL");
    for (int i = 0; i < DK_EVENT_COUNT; i++) {
        if (dk__strcasecmp(dk__event_ident((dk_event)i), name) == 0) {
            *out = (dk_event)i;
            return 0;
        }
    }
    return dk__fail(DK_ENOEVENT, "no chip-agnostic event is named %s", name);
}

const dk_event_def *dk_event_on(dk_event ev, dk_cpu cpu) { return dk__event_on(ev, cpu); }

const char *dk_cpu_name(dk_cpu cpu)
{
    switch (cpu) {
    case DK_CPU_M1:
        return "M1";
    case DK_CPU_M2:
        return "M2";
    case DK_CPU_M3:
        return "M3";
    case DK_CPU_M4:
        return "M4";
    case DK_CPU_M5:
        return "M5";
    case DK_CPU_INTEL:
        return "Intel";
    default:
        return "unknown";
    }
}

/*
 * Portable names and the native events they stand for, most specific first.
 * Apple: retired (_NONSPEC) events where the chip has them. Intel: the
 * events of data/intel-generic.tsv and the fixed counters of its README.
 */
typedef struct portable {
    const char *name;
    const char *description;
    const char *const apple[4];
    const char *const intel[4];
    const char *const perf[3]; /* perf_event names */
} portable;

static const portable portables[] = {
    {"instructions",
     "retired instructions",
     {"FIXED_INSTRUCTIONS", "INST_ALL", NULL},
     {"INST_RETIRED.ANY", "INST_RETIRED.ANY_P", NULL},
     {"instructions", NULL}},
    {"cycles",
     "core clock cycles while the thread runs",
     {"FIXED_CYCLES", "CORE_ACTIVE_CYCLE", NULL},
     {"CPU_CLK_UNHALTED.THREAD", "CPU_CLK_UNHALTED.CORE", "CPU_CLK_UNHALTED.THREAD_P", NULL},
     {"cpu-cycles", NULL}},
    {"branches",
     "retired branch instructions",
     {"INST_BRANCH", NULL},
     {"BR_INST_RETIRED.ALL_BRANCHES", NULL},
     {"branch-instructions", NULL}},
    {"branch-misses",
     "retired mispredicted branches",
     {"BRANCH_MISPRED_NONSPEC", "BRANCH_MISPREDICT", NULL},
     {"BR_MISP_RETIRED.ALL_BRANCHES", NULL},
     {"branch-misses", NULL}},
    {"l1d-load-misses",
     "loads that missed the L1 data cache",
     {"L1D_CACHE_MISS_LD_NONSPEC", "L1D_CACHE_MISS_LD", NULL},
     {"MEM_LOAD_RETIRED.L1_MISS", "MEM_LOAD_UOPS_RETIRED.L1_MISS", NULL},
     {"L1-dcache-load-misses", NULL}},
    {"l1i-misses",
     "instruction fetches that missed the L1 instruction cache",
     {"L1I_CACHE_MISS_DEMAND", NULL},
     {NULL},
     {"L1-icache-load-misses", NULL}},
    {"dtlb-misses",
     "data accesses that missed the L1 data TLB",
     {"L1D_TLB_MISS_NONSPEC", "L1D_TLB_MISS", NULL},
     {NULL},
     {"dTLB-load-misses", NULL}},
    {"llc-misses",
     "misses of the last-level cache",
     {NULL},
     {"LONGEST_LAT_CACHE.MISS", NULL},
     {"LLC-load-misses", "cache-misses", NULL}},
};

const char *dk_portable_name(size_t i)
{
    return i < DK__COUNT_OF(portables) ? portables[i].name : NULL;
}

const char *dk_portable_description(size_t i)
{
    return i < DK__COUNT_OF(portables) ? portables[i].description : NULL;
}

int dk__portable_index(const char *name)
{
    for (size_t i = 0; name != NULL && i < DK__COUNT_OF(portables); i++)
        if (dk__strcasecmp(portables[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *const *dk__portable_candidates(int index, dk__family family)
{
    if (index < 0 || (size_t)index >= DK__COUNT_OF(portables))
        return NULL;
    switch (family) {
    case DK__FAMILY_INTEL:
        return portables[index].intel;
    case DK__FAMILY_LINUX:
        return portables[index].perf;
    default:
        return portables[index].apple;
    }
}
