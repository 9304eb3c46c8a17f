/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_petpass_sim.c - traditional PET's periods as the simulated kperf
 * logs them (osfmk/kperf/kptimer.c kptimer_pet_handler, osfmk/kperf/
 * pet.c kppet_sample_task / kppet_sample_thread): the PET timer's fire,
 * then the PET thread's pass over every thread. Included by
 * kperf_sampling_sim.c. Simulated: nothing here was checked on Apple
 * hardware.
 */

/* The user stack a batch logged (its first CS_UHDR's frames, the fixup
 * word left out): what the PET thread sees of a thread it found on CPU. */
static size_t batch_stack(const batch *b, uint64_t *frames, size_t max)
{
    size_t i = 0, n = 0;
    while (i < b->n && (b->r[i].debugid & ~3u) != ID_CS_UHDR)
        i++;
    if (i == b->n)
        return 0;
    size_t want = (size_t)b->r[i].arg2;
    for (i++; i < b->n && (b->r[i].debugid & ~3u) == ID_CS_UDATA; i++) {
        const uint64_t v[4] = {b->r[i].arg1, b->r[i].arg2, b->r[i].arg3, b->r[i].arg4};
        for (size_t j = 0; j < 4 && n < want && n < max; j++)
            frames[n++] = v[j];
    }
    return n > 0 ? n - 1 : 0;
}

/* Periods a drain catches up on at most; older ones are lost. */
#define PET_CATCHUP_MAX 4096u

/*
 * Traditional PET (kptimer_pet_handler, then the PET thread's
 * kppet_sample_task / kppet_sample_thread): for every period that ended
 * by now, PERF_TM_FIRE (timer, 1, period, action) at its start, then a
 * sample of every thread of the filtered process (every process without
 * a filter), blocked ones included. A thread with an on-CPU sample of the
 * PET timer in the period was running (its stack is that sample's); the
 * others are in the state /proc gives now, with the stack they wait on.
 * The on-CPU samples of the fire's broadcast are the timer source's own.
 * Caller holds state_lock.
 */
static void pet_batches(source *s, uint64_t now, batches *out, size_t drained)
{
    uint64_t period = s->spec.period_ns;
    if (period == 0 || now < s->start_ns + period)
        return;
    uint64_t upto = (now - s->start_ns) / period;
    if (upto <= s->periods_done)
        return;
    if (upto - s->periods_done > PET_CATCHUP_MAX) {
        s->periods_done = upto - PET_CATCHUP_MAX;
        simk_lost();
    }
    pet_thread *th = malloc(PET_THREADS_MAX * sizeof *th);
    uint64_t *frames = malloc(UCALLSTACK_MAX * sizeof *frames);
    size_t nth = th != NULL && frames != NULL ? pet_threads(s->spec.pid, th) : 0;
    for (; s->periods_done < upto && th != NULL && frames != NULL; s->periods_done++) {
        uint64_t t0 = s->start_ns + s->periods_done * period, ts = ticks_of(t0);
        batch *b = new_batch(out);
        linux_sample pet;
        memset(&pet, 0, sizeof pet);
        pet.tid = (uint32_t)PET_THREAD_TID;
        pet.emitter = PET_THREAD_TID;
        pet.time = t0;
        size_t max = 1 + nth * (16 + (UCALLSTACK_MAX + 4) / 4 + (KPC_MAX_COUNTERS + 3) / 4 + 4);
        if (b == NULL || (b->r = calloc(max, sizeof *b->r)) == NULL) {
            simk_lost();
            break;
        }
        size_t w = 0;
        put(b->r, &w, ts, ID_TM_FIRE, s->spec.index, 1, s->spec.period, s->spec.action, &pet);
        for (size_t i = 0; i < nth; i++) {
            linux_sample ls = pet;
            ls.pid = th[i].pid;
            ls.tid = th[i].tid;
            uint32_t state = th[i].state;
            ls.uchain = th[i].frames;
            ls.nu = th[i].nu;
            for (size_t j = 0; j < drained; j++) {
                const batch *o = &out->v[j];
                if (o->src == s && o->tid == th[i].tid && o->time >= t0 && o->time < t0 + period) {
                    state = TI_RUNNING | TI_RUNNABLE;
                    ls.nu = batch_stack(o, frames, UCALLSTACK_MAX);
                    ls.uchain = frames;
                    break;
                }
            }
            /* kppet_sample_thread: a thread not switched since its last
             * PET sample (kperf_thread_get_dirty) gets an empty callstack
             * but every idle_rate-th time. */
            tally_entry *te = tally_of(th[i].tid);
            int how = HOW_PET_THREAD;
            uint32_t rate = pet_idle_rate ? pet_idle_rate : 1;
            if (th[i].cswitch != te->pet_cswitch)
                te->pet_cswitch = th[i].cswitch;
            else if (te->pet_cnt % rate != 0)
                how |= HOW_EMPTY_STACK;
            te->pet_cnt++;
            put_sample(s, &ls, b->r, &w, ts, how, state, -1);
        }
        b->time = t0;
        b->n = w;
        out->n++;
    }
    free(frames);
    free(th);
}
