/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_pmu.c - the perf_event backend on a hardware PMU, with exact
 * assertions. A loop of exactly two instructions per iteration (spin.h,
 * spin_program.c) gives user-mode instruction counts of 2N plus a constant,
 * which a PMU that counts exactly must reproduce to the instruction: QEMU's
 * arm64 PMUv3 under -icount (tests/qemu/run.sh sets DKPERF_EXACT_PMU=1).
 * Without a PMU, or without one known to count exactly, each case skips and
 * says why.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
#include "backend/perf_event/perf_event.h"
#include "pmu.h"
#include "spin.h"

static void need_exact_pmu(void)
{
    int why = 0;
    if (!dkt_have_hw_pmu(&why))
        SKIP("no hardware PMU: a hardware instructions counter cannot be opened (%s)",
             strerror(why));
    if (getenv("DKPERF_EXACT_PMU") == NULL)
        SKIP("exact counts need a PMU known to count exactly (DKPERF_EXACT_PMU=1: QEMU "
             "-icount, tests/qemu/run.sh)");
}

static const char *env_or_fail(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        DKT_FAIL("%s is not set (tests/CMakeLists.txt sets it)", name);
    return v;
}

/* The user-mode instructions event in pmu/event/u syntax: the core PMU's
 * sysfs events name it inst_retired (arm64) or instructions (x86). */
static const char *user_instructions(void)
{
    static char name[300];
    DIR *d = opendir("/sys/bus/event_source/devices");
    if (d == NULL)
        DKT_FAIL("cannot list /sys/bus/event_source/devices: %s", strerror(errno));
    struct dirent *e;
    name[0] = '\0';
    while ((e = readdir(d)) != NULL && name[0] == '\0') {
        static const char *const evs[] = {"inst_retired", "instructions"};
        for (int i = 0; i < 2 && name[0] == '\0'; i++) {
            char path[600];
            snprintf(path, sizeof path, "/sys/bus/event_source/devices/%s/events/%s", e->d_name,
                     evs[i]);
            if (e->d_name[0] != '.' && access(path, F_OK) == 0)
                snprintf(name, sizeof name, "%s/%s/u", e->d_name, evs[i]);
        }
    }
    closedir(d);
    if (name[0] == '\0')
        DKT_FAIL(
            "no PMU in /sys/bus/event_source/devices has an inst_retired or instructions event");
    return name;
}

