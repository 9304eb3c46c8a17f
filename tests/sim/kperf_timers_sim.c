/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_timers_sim.c - the simulated kperf.framework's KPERF functions:
 * actions and their samplers and pid filters, timers and their periods,
 * sampling on and off, reset, and the tick conversions. Included by
 * kperf_sim.c, which owns the state they read and write.
 */

#define KPERF_PROLOGUE(fn) \
    FAULT(fn);             \
    PRIVILEGED();          \
    chip()

/* A kperf write (oldp NULL, newp given) takes ktrace ownership
 * (kperfbsd.c kperf_sysctl → ktrace_configure(KTRACE_KPERF)): EPERM, or
 * EBUSY while another live process owns tracing. */
#define KPERF_SET_PROLOGUE(fn)                                \
    FAULT(fn);                                                \
    PRIVILEGED();                                             \
    do {                                                      \
        int busy_ = simk_ktrace_configure(SIMK_KTRACE_KPERF); \
        if (busy_ != 0)                                       \
            FAIL_ERRNO(busy_);                                \
    } while (0);                                              \
    chip()

SIM_API int kperf_action_count_set(uint32_t count)
{
    KPERF_SET_PROLOGUE(kperf_action_count_set);
    if (count > KPERF_ACTION_MAX)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    if (count < action_count) { /* kperf_action_set_count: actions never shrink */
        pthread_mutex_unlock(&state_lock);
        FAIL_ERRNO(EINVAL);
    }
    action_count = count;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_count_get(uint32_t *count)
{
    KPERF_PROLOGUE(kperf_action_count_get);
    if (count == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *count = action_count;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/* kptimer_set_*: timers cannot change while sampling. */
#define NOT_SAMPLING()                     \
    if (sampling) {                        \
        pthread_mutex_unlock(&state_lock); \
        FAIL_ERRNO(EBUSY);                 \
    }

/* Action ids count from 1, as in the kernel; 0 means "no action". */
#define CHECK_ACTION(id)                    \
    if ((id) == 0 || (id) > action_count) { \
        pthread_mutex_unlock(&state_lock);  \
        FAIL_ERRNO(EINVAL);                 \
    }

SIM_API int kperf_action_samplers_set(uint32_t actionid, uint32_t sample)
{
    KPERF_SET_PROLOGUE(kperf_action_samplers_set);
    /* kperf_action_set_samplers: the thread's and the CPU's PMCs exclude each other. */
    if ((sample & KPERF_SAMPLER_PMC_THREAD) && (sample & KPERF_SAMPLER_PMC_CPU))
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_samplers[actionid - 1] = sample;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_samplers_get(uint32_t actionid, uint32_t *sample)
{
    KPERF_PROLOGUE(kperf_action_samplers_get);
    if (sample == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    *sample = action_samplers[actionid - 1];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_filter_set_by_task(uint32_t actionid, int32_t port)
{
    KPERF_SET_PROLOGUE(kperf_action_filter_set_by_task);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_task[actionid - 1] = port;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_filter_set_by_pid(uint32_t actionid, int32_t pid)
{
    KPERF_SET_PROLOGUE(kperf_action_filter_set_by_pid);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_pid[actionid - 1] = pid;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_count_set(uint32_t count)
{
    KPERF_SET_PROLOGUE(kperf_timer_count_set);
    pthread_mutex_lock(&state_lock);
    NOT_SAMPLING(); /* kptimer_set_count: EBUSY before the count is looked at */
    if (count > KPERF_TIMER_MAX) {
        pthread_mutex_unlock(&state_lock);
        FAIL_ERRNO(EINVAL);
    }
    timer_count = count;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_count_get(uint32_t *count)
{
    KPERF_PROLOGUE(kperf_timer_count_get);
    if (count == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *count = timer_count;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

#define CHECK_TIMER(id)                    \
    if ((id) >= timer_count) {             \
        pthread_mutex_unlock(&state_lock); \
        FAIL_ERRNO(EINVAL);                \
    }

SIM_API int kperf_timer_period_set(uint32_t timerid, uint64_t tick)
{
    KPERF_SET_PROLOGUE(kperf_timer_period_set);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid); /* kptimer_set_period: the id first, then EBUSY */
    NOT_SAMPLING();
    /* A period under the minimum is raised to it when set, so reading it
     * back gives what the timer will use (the PET timer's minimum for the
     * PET timer). */
    uint64_t min = timer_min_ticks(chip_or_null(), pet_timer == timerid);
    timer_period[timerid] = tick != 0 && tick < min ? min : tick;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_period_get(uint32_t timerid, uint64_t *tick)
{
    KPERF_PROLOGUE(kperf_timer_period_get);
    if (tick == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid);
    *tick = timer_period[timerid];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_action_set(uint32_t timerid, uint32_t actionid)
{
    KPERF_SET_PROLOGUE(kperf_timer_action_set);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid); /* kptimer_set_action: the id first, then EBUSY */
    NOT_SAMPLING();
    timer_action[timerid] = actionid; /* kptimer_set_action validates no action id */
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_action_get(uint32_t timerid, uint32_t *actionid)
{
    KPERF_PROLOGUE(kperf_timer_action_get);
    if (actionid == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid);
    *actionid = timer_action[timerid];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_pet_set(uint32_t timerid)
{
    KPERF_SET_PROLOGUE(kperf_timer_pet_set);
    pthread_mutex_lock(&state_lock);
    NOT_SAMPLING();
    /* kptimer_set_pet_timerid: an id past the timers turns PET off (999 is
     * how clients say so); a timer made the PET timer has its period
     * raised to the PET minimum. */
    if (timerid < timer_count) {
        uint64_t min = timer_min_ticks(chip_or_null(), true);
        if (timer_period[timerid] < min)
            timer_period[timerid] = min;
    }
    pet_timer = timerid;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_pet_get(uint32_t *timerid)
{
    KPERF_PROLOGUE(kperf_timer_pet_get);
    if (timerid == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *timerid = pet_timer;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_sample_set(uint32_t enabled)
{
    KPERF_SET_PROLOGUE(kperf_sample_set);
    pthread_mutex_lock(&state_lock);
    /* kperf_enable_sampling: ECANCELED without actions; no timer needed. */
    if (enabled && action_count == 0) {
        pthread_mutex_unlock(&state_lock);
        FAIL_ERRNO(ECANCELED);
    }
    sampling = enabled ? 1 : 0;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_sample_get(uint32_t *enabled)
{
    KPERF_PROLOGUE(kperf_sample_get);
    if (enabled == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *enabled = sampling;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_reset(void)
{
    KPERF_SET_PROLOGUE(kperf_reset);
    pthread_mutex_lock(&state_lock);
    /* kperf_reset keeps the action and timer counts. */
    sampling = 0;
    pet_timer = 999;
    lightweight_pet = 0;                   /* kppet_reset → kppet_set_lightweight_pet(0) */
    kdbg_cswitch = 0;                      /* kperf_kdbg_cswitch_set(0) */
    pet_idle_rate = PET_IDLE_RATE_DEFAULT; /* and kppet_set_idle_rate(default) */
    memset(action_samplers, 0, sizeof action_samplers);
    memset(action_task, 0, sizeof action_task);
    for (unsigned i = 0; i < KPERF_ACTION_MAX; i++)
        action_pid[i] = -1;
    memset(timer_period, 0, sizeof timer_period);
    memset(timer_action, 0, sizeof timer_action);
    simk_ktrace_reset(SIMK_KTRACE_KPERF); /* ktrace_reset(KTRACE_KPERF) → kperf_reset */
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/*
 * kperf's sysctl nodes (osfmk/kperf/kperfbsd.c kperf_sysctl) that clients
 * set directly: a write without a read (oldp NULL) takes ktrace
 * (ktrace_configure), anything else checks the caller may read it
 * (ktrace_read_check); the value is an int (sysctl_io_number: ENOMEM for
 * a short old buffer, EINVAL for a short new value). The nodes with a
 * framework call go through it (kperf.sampling, kperf.action.count,
 * kperf.timer.count, kperf.timer.pet_timer); kperf.lightweight_pet has
 * none (kppet_set_lightweight_pet: EBUSY while sampling, 1 turns it on,
 * any other value off). Other names: ENOENT.
 */
static int lightweight_pet_get(uint32_t *v)
{
    pthread_mutex_lock(&state_lock);
    *v = lightweight_pet;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

static int lightweight_pet_set(uint32_t v)
{
    pthread_mutex_lock(&state_lock);
    NOT_SAMPLING();
    lightweight_pet = v == 1;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/* kperf.pet_idle_rate: kppet_set_idle_rate takes any value, sampling or
 * not (0 would divide by zero in kppet_sample_thread: the sim takes it as
 * 1). */
static int pet_idle_rate_get(uint32_t *v)
{
    pthread_mutex_lock(&state_lock);
    *v = pet_idle_rate;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

static int pet_idle_rate_set(uint32_t v)
{
    pthread_mutex_lock(&state_lock);
    pet_idle_rate = v;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/* kperf.kdbg_cswitch (action.c kperf_kdbg_cswitch_set): any value, kept
 * as given; the context-switch records it asks for are not simulated. */
static int kdbg_cswitch_get(uint32_t *v)
{
    pthread_mutex_lock(&state_lock);
    *v = kdbg_cswitch;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

static int kdbg_cswitch_set(uint32_t v)
{
    pthread_mutex_lock(&state_lock);
    kdbg_cswitch = v;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

static const struct {
    const char *name;
    int (*get)(uint32_t *);
    int (*set)(uint32_t);
} kperf_nodes[] = {
    {"kperf.lightweight_pet", lightweight_pet_get, lightweight_pet_set},
    {"kperf.pet_idle_rate", pet_idle_rate_get, pet_idle_rate_set},
    {"kperf.kdbg_cswitch", kdbg_cswitch_get, kdbg_cswitch_set},
    {"kperf.sampling", kperf_sample_get, kperf_sample_set},
    {"kperf.action.count", kperf_action_count_get, kperf_action_count_set},
    {"kperf.timer.count", kperf_timer_count_get, kperf_timer_count_set},
    {"kperf.timer.pet_timer", kperf_timer_pet_get, kperf_timer_pet_set},
};

static int kperf_sysctl_node(const char *name, void *oldp, size_t *oldlenp, const void *newp,
                             size_t newlen)
{
    chip();
    size_t i = 0, n = sizeof kperf_nodes / sizeof kperf_nodes[0];
    while (i < n && strcmp(kperf_nodes[i].name, name) != 0)
        i++;
    if (i == n)
        return ENOENT;
    int e = oldp == NULL && newp != NULL ? simk_ktrace_configure(SIMK_KTRACE_KPERF)
                                         : simk_ktrace_read_check();
    if (e != 0)
        return e;
    uint32_t v = 0;
    if (oldp != NULL) {
        if (oldlenp == NULL || *oldlenp < sizeof(int))
            return ENOMEM;
        if (kperf_nodes[i].get(&v) != 0)
            return errno;
        memcpy(oldp, &v, sizeof v);
    }
    if (oldlenp != NULL)
        *oldlenp = sizeof(int);
    if (newp == NULL)
        return 0;
    if (newlen < sizeof(int))
        return EINVAL;
    memcpy(&v, newp, sizeof v);
    return kperf_nodes[i].set(v) != 0 ? errno : 0;
}

/* The nodes exist while the framework is loaded (the library dlcloses it). */
__attribute__((constructor)) static void register_sysctl_nodes(void)
{
    simk_set_kperf_sysctl(kperf_sysctl_node);
}

__attribute__((destructor)) static void unregister_sysctl_nodes(void)
{
    simk_set_kperf_sysctl(NULL);
}

/* mach_absolute_time runs at 24 MHz on Apple Silicon and at 1 GHz on Intel. */
SIM_API uint64_t kperf_ns_to_ticks(uint64_t ns)
{
    const sim_chip *c = chip();
    if (c != NULL && c->architecture == KPEP_ARCH_X86_64)
        return ns;
    return ns / 125 * 3 + ns % 125 * 3 / 125;
}

SIM_API uint64_t kperf_ticks_to_ns(uint64_t ticks)
{
    const sim_chip *c = chip();
    if (c != NULL && c->architecture == KPEP_ARCH_X86_64)
        return ticks;
    return ticks / 3 * 125 + ticks % 3 * 125 / 3;
}

#ifndef SIM_OMIT_LAST_SYMBOL
SIM_API uint64_t kperf_tick_frequency(void)
{
    const sim_chip *c = chip();
    return c != NULL && c->architecture == KPEP_ARCH_X86_64 ? 1000000000u : 24000000u;
}
#endif
