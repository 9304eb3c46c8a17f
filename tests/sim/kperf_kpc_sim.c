/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_kpc_sim.c - the simulated kperf.framework's KPC functions: the CPU
 * and PMU, counter classes and counts, config registers, counting and
 * thread counting, force_all_ctrs, the counters read per thread and per
 * CPU, and the optional kpc.period and kpc.actionid. Included by
 * kperf_sim.c, which owns the state they read and write.
 */

SIM_API int kpc_cpu_string(char *buf, size_t buf_size)
{
    FAULT(kpc_cpu_string);
    const sim_chip *c = chip();
    if (buf == NULL || c == NULL)
        FAIL_ERRNO(EINVAL);
    return snprintf(buf, buf_size, "%s", c->cpu_id);
}

SIM_API uint32_t kpc_pmu_version(void)
{
    int code;
    const sim_chip *c = chip();
    if (sim_fault("kpc_pmu_version", &code) || c == NULL)
        return KPC_PMU_ERROR;
    if (!sim_privileged()) { /* kpc.pmu_version is not in the public list */
        errno = EPERM;
        return KPC_PMU_ERROR;
    }
    return c->pmu_version;
}

SIM_API uint32_t kpc_get_counting(void)
{
    int code;
    chip();
    if (sim_fault("kpc_get_counting", &code))
        return 0;
    if (!sim_privileged()) { /* ktrace_read_check */
        errno = EPERM;
        return 0;
    }
    pthread_mutex_lock(&state_lock);
    uint32_t v = counting;
    pthread_mutex_unlock(&state_lock);
    return v;
}