/* Runs a shell command; returns its stdout and stderr, and its status. */
static char *run(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *run(int *status, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        DKT_FAIL("popen(%s): %s", cmd, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    CHECK(out != NULL);
    size_t got;
    while ((got = fread(out + len, 1, cap - 1 - len, p)) > 0)
        len += got;
    out[len] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    printf("$ %s\n%s", cmd, out);
    return out;
}

/* dkperf stat -x, lines: value,unit,event,run_time,percent,... */
typedef struct csv_row {
    uint64_t value;
    double percent;
} csv_row;

static size_t csv_rows(const char *out, const char *event, csv_row *rows, size_t max)
{
    size_t n = 0;
    for (const char *l = out; l != NULL && *l != '\0' && n < max;
         l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char line[1024];
        size_t len = strcspn(l, "\n");
        if (len >= sizeof line)
            continue;
        memcpy(line, l, len);
        line[len] = '\0';
        char *f[8] = {0};
        size_t nf = 0;
        for (char *save = NULL, *tok = strtok_r(line, ",", &save); tok && nf < 8;
             tok = strtok_r(NULL, ",", &save))
            f[nf++] = tok;
        /* strtok_r merges empty fields: value,,event -> 3 tokens before run_time */
        if (nf >= 4 && strcmp(f[1], event) == 0) {
            rows[n].value = strtoull(f[0], NULL, 10);
            rows[n].percent = strtod(f[3], NULL);
            n++;
        }
    }
    return n;
}

static const char *spin_program(void) { return env_or_fail("DKPERF_SPIN_PROGRAM"); }
static const char *dkperf(void) { return env_or_fail("DKPERF_CLI"); }

/* dkperf stat of spin_program n: the user instructions it counted. */
static uint64_t stat_count(const char *ev, unsigned long n)
{
    int st = 0;
    char *out = run(&st, "%s stat -x, -e %s -- %s %012lu", dkperf(), ev, spin_program(), n);
    CHECK_INT(st, ==, 0);
    csv_row row;
    if (csv_rows(out, ev, &row, 1) != 1)
        DKT_FAIL("no CSV row for %s in dkperf's output", ev);
    CHECK(row.percent == 100.0);
    free(out);
    return row.value;
}

TEST_CASE(stat_counts_two_instructions_per_iteration)
{
    need_exact_pmu();
    const char *ev = user_instructions();
    const unsigned long ns[] = {1000, 100000, 3000000};
    uint64_t c0 = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t v = stat_count(ev, ns[i]);
        CHECK_U64(v, >, 2 * ns[i]);
        uint64_t c = v - 2 * ns[i];
        printf("N=%lu: %" PRIu64 " instructions = 2N + %" PRIu64 "\n", ns[i], v, c);
        if (i == 0)
            c0 = c;
        CHECK_U64(c, ==, c0); /* the same constant for every N */
    }
    CHECK_U64(c0, <, 200000); /* start-up of a static program, not a loop's worth */
}

TEST_CASE(stat_repeats_csv_and_json)
{
    need_exact_pmu();
    const char *ev = user_instructions();
    const unsigned long n = 200000;
    uint64_t one = stat_count(ev, n);
    int st = 0;
    /* -r 3: identical runs, so the mean is the count and the spread 0. */
    char *out = run(&st, "%s stat -r 3 -x, -e %s -- %s %012lu", dkperf(), ev, spin_program(), n);
    CHECK_INT(st, ==, 0);
    csv_row row;
    CHECK_INT(csv_rows(out, ev, &row, 1), ==, 1);
    CHECK_U64(row.value, ==, one);
    free(out);
    out = run(&st, "%s stat -r 2 --json -e %s -- %s %012lu", dkperf(), ev, spin_program(), n);
    CHECK_INT(st, ==, 0);
    char want[128];
    snprintf(want, sizeof want, "\"value\": %" PRIu64 ".00,", one); /* the mean of the runs */
    CHECK_CONTAINS(out, want);
    CHECK_CONTAINS(out, "\"runs\": 2");
    CHECK_CONTAINS(out, "\"running_fraction\": 1.0000");
    CHECK_CONTAINS(out, "\"relative_stddev\": 0.0000");
    free(out);
    /* The human report shows the exact count with digit grouping. */
    out = run(&st, "%s stat -e %s -- %s %012lu", dkperf(), ev, spin_program(), n);
    CHECK_INT(st, ==, 0);
    char grouped[64];
    snprintf(grouped, sizeof grouped, "%" PRIu64 ",%03" PRIu64 " ", one / 1000, one % 1000);
    CHECK_CONTAINS(out, grouped);
    free(out);
}

TEST_CASE(stat_multiplexes_more_events_than_counters)
{
    need_exact_pmu();
    const char *ev = user_instructions();
    const unsigned long n = 20000000;
    uint64_t truth = stat_count(ev, 1000) - 2000 + 2 * (uint64_t)n;
    enum { M = 9 }; /* PMUv3 in QEMU: 6 event counters */
    char list[4096] = "";
    for (int i = 0; i < M; i++) {
        strncat(list, ev, sizeof list - strlen(list) - 2);
        if (i + 1 < M)
            strcat(list, ",");
    }
    int st = 0;
    char *out = run(&st, "%s stat -x, -e %s -- %s %012lu", dkperf(), list, spin_program(), n);
    CHECK_INT(st, ==, 0);
    csv_row rows[M];
    CHECK_INT(csv_rows(out, ev, rows, M), ==, M);
    int shared = 0;
    for (int i = 0; i < M; i++) {
        double err = ((double)rows[i].value - (double)truth) / (double)truth;
        printf("event %d: %" PRIu64 " (%.2f%% of the time) vs %" PRIu64 ": %+.3f%%\n", i,
               rows[i].value, rows[i].percent, truth, err * 100);
        CHECK(rows[i].percent > 0 && rows[i].percent <= 100);
        shared += rows[i].percent < 100;
        CHECK(err > -0.01 && err < 0.01);
    }
    CHECK_INT(shared, >, 0);
    /* The human report marks the scaled rows with their share of the time. */
    free(out);
    out = run(&st, "%s stat -e %s -- %s %012lu", dkperf(), list, spin_program(), n);
    CHECK_INT(st, ==, 0);
    CHECK(strstr(out, "%)") != NULL);
    free(out);
}

static dk_sampler *user_sampler(void)
{
    dk_sampler *s = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.flags = DK_SAMPLER_USER_ONLY;
    CHECK_OK(dk_sampler_open(&s, &o));
    CHECK_STR(dk_sampler_backend(s), "perf_event");
    return s;
}

/* Instructions between two samples around spin(n), minus 2n. */
static uint64_t sample_overhead(dk_thread *t, unsigned long n)
{
    uint64_t a[2], b[2];
    CHECK_OK(dk_thread_sample(t, a));
    dkt_spin(n);
    CHECK_OK(dk_thread_sample(t, b));
    CHECK_U64(b[0] - a[0], >=, 2 * n);
    return b[0] - a[0] - 2 * n;
}

TEST_CASE(thread_sample_deltas_are_exact)
{
    need_exact_pmu();
    dk_sampler *s = user_sampler();
    const char *names[] = {"instructions", "cycles"};
    dk_thread *t = open_names(s, names, 2);
    CHECK_OK(dk_thread_start(t));
    (void)sample_overhead(t, 10); /* first calls resolve their symbols */
    uint64_t c = sample_overhead(t, 1000);
    printf("sample overhead: %" PRIu64 " instructions\n", c);
    CHECK_U64(c, <, 2000);
    CHECK_U64(sample_overhead(t, 100000), ==, c);
    CHECK_U64(sample_overhead(t, 2000000), ==, c);

    /* Work while stopped is not counted: the same delta whatever it was. */
    uint64_t d[3];
    for (int r = 0; r < 3; r++) {
        uint64_t a[2], b[2];
        CHECK_OK(dk_thread_sample(t, a));
        dkt_spin(1000);
        CHECK_OK(dk_thread_stop(t));
        dkt_spin(r == 2 ? 1000000 : 10);
        CHECK_OK(dk_thread_start(t));
        dkt_spin(3000);
        CHECK_OK(dk_thread_sample(t, b));
        d[r] = b[0] - a[0];
    }
    /* (the first stop and start calls resolve their symbols) */
    printf("with a stop: %" PRIu64 ", %" PRIu64 " and %" PRIu64 " instructions\n", d[0], d[1],
           d[2]);
    CHECK_U64(d[1], ==, d[2]);
    CHECK_U64(d[1], >=, 8000);
    CHECK_U64(d[1] - 8000, <, 4000);
    dk_reading info;
    uint64_t v[2];
    CHECK_OK(dk_thread_read(t, v, &info));
    CHECK(info.counted && !info.multiplexed);
    dk_thread_close(t);
    dk_sampler_close(s);
}

/* Kernel-mode instructions of this thread (a raw counter beside the sampler's). */
static int kernel_instructions_fd(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_user = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0)
        DKT_FAIL("a kernel-mode instructions counter cannot be opened: %s", strerror(errno));
    return fd;
}

