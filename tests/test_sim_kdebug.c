/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_sim_kdebug.c - the simulated kernel's kdebug trace buffer on its
 * own, through the simulated libsystem_kernel's sysctl(), against what
 * XNU's bsd/kern/kdebug.c and kdebug_common.c do (tests/sim/README.md
 * cites the functions): storage-unit rounding, wrapping, KDBG_NOWRAP on
 * xnu-11417 and on xnu-8020, KERN_KDREADTR's sizes and errors,
 * KERN_KDREMOVE. Records are put in with the sim kernel's simk_emit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampling_kperf_helpers.h"
#include "sim/sim_kdebug.h"
#include "sim/sim_kernel.h"
#include "util.h"

static int (*sys)(int *, unsigned, void *, size_t *, void *, size_t);
static int (*sysbyname)(const char *, void *, size_t *, void *, size_t);
static void (*emit)(const simk_kd_buf *, size_t);

static void load(void)
{
    sim_kernel k = sim_kernel_open();
    sys = k.sysctl;
    sysbyname = k.sysctlbyname;
    emit = k.emit;
}

/* sysctl({CTL_KERN, KERN_KDEBUG, op[, value]}): 0 or errno. */
static int kd(int op, int value, int nmib, void *oldp, size_t *oldlen)
{
    int mib[4] = {CTL_KERN, KERN_KDEBUG, op, value};
    size_t zero = 0;
    errno = 0;
    int r = sys(mib, (unsigned)nmib, oldp, oldlen != NULL ? oldlen : &zero, NULL, 0);
    return r == 0 ? 0 : errno;
}
#define OP(op) kd((op), 0, 3, NULL, NULL)
#define OPV(op, v) kd((op), (v), 4, NULL, NULL)

static kbufinfo getbuf(void)
{
    kbufinfo b;
    memset(&b, 0xff, sizeof b);
    size_t len = sizeof b;
    CHECK_INT(kd(KERN_KDGETBUF, 0, 3, &b, &len), ==, 0);
    CHECK_INT(len, ==, sizeof b);
    return b;
}

/* XNU's smallest buffer: 4 storage units for each CPU and each of the 16
 * coprocessor slots (create_buffers_trace, EXTRA_COPROC_COUNT). */
static unsigned min_events(void)
{
    int ncpu = 0;
    size_t len = sizeof ncpu;
    CHECK_INT(sysbyname("hw.ncpu", &ncpu, &len, NULL, 0), ==, 0);
    CHECK_INT(ncpu, >, 0);
    return ((unsigned)ncpu + EXTRA_COPROC_COUNT) * MIN_UNITS_PER_CPU * EVENTS_PER_UNIT;
}

/* n kperf-class records with timestamps first, first + 1, ... */
static void put(size_t n, uint64_t first)
{
    simk_kd_buf *r = calloc(n, sizeof *r);
    CHECK(r != NULL);
    for (size_t i = 0; i < n; i++) {
        r[i].timestamp = first + i;
        r[i].debugid = 0x25ff0000u;
        r[i].arg1 = first + i;
    }
    emit(r, n);
    free(r);
}

/* Read everything left; returns the number of records in *out. */
static size_t read_all(simk_kd_buf **out)
{
    size_t cap = 1024, n = 0;
    simk_kd_buf *all = malloc(cap * sizeof *all);
    CHECK(all != NULL);
    for (;;) {
        if (cap - n < 4096) {
            cap = cap * 2 + 4096;
            all = realloc(all, cap * sizeof *all);
            CHECK(all != NULL);
        }
        size_t len = 4096 * sizeof(simk_kd_buf);
        CHECK_INT(kd(KERN_KDREADTR, 0, 3, all + n, &len), ==, 0);
        CHECK_U64(len, <=, 4096);
        if (len == 0)
            break;
        n += len;
    }
    *out = all;
    return n;
}

static void fresh(unsigned events)
{
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
    CHECK_INT(OPV(KERN_KDSETBUF, (int)events), ==, 0);
    CHECK_INT(OP(KERN_KDSETUP), ==, 0);
}

