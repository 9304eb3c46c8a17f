/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_pe_refusals.c - how a thread sampler names an event the kernel
 * refuses in a group, on a kernel of our own making: perf_event_open is
 * wrapped (-Wl,--wrap=syscall) so that hardware events open as task-clock
 * counters, which any machine has, and one event is refused with EINVAL,
 * in a group only or alone too. The kernel answers EINVAL both for a group
 * that has no room for an event and for attributes it refuses outright (an
 * x86 cache event with no encoding, such as L1-icache-stores): only the
 * first is "does not fit". The wrapper also counts the calls: a sampler
 * probes only what it is asked about, each answer once per process.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "api.h"

long __real_syscall(long number, ...);
long __wrap_syscall(long number, ...);

static struct {
    uint64_t config; /* the PERF_TYPE_HARDWARE event refused */
    bool alone_too;  /* refused as a group leader too, not only as a sibling */
} refuse = {UINT64_MAX, false};

static int opens; /* perf_event_open calls so far */

long __wrap_syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number != SYS_perf_event_open)
        return __real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    opens++;
    struct perf_event_attr attr = *(const struct perf_event_attr *)a[0];
    if (attr.type == PERF_TYPE_HARDWARE) {
        if (attr.config == refuse.config && (refuse.alone_too || (int)a[3] >= 0)) {
            errno = EINVAL;
            return -1;
        }
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = PERF_COUNT_SW_TASK_CLOCK;
        attr.config1 = 0;
        attr.exclude_hv = 0;
    }
    return __real_syscall(number, &attr, a[1], a[2], a[3], a[4]);
}

static int open_two(dk_sampler *s, uint64_t config, bool alone_too)
{
    refuse.config = config;
    refuse.alone_too = alone_too;
    const char *names[] = {"instructions", "branch-misses"};
    dk_thread *t = NULL;
    int rc = dk_thread_open_names(s, names, 2, &t);
    printf("%s: %s\n", dk_error_name(rc), rc ? dk_last_error() : "");
    if (rc == 0)
        dk_thread_close(t);
    refuse.config = UINT64_MAX;
    return rc;
}

/* Refused alone as well: the event's attributes are the problem, not room in
 * the group, and the error says so as it does for the event opened alone. */
TEST_CASE(an_event_refused_alone_is_not_said_not_to_fit)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "perf_event");
    int rc = open_two(s, PERF_COUNT_HW_BRANCH_MISSES, true);
    CHECK_ERR(rc, DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "the kernel refused the attributes of event branch-misses");
    CHECK(strstr(dk_last_error(), "group") == NULL);
    CHECK(strstr(dk_last_error(), "fit") == NULL);
    /* Alone, the same answer. */
    refuse.config = PERF_COUNT_HW_BRANCH_MISSES;
    refuse.alone_too = true;
    const char *one[] = {"branch-misses"};
    dk_thread *t = NULL;
    CHECK_ERR(dk_thread_open_names(s, one, 1, &t), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "the kernel refused the attributes of event branch-misses");
    refuse.config = UINT64_MAX;
    dk_sampler_close(s);
}

/* Refused only beside the events before it: that group has no room for it. */
TEST_CASE(an_event_refused_only_in_the_group_does_not_fit)
{
    dk_sampler *s = open_sampler();
    int rc = open_two(s, PERF_COUNT_HW_BRANCH_MISSES, false);
    CHECK(rc == DK_ECONFLICT || rc == DK_ETOOMANY);
    CHECK_CONTAINS(dk_last_error(), "event branch-misses");
    CHECK_CONTAINS(dk_last_error(), "the 1 events before it");
    /* Nothing was left open: the pair opens once the kernel takes it. */
    CHECK_OK(open_two(s, UINT64_MAX, false));
    dk_sampler_close(s);
}

/* Opening a sampler asks the kernel one question (can it count at all);
 * resolving names asks none; a count of task-clock opens one counter; a
 * second sampler asks nothing already answered. */
TEST_CASE(a_sampler_probes_only_what_it_is_asked)
{
    opens = 0;
    dk_sampler *s = open_sampler();
    CHECK_INT(opens, <=, 1);
    int after_open = opens;
    const char *names[] = {"task-clock", "cycles", "instructions", "branches", "branch-misses"};
    const dk_database_event *ev = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK_OK(dk_sampler_resolve(s, names[i], &ev));
    CHECK_INT(opens, ==, after_open);
    /* The database's answer for task-clock is the one the open found. */
    ev = dk_database_find(dk_sampler_database(s), "task-clock");
    CHECK(ev != NULL && ev->supported);
    CHECK_INT(opens, ==, after_open);
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 1, 0, &g));
    CHECK_INT(opens, ==, after_open + 1);
    dk_group_close(g);
    /* Listing every event probes each once; a second sampler, none again. */
    const dk_database *db = dk_sampler_database(s);
    for (size_t i = 0; i < dk_database_event_count(db); i++)
        CHECK(dk_database_event_at(db, i) != NULL);
    int listed = opens;
    CHECK_INT(listed, >, after_open + 1);
    for (size_t i = 0; i < dk_database_event_count(db); i++)
        CHECK(dk_database_event_at(db, i) != NULL);
    CHECK_INT(opens, ==, listed);
    dk_sampler *s2 = open_sampler();
    const dk_database *db2 = dk_sampler_database(s2);
    for (size_t i = 0; i < dk_database_event_count(db2); i++) {
        const dk_database_event *e1 = dk_database_event_at(db, i);
        const dk_database_event *e2 = dk_database_event_at(db2, i);
        CHECK_STR(e2->name, e1->name);
        CHECK(e2->supported == e1->supported);
    }
    CHECK_INT(opens, ==, listed);
    dk_sampler_close(s2);
    dk_sampler_close(s);
}

TEST_MAIN()