static void write_sysctl(const char *path, const char *value)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(value, f) < 0 || fclose(f) != 0)
        DKT_FAIL("cannot write %s to %s: %s (needs root)", value, path, strerror(errno));
}

/* With kernel.perf_user_access 1 the samples read the counters with mrs and
 * enter the kernel not at all; with 0 they read() (the reason shows in the
 * caps); deltas are exact either way. */
static void user_reads_case(const char *access)
{
    const char *path = "/proc/sys/kernel/perf_user_access";
    char old[16] = "";
    FILE *f = fopen(path, "r");
    if (f == NULL)
        SKIP("%s is missing: user-space counter reads are arm64 only (Linux 5.17+)", path);
    if (fgets(old, sizeof old, f) == NULL)
        old[0] = '\0';
    fclose(f);
    write_sysctl(path, access);
    dk_sampler *s = user_sampler();
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    printf("user reads: %s\n", caps.user_reads ? caps.user_reads : "(null)");
    CHECK(caps.user_reads != NULL);
    bool on = access[0] == '1';
    if (on)
        CHECK(strncmp(caps.user_reads, "on: ", 4) == 0);
    else
        CHECK(strstr(caps.user_reads, "off: kernel.perf_user_access is 0") != NULL);
    printf("pmu: %s; counters %zu\n", caps.pmu, caps.counters);
    CHECK_U64(caps.counters, ==, 7); /* QEMU's PMUv3: 6 event counters and the cycle counter */

    const char *names[] = {"instructions", "cycles"};
    dk_thread *t = open_names(s, names, 2);
    CHECK_OK(dk_thread_start(t));
    (void)sample_overhead(t, 10);
    uint64_t c = sample_overhead(t, 1000);
    printf("sample overhead: %" PRIu64 " user instructions\n", c);
    CHECK_U64(sample_overhead(t, 100000), ==, c);
    CHECK_U64(sample_overhead(t, 1000000), ==, c);

    int kfd = kernel_instructions_fd();
    uint64_t least = UINT64_MAX, v[2];
    /* The fewest of five tries: a timer interrupt that lands in one counts
     * thousands of kernel instructions that are not the reads'. */
    for (int try = 0; try < 5; try++) {
        uint64_t k0 = 0, k1 = 0;
        CHECK_INT(read(kfd, &k0, sizeof k0), ==, (int)sizeof k0);
        for (int i = 0; i < 100; i++)
            CHECK_OK(dk_thread_sample(t, v));
        CHECK_INT(read(kfd, &k1, sizeof k1), ==, (int)sizeof k1);
        if (k1 - k0 < least)
            least = k1 - k0;
    }
    close(kfd);
    /* (the two read() calls of the kernel counter count their own entry and exit) */
    printf("100 samples: %" PRIu64 " kernel instructions (the fewest of 5 tries)\n", least);
    if (on)
        CHECK_U64(least, <, 2000);
    else
        CHECK_U64(least, >, 100 * 200);
    dk_thread_close(t);
    dk_sampler_close(s);
    /* (the kernel checks the sysctl at every read: index 0 in the page when 0) */
    write_sysctl(path, old);
}

