/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_linux_sim.c - reading what the simulated kperf's Linux perf_events
 * caught: their ring buffers' samples, thread switches, exits and execs,
 * each turned into the batch of records XNU would log for it. Included by
 * kperf_sampling_sim.c. Simulated: nothing here was checked on Apple
 * hardware.
 */

/* Parse one PERF_RECORD_SAMPLE body (IP, TID, TIME, CPU, CALLCHAIN). */
static bool parse_sample(const uint64_t *p, size_t words, linux_sample *ls)
{
    if (words < 5)
        return false;
    ls->ip = p[0];
    ls->pid = (uint32_t)p[1];
    ls->tid = (uint32_t)(p[1] >> 32);
    ls->time = p[2];
    ls->cpu = (uint32_t)p[3];
    uint64_t nr = p[4];
    if (nr > words - 5)
        return false;
    const uint64_t *chain = p + 5;
    ls->kchain = ls->uchain = NULL;
    ls->emitter = 0;
    ls->nk = ls->nu = 0;
    /* The context the next frames are in: each chain is the frames right
     * after its marker, and a later marker (hypervisor, guest: neither)
     * ends it without taking back the frames it holds. */
    enum { IN_NONE, IN_KERNEL, IN_USER } in = IN_NONE;
    for (uint64_t i = 0; i < nr; i++) {
        if (chain[i] == PERF_CONTEXT_KERNEL) {
            ls->kchain = chain + i + 1;
            ls->nk = 0;
            in = IN_KERNEL;
        } else if (chain[i] == PERF_CONTEXT_USER) {
            ls->uchain = chain + i + 1;
            ls->nu = 0;
            in = IN_USER;
        } else if (chain[i] >= PERF_CONTEXT_MAX) {
            in = IN_NONE;
        } else if (in == IN_USER) {
            ls->nu++;
        } else if (in == IN_KERNEL) {
            ls->nk++;
        }
    }
    return true;
}

#include "kperf_procs_sim.c"

/*
 * A thread switched off a CPU (PERF_RECORD_SWITCH or _CPU_WIDE with
 * PERF_RECORD_MISC_SWITCH_OUT): sched_prim.c thread_invoke logs
 * MACH_SCHED (reason, the next thread, both priorities) on the old thread.
 * The next thread is known only from a CPU-wide record (else 0), the
 * reason and priorities not at all (0). body: [next pid, tid (u32)] for
 * _CPU_WIDE, then the sample_id trailer (pid/tid, time, cpu).
 */
static int switch_batch(const uint64_t *body, size_t words, bool cpu_wide, batch *b)
{
    size_t at = cpu_wide ? 1 : 0;
    if (words < at + 3)
        return -1;
    b->r = calloc(1, sizeof *b->r);
    if (b->r == NULL)
        return -1;
    linux_sample ls;
    memset(&ls, 0, sizeof ls);
    ls.tid = (uint32_t)(body[at] >> 32);
    ls.cpu = (uint32_t)body[at + 2];
    size_t w = 0;
    put(b->r, &w, ticks_of(body[at + 1]), ID_MACH_SCHED, 0, cpu_wide ? body[0] >> 32 : 0, 0, 0,
        &ls);
    b->time = body[at + 1];
    b->n = w;
    return 0;
}

/* Drain one ring into batches. Caller holds state_lock. */
static void drain_ring(source *s, void *ring, batches *out)
{
    struct perf_event_mmap_page *pg = ring;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = (size_t)S_RING_PAGES * page;
    unsigned char *data = (unsigned char *)ring + page;
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = pg->data_tail;
    uint64_t copy[4096];
    while (tail < head) {
        struct perf_event_header h;
        for (size_t i = 0; i < sizeof h; i++)
            ((unsigned char *)&h)[i] = data[(tail + i) % size];
        if (h.size < sizeof h || h.size > sizeof copy)
            break;
        size_t body = h.size - sizeof h;
        for (size_t i = 0; i < body; i++)
            ((unsigned char *)copy)[i] = data[(tail + sizeof h + i) % size];
        tail += h.size;
        linux_sample ls;
        if (h.type == PERF_RECORD_LOST) {
            simk_lost();
        } else if ((h.type == PERF_RECORD_SAMPLE && parse_sample(copy, body / 8, &ls)) ||
                   h.type == PERF_RECORD_EXIT ||
                   (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC)) ||
                   ((h.type == PERF_RECORD_SWITCH || h.type == PERF_RECORD_SWITCH_CPU_WIDE) &&
                    (h.misc & PERF_RECORD_MISC_SWITCH_OUT))) {
            batch *b = new_batch(out);
            if (b == NULL) {
                simk_lost();
                continue;
            }
            int rc = h.type == PERF_RECORD_EXIT   ? exit_batch(copy, body / 8, b)
                     : h.type == PERF_RECORD_COMM ? exec_batch(copy, body / 8, b)
                     : h.type == PERF_RECORD_SAMPLE
                         ? make_batch(s, &ls, b)
                         : switch_batch(copy, body / 8, h.type == PERF_RECORD_SWITCH_CPU_WIDE, b);
            if (rc == 0)
                out->n++;
            else if (rc < 0)
                simk_lost();
        }
    }
    __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}