TEST_CASE(setbuf_rounds_to_whole_storage_units)
{
    load();
    unsigned min = min_events();
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
    kbufinfo b = getbuf();
    CHECK_INT(b.nkdbufs, ==, 0);
    CHECK_INT(b.flags & KDBG_BUFINIT, ==, 0);
    /* kdbg_set_nkdbufs_trace keeps the count asked; KDSETUP rounds it. */
    CHECK_INT(OPV(KERN_KDSETBUF, 1000), ==, 0);
    CHECK_INT(getbuf().nkdbufs, ==, 1000);
    CHECK_INT(OP(KERN_KDSETUP), ==, 0);
    b = getbuf();
    CHECK_INT(b.nkdbufs, ==, (int)min);
    CHECK(b.flags & KDBG_BUFINIT);
    /* Above the minimum: whole units, rounded down. */
    unsigned asked = min + 5 * EVENTS_PER_UNIT + 1000;
    CHECK_INT(OPV(KERN_KDSETBUF, (int)asked), ==, 0);
    CHECK_INT(OP(KERN_KDSETUP), ==, 0);
    CHECK_INT(getbuf().nkdbufs, ==, (int)(min + 5 * EVENTS_PER_UNIT));
    /* No KDSETBUF since KDREMOVE: the minimum. */
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
    CHECK_INT(OP(KERN_KDSETUP), ==, 0);
    CHECK_INT(getbuf().nkdbufs, ==, (int)min);
    /* A negative count is a huge unsigned one: capped, not zero. */
    CHECK_INT(OPV(KERN_KDSETBUF, -1), ==, 0);
    CHECK_INT(getbuf().nkdbufs, >, (int)min);
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
}

TEST_CASE(wrapping_drops_the_oldest_storage_unit)
{
    load();
    unsigned min = min_events();
    fresh(0);
    CHECK_INT(getbuf().nolog, ==, 1); /* not enabled yet */
    CHECK_INT(OPV(KERN_KDENABLE, 1), ==, 0);
    CHECK_INT(getbuf().nolog, ==, 0);
    put(min, 1);
    CHECK_INT(getbuf().flags & KDBG_WRAPPED, ==, 0);
    put(1, min + 1);
    kbufinfo b = getbuf();
    CHECK(b.flags & KDBG_WRAPPED);
    CHECK_INT(b.nolog, ==, 0); /* still tracing */
    simk_kd_buf *r = NULL;
    size_t n = read_all(&r);
    /* One lost-events record (arg1 0, at the stolen unit's last time, CPU
     * 0), then everything after the stolen unit. */
    CHECK_U64(n, ==, 1 + min - EVENTS_PER_UNIT + 1);
    CHECK_U64(r[0].debugid, ==, TRACE_LOST_EVENTS);
    CHECK_U64(r[0].arg1, ==, 0);
    CHECK_U64(r[0].timestamp, ==, EVENTS_PER_UNIT);
    CHECK_U64(r[0].cpuid, ==, 0);
    CHECK_U64(r[1].timestamp, ==, EVENTS_PER_UNIT + 1);
    CHECK_U64(r[n - 1].timestamp, ==, min + 1);
    CHECK_U64(r[1].unused, ==, 0);
    free(r);
    /* The read cleared KDBG_WRAPPED. */
    CHECK_INT(getbuf().flags & KDBG_WRAPPED, ==, 0);
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
}

TEST_CASE(nowrap_is_only_a_flag_on_xnu_11417)
{
    load();
    unsigned min = min_events();
    fresh(0);
    CHECK_INT(OPV(KERN_KDEFLAGS, (int)KDBG_NOWRAP), ==, 0);
    CHECK(getbuf().flags & KDBG_NOWRAP);
    CHECK_INT(OPV(KERN_KDENABLE, 1), ==, 0);
    put(min + 1, 1);
    /* kdc_flags' NOWRAP is not the kdc_live_flags bit the allocator reads. */
    kbufinfo b = getbuf();
    CHECK_INT(b.nolog, ==, 0);
    CHECK(b.flags & KDBG_WRAPPED);
    simk_kd_buf *r = NULL;
    size_t n = read_all(&r);
    CHECK_U64(n, ==, 1 + min - EVENTS_PER_UNIT + 1);
    CHECK_U64(r[0].debugid, ==, TRACE_LOST_EVENTS);
    free(r);
    /* kdbg_clear leaves it in kdc_flags; KDDFLAGS clears it. */
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
    CHECK(getbuf().flags & KDBG_NOWRAP);
    CHECK_INT(OPV(KERN_KDDFLAGS, (int)KDBG_NOWRAP), ==, 0);
    CHECK_INT(getbuf().flags & KDBG_NOWRAP, ==, 0);
}