TEST_CASE(user_reads_with_perf_user_access)
{
    need_exact_pmu();
    user_reads_case("1");
}

TEST_CASE(read_fallback_without_perf_user_access)
{
    need_exact_pmu();
    user_reads_case("0");
}

/* Starts spin_program n as a child held before its exec until *go is written. */
static pid_t held_spin(unsigned long n, int *go)
{
    int p[2];
    CHECK_INT(pipe(p), ==, 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char c, arg[16];
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
            _exit(3);
        snprintf(arg, sizeof arg, "%012lu", n);
        execl(spin_program(), spin_program(), arg, (char *)NULL);
        _exit(4);
    }
    close(p[0]);
    *go = p[1];
    return pid;
}

static uint64_t process_count(dk_sampler *s, unsigned long n)
{
    int go = -1;
    pid_t pid = held_spin(n, &go);
    const char *names[] = {"instructions"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, pid, names, 1, DK_GROUP_ENABLE_ON_EXEC, &g));
    CHECK_OK(dk_group_start(g));
    CHECK_INT(write(go, "x", 1), ==, 1);
    close(go);
    int status = 0;
    CHECK_INT(waitpid(pid, &status, 0), ==, pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    uint64_t v = 0;
    dk_reading info;
    CHECK_OK(dk_group_read(g, &v, &info));
    CHECK(info.counted && !info.multiplexed);
    dk_group_close(g);
    return v;
}

