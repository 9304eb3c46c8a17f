/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_perf_units.c - parts of the perf_event backend that cannot be
 * reached on a machine without a hardware PMU, on synthetic inputs: the
 * rdpmc reader on a fake mmap page, the hybrid planner, the pmu/.../
 * parser on a fake sysfs tree, the errno map, and count scaling.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/perf_event/perf_event.h"
#include "backend/perf_event/perf_mmap.h"
#include "dkperf.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* The mmap page reader                                                      */
/* ------------------------------------------------------------------------ */

typedef struct fake {
    struct perf_event_mmap_page *page;
    uint64_t pmc; /* what rdpmc returns */
    uint64_t tsc;
    int rdpmc_calls;
    int bump_lock_times; /* simulate a concurrent update this many times */
    uint32_t last_counter;
} fake;

static uint64_t fake_rdpmc(uint32_t counter, void *ctx)
{
    fake *f = ctx;
    f->rdpmc_calls++;
    f->last_counter = counter;
    if (f->bump_lock_times > 0) {
        f->bump_lock_times--;
        f->page->lock++; /* the kernel rewrote the page meanwhile */
        f->page->offset += 1000;
    }
    return f->pmc;
}

static uint64_t fake_rdtsc(void *ctx) { return ((fake *)ctx)->tsc; }

static struct perf_event_mmap_page page;

static fake setup_page(void)
{
    memset(&page, 0, sizeof page);
    page.cap_user_rdpmc = 1;
    page.index = 3; /* hardware counter 2 */
    page.offset = 500;
    page.pmc_width = 48;
    page.time_enabled = 1000;
    page.time_running = 1000;
    fake f = {.page = &page, .pmc = 42};
    return f;
}

TEST_CASE(rdpmc_reads_offset_plus_counter)
{
    fake f = setup_page();
    dk__pmc_ops ops = {fake_rdpmc, fake_rdtsc, &f};
    uint64_t count = 0, ena = 0, run = 0;
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    CHECK_U64(count, ==, 542);
    CHECK_INT(f.last_counter, ==, 2); /* index - 1 */
    CHECK_U64(ena, ==, 1000);
    CHECK_U64(run, ==, 1000);
}

TEST_CASE(rdpmc_sign_extends_to_the_counter_width)
{
    fake f = setup_page();
    dk__pmc_ops ops = {fake_rdpmc, fake_rdtsc, &f};
    /* A 48-bit counter at -1 reads as 0xffffffffffff. */
    f.pmc = 0xffffffffffffull;
    uint64_t count, ena, run;
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    CHECK_U64(count, ==, 499);
    /* Bits above the width are ignored. */
    f.pmc = 0xabcd000000000010ull;
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    CHECK_U64(count, ==, 516);
}

TEST_CASE(rdpmc_retries_when_the_page_changes)
{
    fake f = setup_page();
    f.bump_lock_times = 2;
    dk__pmc_ops ops = {fake_rdpmc, fake_rdtsc, &f};
    uint64_t count, ena, run;
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    CHECK_INT(f.rdpmc_calls, ==, 3);
    CHECK_U64(count, ==, 2500 + 42); /* the offset the final, stable pass saw */
}

