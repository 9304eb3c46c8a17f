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

/* DKPERF_SIM_PET_PASS_NS: added to each PET pass's measured duration. */
static uint64_t pet_pass_extra_ns(void)
{
    static uint64_t v = UINT64_MAX;
    if (v == UINT64_MAX) {
        const char *e = getenv("DKPERF_SIM_PET_PASS_NS");
        v = e != NULL ? strtoull(e, NULL, 10) : 0;
    }
    return v;
}

/* What the PET thread takes to sample one thread: a guess (no Mac
 * measured it), of the order of kperf_sample's callstack walk. The host's
 * cost of reading /proc is not counted: it is not the kernel's. */
#define PET_THREAD_NS 2000u

/* kptimer_pet_enter: the PET thread re-arms the timer when its pass ends,
 * period − the pass's duration later (the whole period when the pass
 * took longer), at least the minimum PET period. From one fire to the
 * next: the pass, then that. */
static uint64_t pet_interval(uint64_t period, uint64_t pass)
{
    uint64_t rest = period > pass ? period - pass : period;
    uint64_t min = kperf_ticks_to_ns(timer_min_ticks(chip_or_null(), true));
    return pass + (rest > min ? rest : min);
}

/* Keep b for the next drain (its period has not ended). */
static void hold(source *s, batch *b)
{
    if (s->nheld == s->held_cap) {
        size_t cap = s->held_cap ? s->held_cap * 2 : 64;
        batch *v = realloc(s->held, cap * sizeof *v);
        if (v == NULL) {
            b->skip = b->n;
            simk_lost();
            return;
        }
        s->held = v;
        s->held_cap = cap;
    }
    s->held[s->nheld++] = *b;
    b->r = NULL;
    b->n = b->skip = 0;
}

/*
 * Traditional PET (kptimer.c kptimer_pet_handler, then the PET thread's
 * pet.c kppet_sample_task / kppet_sample_thread) for every period that
 * ended by now (final: every fire by now, sampling stopping): PERF_TM_FIRE
 * (timer, 1, period, action) at the fire; the broadcast's on-CPU samples
 * (the timer source's own, those of the period [fire, fire + period));
 * then, stamped after them, the PET thread's sample of every thread of the
 * filtered process (every process without a filter), blocked ones
 * included. A thread with an on-CPU sample in the period was running (its
 * stack is that sample's); the others are in the state /proc gives now,
 * with the stack they wait on. The next fire is pet_interval later, the
 * pass taking PET_THREAD_NS a thread (plus DKPERF_SIM_PET_PASS_NS). On-CPU samples of a period not ended wait in
 * s->held; those between periods are dropped (no fire, no broadcast).
 * Caller holds state_lock.
 */
static void pet_batches(source *s, uint64_t now, batches *out, size_t drained, bool final)
{
    uint64_t period = s->spec.period_ns;
    if (period == 0)
        return;
    bool *in = calloc(drained + 1, sizeof *in); /* in a logged period */
    pet_thread *th = NULL;
    uint64_t *frames = NULL, pass = 0;
    size_t nth = 0;
    bool due = s->pet_fire_ns + (final ? 0 : period) <= now;
    if (due && in != NULL) {
        th = malloc(PET_THREADS_MAX * sizeof *th);
        frames = malloc(UCALLSTACK_MAX * sizeof *frames);
        nth = th != NULL && frames != NULL ? pet_threads(s->spec.pid, th) : 0;
        pass = nth * PET_THREAD_NS + pet_pass_extra_ns();
    }
    uint64_t step = pet_interval(period, pass);
    if (due && (now - s->pet_fire_ns) / step > PET_CATCHUP_MAX) {
        s->pet_fire_ns += ((now - s->pet_fire_ns) / step - PET_CATCHUP_MAX) * step;
        simk_lost();
    }
    for (; th != NULL && frames != NULL && s->pet_fire_ns + (final ? 0 : period) <= now;
         s->pet_fire_ns += step) {
        uint64_t t0 = s->pet_fire_ns, ts = ticks_of(t0);
        linux_sample pet;
        memset(&pet, 0, sizeof pet);
        pet.tid = (uint32_t)PET_THREAD_TID;
        pet.emitter = PET_THREAD_TID;
        pet.time = t0;
        batch *f = new_batch(out);
        if (f == NULL || (f->r = calloc(1, sizeof *f->r)) == NULL) {
            simk_lost();
            break;
        }
        put(f->r, &f->n, ts, ID_TM_FIRE, s->spec.index, 1, s->spec.period, s->spec.action, &pet);
        f->time = t0;
        out->n++;
        /* The broadcast's samples: the PET thread wakes after them. */
        uint64_t last = t0, last_ts = ts;
        for (size_t j = 0; j < drained; j++) {
            const batch *o = &out->v[j];
            if (o->src != s || o->time < t0 || o->time >= t0 + period)
                continue;
            in[j] = true;
            if (o->time > last)
                last = o->time;
            for (size_t k = 0; k < o->n; k++)
                if (o->r[k].timestamp > last_ts)
                    last_ts = o->r[k].timestamp;
        }
        batch *b = new_batch(out);
        size_t max = 1 + nth * (16 + (UCALLSTACK_MAX + 4) / 4 + (KPC_MAX_COUNTERS + 3) / 4 + 4);
        if (b == NULL || (b->r = calloc(max, sizeof *b->r)) == NULL) {
            simk_lost();
            break;
        }
        uint64_t pts = last_ts + 1;
        size_t w = 0;
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
            put_sample(s, &ls, b->r, &w, pts, how, state, -1);
        }
        b->time = last + 1;
        b->n = w;
        out->n++;
    }
    for (size_t j = 0; in != NULL && j < drained; j++) {
        batch *o = &out->v[j];
        if (o->src != s || in[j])
            continue;
        if (!final && o->time >= s->pet_fire_ns)
            hold(s, o);
        else
            o->skip = o->n;
    }
    free(in);
    free(frames);
    free(th);
}