TEST_CASE(process_scope_counts_a_child_exactly)
{
    need_exact_pmu();
    dk_sampler *s = user_sampler();
    const unsigned long ns[] = {1000, 50000, 1000000};
    uint64_t c0 = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t v = process_count(s, ns[i]);
        CHECK_U64(v, >, 2 * ns[i]);
        printf("child N=%lu: %" PRIu64 " = 2N + %" PRIu64 "\n", ns[i], v, v - 2 * ns[i]);
        if (i == 0)
            c0 = v - 2 * ns[i];
        CHECK_U64(v - 2 * ns[i], ==, c0);
    }
    /* dkperf stat counts the same program from the same exec. */
    CHECK_U64(stat_count(user_instructions(), 1000), ==, c0 + 2000);
    dk_sampler_close(s);
}

static int raw_instructions(int group)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
    if (fd < 0)
        DKT_FAIL("perf_event_open(instructions) for the competing counters: %s", strerror(errno));
    return fd;
}

/* Values of a thread's n instruction events around spin(n): each scaled
 * count within 1% of 2n; returns the reading of the last sample. */
static dk_reading scaled_deltas(dk_thread *t, size_t nev, unsigned long n)
{
    uint64_t a[DK_MAX_EVENTS], b[DK_MAX_EVENTS];
    dk_reading ia, ib;
    CHECK_OK(dk_thread_read(t, a, &ia));
    dkt_spin(n);
    CHECK_OK(dk_thread_read(t, b, &ib));
    for (size_t i = 0; i < nev; i++) {
        double err = ((double)(b[i] - a[i]) - 2.0 * (double)n) / (2.0 * (double)n);
        printf("event %zu: %" PRIu64 " vs %lu: %+.3f%%\n", i, b[i] - a[i], 2 * n, err * 100);
        CHECK(b[i] > a[i]);
        CHECK(err > -0.01 && err < 0.01);
    }
    printf("enabled %" PRIu64 " running %" PRIu64 "\n", ib.time_enabled, ib.time_running);
    return ib;
}

TEST_CASE(thread_shares_the_counters_with_another_user)
{
    need_exact_pmu();
    dk_sampler *s = user_sampler();
    const char *names[] = {"instructions", "instructions", "instructions"};
    dk_thread *t = open_names(s, names, 3);
    /* Another user of this thread's counters: a group of four, enabled. */
    int fds[4];
    fds[0] = raw_instructions(-1);
    for (int i = 1; i < 4; i++)
        fds[i] = raw_instructions(fds[0]);
    CHECK_OK(dk_thread_start(t));
    dk_reading r = scaled_deltas(t, 3, 20000000);
    CHECK(r.counted && r.multiplexed);
    CHECK_U64(r.time_running, <, r.time_enabled);
    uint64_t buf[3 + 2 * 4];
    CHECK_INT(read(fds[0], buf, sizeof buf), >, 0);
    for (int i = 0; i < 4; i++)
        close(fds[i]);
    dk_thread_close(t);
    dk_sampler_close(s);
}

/* More events than the PMU has counters: the thread sampler refuses the
 * first that does not fit (it counts its events together, never in groups
 * that take turns), and never returns zeros as counts. */
static void oversized(size_t nev)
{
    need_exact_pmu();
    dk_sampler *s = user_sampler();
    const char *names[DK_MAX_EVENTS];
    for (size_t i = 0; i < nev; i++)
        names[i] = "instructions";
    dk_thread *t = NULL;
    int rc = dk_thread_open_names(s, names, nev, &t);
    printf("%zu instruction events: %s %s\n", nev, dk_error_name(rc), rc ? dk_last_error() : "");
    if (rc == 0) {
        printf("%zu groups\n", dk__perf_event_group_count(t));
        dk_thread_close(t);
    }
    CHECK_ERR(rc, DK_ETOOMANY);
    /* The seventh is the first that does not fit (6 instruction counters). */
    CHECK_CONTAINS(dk_last_error(), "event instructions does not fit: the 6 events before it");
    dk_sampler_close(s);
}