TEST_CASE(nowrap_stops_tracing_on_xnu_8020)
{
    load();
    unsigned min = min_events();
    fresh(0);
    CHECK_INT(OPV(KERN_KDEFLAGS, (int)KDBG_NOWRAP), ==, 0);
    CHECK_INT(OPV(KERN_KDENABLE, 1), ==, 0);
    put(min + 10, 1);
    /* SLOW_NOLOG: nothing more logged, nolog said; no KDBG_WRAPPED. */
    kbufinfo b = getbuf();
    CHECK_INT(b.nolog, ==, 1);
    CHECK_INT(b.flags & KDBG_WRAPPED, ==, 0);
    simk_kd_buf *r = NULL;
    size_t n = read_all(&r);
    CHECK_U64(n, ==, min);
    CHECK_U64(r[0].timestamp, ==, 1);
    CHECK_U64(r[n - 1].timestamp, ==, min);
    free(r);
    /* Enabled again, the first new unit says events were lost before it. */
    CHECK_INT(OPV(KERN_KDENABLE, 1), ==, 0);
    put(1, 5000000);
    n = read_all(&r);
    CHECK_U64(n, ==, 2);
    CHECK_U64(r[0].debugid, ==, TRACE_LOST_EVENTS);
    CHECK_U64(r[0].arg1, ==, 1);
    CHECK_U64(r[1].timestamp, ==, 5000000);
    free(r);
    /* xnu-8020's kdbg_clear cleared NOWRAP. */
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
    CHECK_INT(getbuf().flags & KDBG_NOWRAP, ==, 0);
}

TEST_CASE(readtr_sizes_and_errors)
{
    load();
    simk_kd_buf r[8];
    size_t len = sizeof r;
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
    /* No buffer: EINVAL (kernel_debug_read); oldlen is not written back
     * after an error (kern_newsysctl.c sysctl). */
    CHECK_INT(kd(KERN_KDREADTR, 0, 3, r, &len), ==, EINVAL);
    CHECK_U64(len, ==, sizeof r);
    fresh(0);
    CHECK_INT(OPV(KERN_KDENABLE, 1), ==, 0);
    put(5, 100);
    /* Less than one record's room: EINVAL. */
    len = sizeof(simk_kd_buf) - 1;
    CHECK_INT(kd(KERN_KDREADTR, 0, 3, r, &len), ==, EINVAL);
    CHECK_U64(len, ==, sizeof(simk_kd_buf) - 1);
    /* oldlen in bytes, out records; what does not fit stays for later. */
    len = 3 * sizeof(simk_kd_buf) + 10;
    CHECK_INT(kd(KERN_KDREADTR, 0, 3, r, &len), ==, 0);
    CHECK_U64(len, ==, 3);
    CHECK_U64(r[0].timestamp, ==, 100);
    CHECK_U64(r[2].timestamp, ==, 102);
    len = sizeof r;
    CHECK_INT(kd(KERN_KDREADTR, 0, 3, r, &len), ==, 0);
    CHECK_U64(len, ==, 2);
    CHECK_U64(r[0].timestamp, ==, 103);
    /* Nothing left: 0 records. Reading needs no tracing on. */
    CHECK_INT(OPV(KERN_KDENABLE, 0), ==, 0);
    len = sizeof r;
    CHECK_INT(kd(KERN_KDREADTR, 0, 3, r, &len), ==, 0);
    CHECK_U64(len, ==, 0);
    /* Nowhere to copy to with records waiting: EINVAL (the copy-out). */
    CHECK_INT(OPV(KERN_KDENABLE, 1), ==, 0);
    put(1, 200);
    len = sizeof r;
    CHECK_INT(kd(KERN_KDREADTR, 0, 3, NULL, &len), ==, EINVAL);
    CHECK_U64(len, ==, sizeof r);
    /* An operation kdebug does not know: ENOTSUP; no operation: ENOTSUP. */
    CHECK_INT(OP(99), ==, ENOTSUP);
    CHECK_INT(kd(0, 0, 2, NULL, NULL), ==, ENOTSUP);
    /* KDGETBUF copies what fits and leaves oldlen as given. */
    int first = -1;
    len = sizeof first;
    CHECK_INT(kd(KERN_KDGETBUF, 0, 3, &first, &len), ==, 0);
    CHECK_U64(len, ==, sizeof first);
    CHECK_INT(first, ==, getbuf().nkdbufs);
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
}

TEST_CASE(kdremove_frees_the_buffer_and_stops_tracing)
{
    load();
    fresh(0);
    CHECK_INT(OPV(KERN_KDENABLE, 1), ==, 0);
    put(10, 1);
    CHECK(getbuf().bufid > 0);
    CHECK_INT(OP(KERN_KDREMOVE), ==, 0);
    kbufinfo b = getbuf();
    CHECK_INT(b.nkdbufs, ==, 0);
    CHECK_INT(b.nolog, ==, 1);
    CHECK_INT(b.flags & KDBG_BUFINIT, ==, 0);
    CHECK_INT(b.bufid, ==, -1); /* ownership released */
    simk_kd_buf r[4];
    size_t len = sizeof r;
    CHECK_INT(kd(KERN_KDREADTR, 0, 3, r, &len), ==, EINVAL);
    CHECK_INT(OPV(KERN_KDENABLE, 1), ==, EINVAL);
}

TEST_MAIN()