TEST_CASE(rdpmc_declines_when_the_kernel_must_read)
{
    fake f = setup_page();
    dk__pmc_ops ops = {fake_rdpmc, fake_rdtsc, &f};
    uint64_t count = 7, ena = 7, run = 7;
    page.index = 0; /* software event, or not scheduled on the PMU now */
    CHECK(!dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    CHECK_U64(count, ==, 7);
    page.index = 3;
    page.cap_user_rdpmc = 0; /* no userspace access */
    CHECK(!dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    CHECK_INT(f.rdpmc_calls, ==, 0);
    CHECK(!dk__pmc_read(&page, NULL, false, &count, &ena, &run));
}

TEST_CASE(rdpmc_extrapolates_time_with_the_tsc)
{
    fake f = setup_page();
    dk__pmc_ops ops = {fake_rdpmc, fake_rdtsc, &f};
    page.cap_user_time = 1;
    page.time_enabled = 1000;
    page.time_running = 600; /* it was multiplexed before */
    page.time_shift = 10;
    page.time_mult = 512; /* 0.5 ns per cycle */
    page.time_offset = 100;
    f.tsc = 4096 + 3; /* quot 4, rem 3 */
    uint64_t count, ena, run;
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    /* delta = offset + quot * mult + ((rem * mult) >> shift) = 100 + 2048 + 1 */
    CHECK_U64(ena, ==, 1000 + 2149);
    CHECK_U64(run, ==, 600 + 2149);
}

/* Times that are reported must be current: the page's are those of its
 * last update. With want_time they are brought up to now even when the
 * counter was never time-shared; without a clock on the page the caller
 * is sent to read(). */
TEST_CASE(rdpmc_reported_times_are_current)
{
    fake f = setup_page();
    dk__pmc_ops ops = {fake_rdpmc, fake_rdtsc, &f};
    page.cap_user_time = 1;
    page.time_enabled = 1000;
    page.time_running = 1000; /* never time-shared */
    page.time_shift = 10;
    page.time_mult = 512;
    page.time_offset = 100;
    f.tsc = 4096 + 3;
    uint64_t count, ena, run;
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    CHECK_U64(ena, ==, 1000); /* for scaling alone, no clock read is needed */
    CHECK(dk__pmc_read(&page, &ops, true, &count, &ena, &run));
    CHECK_U64(ena, ==, 1000 + 2149);
    CHECK_U64(run, ==, 1000 + 2149);
    page.cap_user_time = 0;
    CHECK(!dk__pmc_read(&page, &ops, true, &count, &ena, &run));
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
}

/* arm64 (and x86 with a short TSC view) publish cap_user_time_short: the
 * clock is time_mask wide and time_cycles is its count at the page's last
 * update, so only (now - time_cycles) & time_mask cycles have passed since. */
TEST_CASE(rdpmc_extrapolates_time_with_a_short_clock)
{
    fake f = setup_page();
    dk__pmc_ops ops = {fake_rdpmc, fake_rdtsc, &f};
    page.cap_user_time = 1;
    page.cap_user_time_short = 1;
    page.time_enabled = 1000;
    page.time_running = 600;
    page.time_shift = 10;
    page.time_mult = 512; /* 0.5 ns per cycle */
    page.time_offset = 100;
    page.time_cycles = 0xff00; /* a 16-bit clock, about to wrap at the last update */
    page.time_mask = 0xffff;
    f.tsc = 0x7000000000 + 0x0100; /* high bits the clock does not have; wrapped */
    uint64_t count, ena, run;
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    /* cyc = 0xff00 + ((0x0100 - 0xff00) & 0xffff) = 0xff00 + 0x200 = 0x10100;
     * delta = 100 + (0x10100 >> 10) * 512 + (((0x10100 & 1023) * 512) >> 10)
     *       = 100 + 64 * 512 + 128 = 32996 */
    CHECK_U64(ena, ==, 1000 + 32996);
    CHECK_U64(run, ==, 600 + 32996);
    /* Without cap_user_time_short the fields are not used. */
    page.cap_user_time_short = 0;
    f.tsc = 0x10100;
    CHECK(dk__pmc_read(&page, &ops, false, &count, &ena, &run));
    CHECK_U64(ena, ==, 1000 + 32996);
}

/* The fast path's set reader: several pages, one stand-in register read
 * each, in order. */
static struct perf_event_mmap_page pages[3];
static uint64_t regs[32];
static int set_reads;

static uint64_t set_rdpmc(uint32_t counter, void *ctx)
{
    (void)ctx;
    set_reads++;
    return regs[counter & 31];
}

static dk__pmc_set setup_set(void)
{
    memset(pages, 0, sizeof pages);
    memset(regs, 0, sizeof regs);
    set_reads = 0;
    dk__pmc_set set = {0};
    for (int i = 0; i < 3; i++) {
        pages[i].cap_user_rdpmc = 1;
        pages[i].index = (uint32_t)(5 - i); /* registers 4, 3, 2 */
        pages[i].offset = 1000 * (i + 1);
        pages[i].pmc_width = i == 0 ? 64 : 32;
        pages[i].time_enabled = pages[i].time_running = 777;
        CHECK(dk__pmc_set_add(&set, &pages[i]));
    }
    return set;
}

TEST_CASE(pmc_set_reads_every_counter_in_order)
{
    dk__pmc_set set = setup_set();
    regs[4] = 5;
    regs[3] = 0xffffffffull;         /* a 32-bit counter at -1 */
    regs[2] = 0xabcd000000000010ull; /* bits above its 32 are not the counter's */
    pages[2].offset = -3;
    uint64_t v[3] = {0}, ena = 0, run = 0;
    CHECK(dk__pmc_read_set(&set, v, &ena, &run, set_rdpmc, NULL));
    CHECK_U64(v[0], ==, 1005);
    CHECK_U64(v[1], ==, 1999);
    CHECK_U64(v[2], ==, 13);
    CHECK_U64(ena, ==, 777);
    CHECK_U64(run, ==, 777);
    CHECK_INT(set_reads, ==, 3);
    /* A 64-bit counter is taken whole. */
    regs[4] = 0x8000000000000000ull;
    CHECK(dk__pmc_read_set(&set, v, &ena, &run, set_rdpmc, NULL));
    CHECK_U64(v[0], ==, 0x8000000000000000ull + 1000);
}

/* A register must not be read when the page forbids it (rdpmc and mrs
 * trap), and a counter off the PMU or time-shared sends the caller to the
 * general path. */
TEST_CASE(pmc_set_declines_without_reading_a_forbidden_register)
{
    dk__pmc_set set = setup_set();
    uint64_t v[3], ena, run;
    pages[1].index = 0;
    CHECK(!dk__pmc_read_set(&set, v, &ena, &run, set_rdpmc, NULL));
    CHECK_INT(set_reads, ==, 1); /* the first counter's, not the second's */
    pages[1].index = 4;
    pages[1].cap_user_rdpmc = 0;
    set_reads = 0;
    CHECK(!dk__pmc_read_set(&set, v, &ena, &run, set_rdpmc, NULL));
    CHECK_INT(set_reads, ==, 1);
    pages[1].cap_user_rdpmc = 1;
    pages[2].time_running = 700; /* multiplexed: scaling needed */
    CHECK(!dk__pmc_read_set(&set, v, &ena, &run, set_rdpmc, NULL));
    pages[2].time_running = 777;
    CHECK(dk__pmc_read_set(&set, v, &ena, &run, set_rdpmc, NULL));
}

/* A page rewritten during the pass is read again. */
static int bump_left;
static uint64_t bumping_rdpmc(uint32_t counter, void *ctx)
{
    struct perf_event_mmap_page *pc = ctx;
    if (bump_left > 0) {
        bump_left--;
        pc->lock += 2;
        pc->offset += 100;
    }
    return regs[counter & 31];
}

TEST_CASE(pmc_set_retries_a_page_that_changed)
{
    dk__pmc_set set = setup_set();
    set.n = 1;
    bump_left = 2;
    uint64_t v[1], ena, run;
    CHECK(dk__pmc_read_set(&set, v, &ena, &run, bumping_rdpmc, &pages[0]));
    CHECK_U64(v[0], ==, 1200);
}

TEST_CASE(pmc_set_holds_at_most_its_maximum)
{
    dk__pmc_set set = {0};
    for (int i = 0; i < DK__PMC_SET_MAX; i++)
        CHECK(dk__pmc_set_add(&set, &page));
    CHECK(!dk__pmc_set_add(&set, &page));
    CHECK_U64(set.n, ==, DK__PMC_SET_MAX);
}

/* ------------------------------------------------------------------------ */
/* Scaling                                                                   */
/* ------------------------------------------------------------------------ */

TEST_CASE(scaling_of_multiplexed_counts)
{
    CHECK_U64(dk_scale_count(1000, 2000, 1000), ==, 2000);
    CHECK_U64(dk_scale_count(1000, 3000, 2000), ==, 1500);
    CHECK_U64(dk_scale_count(7, 10, 3), ==, 23); /* 7 * 10 / 3 = 23.3 */
    CHECK_U64(dk_scale_count(1000, 1000, 1000), ==, 1000);
    CHECK_U64(dk_scale_count(1000, 500, 1000), ==, 1000); /* running >= enabled: as is */
    CHECK_U64(dk_scale_count(1000, 1000, 0), ==, 0);      /* never ran */
    /* No overflow where count * enabled exceeds 64 bits. */
    CHECK_U64(dk_scale_count(UINT64_MAX / 2, 4000000000ull, 2000000000ull), ==, UINT64_MAX / 2 * 2);
    CHECK_U64(dk_scale_count(1ull << 62, 3ull << 40, 1ull << 41), ==, 3ull << 61);
}

/* ------------------------------------------------------------------------ */
/* Hybrid planning                                                           */
/* ------------------------------------------------------------------------ */

TEST_CASE(hybrid_cpus_get_one_instance_per_core_pmu)
{
    const uint32_t cores[] = {4, 10}; /* e.g. cpu_core, cpu_atom */
    pe_def insts = {.type = PERF_TYPE_HARDWARE,
                    .config = PERF_COUNT_HW_INSTRUCTIONS,
                    .generic = true};
    pe_def clock = {.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK};
    pe_def atom_raw = {.type = 10, .config = 0xc0};
    const pe_def *defs[] = {&insts, &clock, &atom_raw};
    struct perf_event_attr attrs[8];
    size_t events[8], keys[8];
    size_t m = dk__pe_plan(cores, 2, defs, 3, attrs, events, keys);
    CHECK_INT(m, ==, 4);
    CHECK_INT(events[0], ==, 0);
    CHECK_INT(events[1], ==, 0);
    CHECK_U64(attrs[0].config, ==, (4ull << PERF_PMU_TYPE_SHIFT) | PERF_COUNT_HW_INSTRUCTIONS);
    CHECK_U64(attrs[1].config, ==, (10ull << PERF_PMU_TYPE_SHIFT) | PERF_COUNT_HW_INSTRUCTIONS);
    CHECK_INT(keys[0], ==, 0);
    CHECK_INT(keys[1], ==, 1);
    CHECK_INT(events[2], ==, 1); /* software: one instance, first group */
    CHECK_INT(keys[2], ==, 0);
    CHECK_U64(attrs[2].config, ==, PERF_COUNT_SW_TASK_CLOCK);
    CHECK_INT(events[3], ==, 2); /* an atom PMU event joins the atom group */
    CHECK_INT(keys[3], ==, 1);
    CHECK_INT(attrs[3].type, ==, 10);

    /* One core PMU: no copies, plain configs. */
    m = dk__pe_plan(cores, 1, defs, 2, attrs, events, keys);
    CHECK_INT(m, ==, 2);
    CHECK_U64(attrs[0].config, ==, PERF_COUNT_HW_INSTRUCTIONS);
    CHECK_INT(keys[0], ==, 0);
    /* None at all (a VM): the same. */
    m = dk__pe_plan(NULL, 0, defs, 2, attrs, events, keys);
    CHECK_INT(m, ==, 2);
}

/* ------------------------------------------------------------------------ */
/* The pmu/.../ parser on a fake sysfs tree                                  */
/* ------------------------------------------------------------------------ */

static char root[512];

static void write_file(const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

static void fake_sysfs(void)
{
    snprintf(root, sizeof root, "%s/dkperf-sysfs-%d", dkt_tmpdir(), (int)getpid());
    mkdir(root, 0755);
    write_file("cpu/type", "4\n");
    write_file("cpu/format/event", "config:0-7\n");
    write_file("cpu/format/umask", "config:8-15\n");
    write_file("cpu/format/inv", "config:23\n");
    write_file("cpu/format/cmask", "config:24-31\n");
    write_file("cpu/format/split", "config:0-3,32-35\n");
    write_file("cpu/format/ldlat", "config1:0-15\n");
    write_file("cpu/format/bad", "configX:0-7\n");
    write_file("cpu/events/instructions", "event=0xc0\n");
    write_file("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
}

static void remove_tree(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_INT(system(cmd), ==, 0);
}

TEST_CASE(pmu_syntax_fills_the_format_fields)
{
    fake_sysfs();
    pe_def d;
    CHECK_INT(dk__pe_parse(root, "cpu/event=0x3c,umask=0x01,cmask=2,inv/", &d), ==, 0);
    CHECK_INT(d.type, ==, 4);
    CHECK_U64(d.config, ==, 0x3c | 0x01 << 8 | 1u << 23 | 2u << 24);
    CHECK_INT(d.exclude, ==, 0);
    /* A value spread over two ranges. */
    CHECK_INT(dk__pe_parse(root, "cpu/split=0xab/", &d), ==, 0);
    CHECK_U64(d.config, ==, 0xbull | 0xaull << 32);
    /* A named event of the PMU, with config1. */
    CHECK_INT(dk__pe_parse(root, "cpu/mem-loads/", &d), ==, 0);
    CHECK_U64(d.config, ==, 0xcd | 0x1 << 8);
    CHECK_U64(d.config1, ==, 3);
    CHECK_INT(dk__pe_parse(root, "cpu/instructions/u", &d), ==, 0);
    CHECK_U64(d.config, ==, 0xc0);
    CHECK_INT(d.exclude, ==, 'u');
    CHECK_INT(dk__pe_parse(root, "cpu/config=0x1234,config2=5/k", &d), ==, 0);
    CHECK_U64(d.config, ==, 0x1234);
    CHECK_U64(d.config2, ==, 5);
    CHECK_INT(d.exclude, ==, 'k');
    remove_tree();
}

TEST_CASE(pmu_syntax_errors_name_the_problem)
{
    fake_sysfs();
    pe_def d;
    CHECK_INT(dk__pe_parse(root, "instructions", &d), ==, DK__NOT_MINE);
    CHECK_INT(dk__pe_parse(root, "ref-cycles", &d), ==, DK__NOT_MINE);
    CHECK_INT(dk__pe_parse(root, "gpu/event=1/", &d), ==, DK_ENOEVENT);
    CHECK_CONTAINS(dk_last_error(), "no PMU called gpu");
    CHECK_INT(dk__pe_parse(root, "cpu/event=0x1ff/", &d), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "does not fit");
    CHECK_INT(dk__pe_parse(root, "cpu/bad=1/", &d), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "configX");
    CHECK_INT(dk__pe_parse(root, "cpu/nothing/", &d), ==, DK_ENOEVENT);
    CHECK_INT(dk__pe_parse(root, "cpu/event=/", &d), ==, DK_EINVAL);
    CHECK_INT(dk__pe_parse(root, "cpu/event=1/z", &d), ==, DK_EINVAL);
    remove_tree();
}

TEST_CASE(raw_events)
{
    pe_def d;
    CHECK_INT(dk__pe_parse("/nonexistent", "r01c2", &d), ==, 0);
    CHECK_INT(d.type, ==, PERF_TYPE_RAW);
    CHECK_U64(d.config, ==, 0x1c2);
    CHECK_INT(dk__pe_parse("/nonexistent", "rFFFF", &d), ==, 0);
    CHECK_U64(d.config, ==, 0xffff);
    CHECK_INT(dk__pe_parse("/nonexistent", "r", &d), ==, DK__NOT_MINE);
    CHECK_INT(dk__pe_parse("/nonexistent", "r12g", &d), ==, DK__NOT_MINE);
    CHECK_INT(dk__pe_parse("/nonexistent", "r11112222333344445", &d), ==, DK_EINVAL);
}

TEST_CASE(cpu_lists_are_parsed_strictly)
{
    int cpus[16];
    size_t n = 99;
    CHECK_INT(dk__perf_parse_cpu_list("0-3,6\n", cpus, 16, &n), ==, 0);
    CHECK_INT(n, ==, 5);
    CHECK_INT(cpus[3], ==, 3);
    CHECK_INT(cpus[4], ==, 6);
    CHECK_INT(dk__perf_parse_cpu_list("  7 \n", cpus, 16, &n), ==, 0);
    CHECK_INT(n, ==, 1);
    CHECK_INT(cpus[0], ==, 7);
    CHECK_INT(dk__perf_parse_cpu_list("1048570-1048575", cpus, 16, &n), ==, 0);
    CHECK_INT(cpus[5], ==, 1048575);
    /* Each is refused with a message, never overflowing or truncating. */
    const char *bad[] = {"",
                         "\n",
                         "x",
                         "-1",
                         "0-",
                         "0--3",
                         "3-1",
                         "0,,1",
                         "0,",
                         "0-3,2",
                         "1,1",
                         "0 1",
                         "+1",
                         "0x3",
                         "1048576",
                         "0-1048576",
                         "0-9223372036854775807",
                         "9223372036854775807-9223372036854775807",
                         "4294967296",
                         "2147483648",
                         "99999999999999999999999",
                         "0-16",
                         "0-7,8-15,16"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        n = 99;
        if (dk__perf_parse_cpu_list(bad[i], cpus, 16, &n) != DK_EINVAL)
            DKT_FAIL("CPU list \"%s\" was accepted", bad[i]);
        CHECK_INT(n, ==, 0);
        CHECK_CONTAINS(dk_last_error(), "CPU list");
    }
    CHECK_INT(dk__perf_parse_cpu_list("0-15", cpus, 16, &n), ==, 0);
    CHECK_INT(n, ==, 16);
}

TEST_CASE(sysfs_format_and_event_text_is_untrusted)
{
    pe_def d;
    memset(&d, 0, sizeof d);
    CHECK_INT(dk__pe_apply_format(&d, "config:0-7", 0x3c), ==, 0);
    CHECK_U64(d.config, ==, 0x3c);
    const char *bad[] = {"config:",
                         "config",
                         ":0-7",
                         "config:7-0",
                         "config:0-64",
                         "config:64",
                         "config:-1",
                         "config:+1",
                         "config: 1",
                         "config:0-7,",
                         "config:0,,1",
                         "config:18446744073709551615",
                         "config:0-18446744073709551616",
                         "config3:0-7",
                         "config:0-7x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&d, 0, sizeof d);
        if (dk__pe_apply_format(&d, bad[i], 1) != -1)
            DKT_FAIL("format \"%s\" was accepted", bad[i]);
    }
    memset(&d, 0, sizeof d);
    CHECK_INT(dk__pe_apply_format(&d, "config:0-3", 0x10), ==, -2);

    fake_sysfs();
    write_file("cpu/events/neg", "event=-1\n");
    write_file("weird/type", "4x\n");
    write_file("huge/type", "4294967296\n");
    memset(&d, 0, sizeof d);
    CHECK_INT(dk__pe_parse_terms(root, "cpu", "event=0x3c,umask=1", "e", &d), ==, 0);
    CHECK_U64(d.config, ==, 0x13c);
    CHECK_INT(dk__pe_parse_terms(root, "cpu", "event=-1", "e", &d), ==, DK_EINVAL);
    CHECK_INT(dk__pe_parse(root, "cpu/neg/", &d), ==, DK_EINVAL);
    CHECK_INT(dk__pe_parse(root, "weird/event=1/", &d), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "not a PMU type number");
    CHECK_INT(dk__pe_parse(root, "huge/event=1/", &d), ==, DK_EINVAL);
    /* Terms and PMU names cannot walk out of the PMU's directory. */
    CHECK_INT(dk__pe_parse(root, "cpu/../type/", &d), ==, DK_EINVAL);
    CHECK_INT(dk__pe_parse(root, "../devices/cpu/event=1/", &d), !=, 0);
    CHECK_INT(dk__pe_parse(root, "../x/", &d), ==, DK_EINVAL);
    CHECK_INT(dk__pe_parse_terms(root, "..", "event=1", "e", &d), ==, DK_EINVAL);
    CHECK_INT(dk__pe_parse_terms(root, "cpu", "format/../../cpu/type", "e", &d), ==, DK_EINVAL);
    CHECK_INT(dk__pe_parse(root, "r", &d), ==, DK__NOT_MINE);
    CHECK_INT(dk__pe_parse(root, "rffffffffffffffff", &d), ==, 0);
    CHECK_U64(d.config, ==, UINT64_MAX);
    remove_tree();
}

/* ------------------------------------------------------------------------ */
/* errno map (design guide, section 4)                                       */
/* ------------------------------------------------------------------------ */

TEST_CASE(errno_map)
{
    CHECK_INT(dk__pe_fail_open("instructions", true, true, 2, EACCES, false), ==, DK_EPERM);
    CHECK_CONTAINS(dk_last_error(), "perf_event_paranoid is 2");
    CHECK_CONTAINS(dk_last_error(), "CAP_PERFMON");
    CHECK_INT(dk__pe_fail_open("x", true, true, 3, EPERM, false), ==, DK_EPERM);
    CHECK_INT(dk__pe_fail_open("instructions", true, false, 2, ENOENT, false), ==, DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "no hardware PMU is visible");
    CHECK_INT(dk__pe_fail_open("instructions", true, true, 2, EOPNOTSUPP, false), ==,
              DK_EUNAVAILABLE);
    CHECK(strstr(dk_last_error(), "no hardware PMU") == NULL);
    CHECK_INT(dk__pe_fail_open("x", false, true, 2, ENODEV, false), ==, DK_EUNAVAILABLE);
    CHECK_INT(dk__pe_fail_open("x", true, true, 2, EINVAL, false), ==, DK_EUNAVAILABLE);
    CHECK_INT(dk__pe_fail_open("x", true, true, 2, EINVAL, true), ==, DK_ECONFLICT);
    CHECK_CONTAINS(dk_last_error(), "one group");
    CHECK_INT(dk__pe_fail_open("x", true, true, 2, EMFILE, false), ==, DK_ETOOMANY);
    CHECK_INT(dk__pe_fail_open("x", true, true, 2, ENOSPC, false), ==, DK_ETOOMANY);
    CHECK_INT(dk__pe_fail_open("x", true, true, 2, EBUSY, false), ==, DK_EBUSY);
    CHECK_INT(dk__pe_fail_open("x", true, true, 2, EFAULT, false), ==, DK_EOS);
    CHECK_INT(dk_last_os_error(), ==, EFAULT);
}

TEST_MAIN()