/* The event that does not fit is named as it was asked for ("cycles"), with
 * the name perf knows it by: six instructions fill the event counters, the
 * first cycles takes the cycle counter, the second finds none. */
TEST_CASE(the_event_that_does_not_fit_is_named_as_asked)
{
    need_exact_pmu();
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, NULL));
    const char *names[] = {"instructions", "instructions", "instructions", "instructions",
                           "instructions", "instructions", "cycles",       "cycles:u"};
    dk_thread *t = NULL;
    int rc = dk_thread_open_names(s, names, 8, &t);
    printf("8 events: %s %s\n", dk_error_name(rc), rc ? dk_last_error() : "");
    if (rc == 0)
        dk_thread_close(t);
    CHECK_ERR(rc, DK_ETOOMANY);
    CHECK_CONTAINS(dk_last_error(), "event cycles:u (cpu-cycles:u) does not fit");
    dk_sampler_close(s);
}

TEST_CASE(seven_events_on_six_counters) { oversized(7); }
TEST_CASE(fourteen_events_on_six_counters) { oversized(14); }

/* Seven events on six counters, around a loop shorter than the kernel's
 * rotation of time-shared groups (4 ms): a second group would often never
 * run, and its event read 0 beside six right counts in a reading that said
 * nothing counted. The thread sampler refuses the event that does not fit;
 * the six that fit count exactly, every one of them. */
TEST_CASE(group_one_event_larger_than_the_pmu)
{
    need_exact_pmu();
    if (access("/sys/bus/event_source/devices/armv8_pmuv3", F_OK) != 0)
        SKIP("the events are arm64 PMUv3's (armv8_pmuv3 is not in /sys/bus/event_source/devices)");
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, NULL));
    const char *names[] = {"instructions",
                           "r08",
                           "armv8_pmuv3/inst_retired/",
                           "armv8_pmuv3/event=0x8/",
                           "armv8_pmuv3/event=0x08/",
                           "armv8_pmuv3/event=8/",
                           "armv8_pmuv3/inst_retired/u"};
    dk_thread *t = NULL;
    int rc = dk_thread_open_names(s, names, 7, &t);
    printf("7 events: %s %s\n", dk_error_name(rc), rc ? dk_last_error() : "");
    if (rc == 0) {
        printf("%zu groups\n", dk__perf_event_group_count(t));
        dk_thread_close(t);
    }
    CHECK_ERR(rc, DK_ETOOMANY);
    CHECK_CONTAINS(dk_last_error(), "event armv8_pmuv3/inst_retired/u does not fit");
    CHECK_CONTAINS(dk_last_error(), "the 6 events before it fill the PMU's counters");

    t = open_names(s, names, 6);
    const unsigned long n = 1000000;
    uint64_t a[6], b[6];
    dk_reading ia, ib;
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_thread_read(t, a, &ia));
    dkt_spin(n);
    CHECK_OK(dk_thread_read(t, b, &ib));
    printf("running %" PRIu64 " of %" PRIu64 ", counted %d, multiplexed %d\n", ib.time_running,
           ib.time_enabled, ib.counted, ib.multiplexed);
    CHECK(ib.counted && !ib.multiplexed);
    CHECK_U64(ib.time_running, ==, ib.time_enabled);
    for (size_t i = 0; i < 6; i++) {
        printf("%s: %" PRIu64 "\n", names[i], b[i] - a[i]);
        CHECK_U64(b[i] - a[i], >=, 2 * n);
        CHECK_U64(b[i] - a[i], ==, b[0] - a[0]); /* one group: the same instructions */
    }
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_MAIN()