SIM_API int kpc_set_counting(uint32_t classes)
{
    FAULT(kpc_set_counting);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (classes & ~0xfu)
        FAIL_ERRNO(EINVAL);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    sync_cpus(c);
    counting = classes;
    if (c != NULL && is_intel(c)) {
        /* set_running_fixed: ENABLE_ALL_RINGS|PMI (0xb) per fixed counter,
         * never turned off; set_running_configurable: PMI|EN in every
         * PERFEVTSEL. */
        if (classes & KPC_CLASS_FIXED_MASK)
            for (unsigned i = 0; i < fixed_count(c); i++)
                fixed_ctrl |= (kpc_config_t)0xb << (4 * i);
        if (classes & KPC_CLASS_CONFIGURABLE_MASK)
            for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
                if (c->config_bits >> i & 1)
                    config[i] |= 0x500000u;
    }
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API uint32_t kpc_get_thread_counting(void)
{
    int code;
    chip();
    if (sim_fault("kpc_get_thread_counting", &code))
        return 0;
    if (!sim_privileged()) { /* ktrace_read_check */
        errno = EPERM;
        return 0;
    }
    pthread_mutex_lock(&state_lock);
    uint32_t v = thread_counting;
    pthread_mutex_unlock(&state_lock);
    return v;
}

SIM_API int kpc_set_thread_counting(uint32_t classes)
{
    FAULT(kpc_set_thread_counting);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (classes & ~0xfu)
        FAIL_ERRNO(EINVAL);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    thread_counting = classes;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API uint32_t kpc_get_config_count(uint32_t classes)
{
    int code;
    const sim_chip *c = chip();
    if (sim_fault("kpc_get_config_count", &code) || c == NULL)
        return 0;
    uint32_t n = 0;
    if (classes & KPC_CLASS_FIXED_MASK)
        n += c->fixed_config_words;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        n += config_count(c);
    /* POWER: empty, see counters_of(). */
    return n;
}

SIM_API uint32_t kpc_get_counter_count(uint32_t classes)
{
    int code;
    const sim_chip *c = chip();
    if (sim_fault("kpc_get_counter_count", &code))
        return 0;
    return counters_of(c, classes);
}

SIM_API int kpc_get_config(uint32_t classes, kpc_config_t *cfg)
{
    FAULT(kpc_get_config);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (c == NULL || kpc_get_config_count(classes) == 0) /* regsize 0 */
        FAIL_ERRNO(EINVAL);
    if (cfg == NULL) /* oldp NULL: a size query */
        return 0;
    size_t w = 0;
    pthread_mutex_lock(&state_lock);
    if (classes & KPC_CLASS_FIXED_MASK)
        for (uint32_t i = 0; i < c->fixed_config_words; i++)
            cfg[w++] = fixed_ctrl;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->config_bits >> i & 1)
                cfg[w++] = config[i];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/*
 * What the kernel writes for a configurable word. x86: kpc_set_configurable_config
 * masks with 0xffc7ffff. arm64 set_modes: a word with no mode bits means all
 * modes; on a release kernel EL1 is dropped without an error (and EL3 with it).
 */
static kpc_config_t stored_word(const sim_chip *c, kpc_config_t w)
{
    if (is_intel(c))
        return w & 0xffc7ffffu;
    bool el1 = !policy_checked();
    if (w != 0 && !(w & ARM_MODES))
        w |= el1 ? ARM_EL0_A32 | ARM_EL0_A64 | ARM_EL1 : ARM_EL0_A64;
    if (!el1)
        w &= ~(kpc_config_t)(ARM_EL1 | ARM_EL3);
    return w;
}

SIM_API int kpc_set_config(uint32_t classes, kpc_config_t *cfg)
{
    FAULT(kpc_set_config);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (classes & KPC_CLASS_POWER_MASK) /* sysctl_kpc_set_config */
        FAIL_ERRNO(EPERM);
    if (c == NULL || (classes & ~0xfu) || kpc_get_config_count(classes) == 0)
        FAIL_ERRNO(EINVAL);
    if (cfg == NULL) /* copyin from a NULL newp */
        FAIL_ERRNO(EFAULT);
    /* kpc_set_config_arch, secure: check every word first, so a refused
     * write changes nothing. x86 checks nothing. */
    size_t w = (classes & KPC_CLASS_FIXED_MASK) ? c->fixed_config_words : 0;
    if (!is_intel(c) && policy_checked() && (classes & KPC_CLASS_CONFIGURABLE_MASK))
        for (unsigned i = 0, k = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->config_bits >> i & 1)
                if (!selector_allowed(c, selector_of(c, cfg[w + k++])))
                    FAIL_ERRNO(EPERM);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    sync_cpus(c);
    w = 0;
    /* x86 kpc_set_fixed_config is NYI: the word is skipped, the call succeeds. */
    w = (classes & KPC_CLASS_FIXED_MASK) ? c->fixed_config_words : 0;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK) {
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
            if (!(c->config_bits >> i & 1))
                continue;
            kpc_config_t word = cfg[w++];
            /* The power manager keeps its counters unless they were forced. */
            if ((c->power_bits >> i & 1) && !force_all)
                continue;
            config[i] = stored_word(c, word);
        }
    }
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_get_cpu_counters(bool all_cpus, uint32_t classes, int *curcpu, uint64_t *buf)
{
    FAULT(kpc_get_cpu_counters);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (buf == NULL || c == NULL)
        FAIL_ERRNO(EINVAL);
    int here = sched_getcpu();
    if (here < 0 || here >= cpu_count)
        here = 0;
    if (curcpu != NULL)
        *curcpu = here;
    pthread_mutex_lock(&state_lock);
    sync_cpus(c);
    size_t w = 0;
    for (int cpu = all_cpus ? 0 : here; cpu < (all_cpus ? cpu_count : here + 1); cpu++) {
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
            bool fixed = c->fixed_bits >> i & 1, conf = c->config_bits >> i & 1;
            if ((fixed && (classes & KPC_CLASS_FIXED_MASK)) ||
                (conf && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
                buf[w++] = cpu_value[cpu][i];
        }
    }
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_get_thread_counters(uint32_t tid, uint32_t buf_count, uint64_t *buf)
{
    FAULT(kpc_get_thread_counters);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (tid != 0 || buf == NULL || c == NULL)
        FAIL_ERRNO(EINVAL);
    sync_thread(c);
    uint32_t classes = thread_counting; /* a racy read is what a sysctl gives too */
    if (buf_count < counters_of(c, classes & (KPC_CLASS_FIXED_MASK | KPC_CLASS_CONFIGURABLE_MASK)))
        FAIL_ERRNO(EINVAL);
    size_t w = 0;
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
        bool fixed = c->fixed_bits >> i & 1, conf = c->config_bits >> i & 1;
        if ((fixed && (classes & KPC_CLASS_FIXED_MASK)) ||
            (conf && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
            buf[w++] = self.value[i];
    }
    return 0;
}

SIM_API int kpc_force_all_ctrs_set(int val)
{
    FAULT(kpc_force_all_ctrs_set);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (val && sim_busy())
        FAIL_ERRNO(EBUSY);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    force_all = val ? 1 : 0;
    force_all_pid = force_all ? (long)getpid() : 0;
    if (!force_all && c != NULL) {
        /* The power manager takes its counters back. */
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->power_bits >> i & 1)
                config[i] = 0;
    }
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_force_all_ctrs_get(int *val_out)
{
    FAULT(kpc_force_all_ctrs_get);
    PRIVILEGED();
    chip();
    if (val_out == NULL) /* oldp NULL: a size query, as for every int sysctl */
        return 0;
    pthread_mutex_lock(&state_lock);
    *val_out = sim_busy() ? 1 : force_all; /* another client holds them */
    pthread_mutex_unlock(&state_lock);
    return 0;
}

#ifndef SIM_OMIT_OPTIONAL
/*
 * kpc.period and kpc.actionid (bsd/kern/kern_kpc.c, osfmk/kern/kpc_common.c
 * kpc_get_period/kpc_set_period/kpc_get_actionid/kpc_set_actionid): one
 * entry per counter of the classes, fixed first. A NULL output is a size
 * query; a NULL input cannot be copied in.
 */
static int period_args(const sim_chip *c, uint32_t classes)
{
    /* sysctl_getset_bigarray: regsize = kpc_get_counter_count(classes) * n;
     * 0 → EINVAL. Bits of no class count nothing and are otherwise
     * ignored. */
    if (c == NULL || counters_of(c, classes) == 0)
        return EINVAL;
    return 0;
}

SIM_API int kpc_get_period(uint32_t classes, uint64_t *val)
{
    FAULT(kpc_get_period);
    PRIVILEGED();
    const sim_chip *c = chip();
    int e = period_args(c, classes);
    if (e != 0)
        FAIL_ERRNO(e);
    /* kpc_get_period reads every class's reloads on every architecture;
     * only kpc_set_period refuses FIXED on x86 (no FIXED_COUNTER_SHADOW). */
    if (val == NULL)
        return 0;
    uint64_t max = counter_max(c);
    size_t w = 0;
    pthread_mutex_lock(&state_lock);
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
        if (((c->fixed_bits >> i & 1) && (classes & KPC_CLASS_FIXED_MASK)) ||
            ((c->config_bits >> i & 1) && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
            val[w++] = max - reload[i];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_set_period(uint32_t classes, uint64_t *val)
{
    FAULT(kpc_set_period);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (classes & KPC_CLASS_POWER_MASK) /* sysctl_kpc_set_period */
        FAIL_ERRNO(EPERM);
    int e = period_args(c, classes);
    if (e != 0)
        FAIL_ERRNO(e);
    if ((classes & KPC_CLASS_FIXED_MASK) && is_intel(c))
        FAIL_ERRNO(EINVAL);
    if (val == NULL)
        FAIL_ERRNO(EFAULT);
    uint64_t max = counter_max(c);
    pthread_mutex_lock(&state_lock);
    /* arm64 ignores the fixed periods (fixed PMIs belong to monotonic), and
     * its reload xcall reads the configurable periods from index 0 even when
     * FIXED is in classes; x86 has refused FIXED above. */
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        for (unsigned i = 0, k = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->config_bits >> i & 1) {
                uint64_t p = val[k++];
                reload[i] = p == 0 || p > max ? 0 : max - p; /* 0: no PMI */
            }
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_get_actionid(uint32_t classes, uint32_t *val)
{
    FAULT(kpc_get_actionid);
    PRIVILEGED();
    const sim_chip *c = chip();
    int e = period_args(c, classes);
    if (e != 0)
        FAIL_ERRNO(e);
    if (val == NULL)
        return 0;
    size_t w = 0;
    pthread_mutex_lock(&state_lock);
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
        if (((c->fixed_bits >> i & 1) && (classes & KPC_CLASS_FIXED_MASK)) ||
            ((c->config_bits >> i & 1) && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
            val[w++] = pmi_action[i];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/* sysctl_kpc_set_actionid → kpc_set_actionid: only the bigarray wrapper's
 * check (no counter in classes → EINVAL); unlike config and period, POWER is
 * not refused, and the ids are not checked against kperf's actions. */
SIM_API int kpc_set_actionid(uint32_t classes, uint32_t *val)
{
    FAULT(kpc_set_actionid);
    PRIVILEGED();
    const sim_chip *c = chip();
    int e = period_args(c, classes);
    if (e != 0)
        FAIL_ERRNO(e);
    if (val == NULL)
        FAIL_ERRNO(EFAULT);
    size_t w = 0;
    pthread_mutex_lock(&state_lock);
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
        if (((c->fixed_bits >> i & 1) && (classes & KPC_CLASS_FIXED_MASK)) ||
            ((c->config_bits >> i & 1) && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
            pmi_action[i] = val[w++];
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}
#endif
