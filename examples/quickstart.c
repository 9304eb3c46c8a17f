/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * quickstart.c - count instructions and cycles around a loop on this
 * thread, and print the IPC.
 *
 * On a Mac run it as root (the counters need it). Against the simulated
 * frameworks: DKPERF_FRAMEWORK_ROOT=build/sim-root ./build/examples/quickstart
 */
#include <stdint.h>
#include <stdio.h>

#include <dkperf.h>

static uint64_t work(uint64_t n)
{
    volatile uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += i * i;
    return sum;
}

int main(void)
{
    dk_sampler *sampler = NULL;
    dk_thread *thread = NULL;
    const dk_event events[] = {DK_EVENT_FIXED_INSTRUCTIONS, DK_EVENT_FIXED_CYCLES};
    uint64_t before[2], after[2];

    int rc = dk_sampler_open(&sampler, NULL);
    if (rc == 0)
        rc = dk_thread_open(sampler, events, 2, &thread);
    if (rc == 0)
        rc = dk_thread_start(thread);
    if (rc == 0)
        rc = dk_thread_sample(thread, before);
    if (rc == 0) {
        work(10 * 1000 * 1000);
        rc = dk_thread_sample(thread, after);
    }
    if (rc != 0) {
        fprintf(stderr, "quickstart: %s: %s\n", dk_error_name(rc), dk_last_error());
        dk_thread_close(thread);
        dk_sampler_close(sampler);
        return 1;
    }
    dk_thread_stop(thread);

    uint64_t instructions = after[0] - before[0];
    uint64_t cycles = after[1] - before[1];
    printf("cpu:          %s (%s)\n", dk_cpu_name(dk_sampler_cpu(sampler)),
           dk_database_marketing_name(dk_sampler_database(sampler)));
    printf("instructions: %llu\n", (unsigned long long)instructions);
    printf("cycles:       %llu\n", (unsigned long long)cycles);
    printf("IPC:          %.2f\n", cycles ? (double)instructions / (double)cycles : 0.0);

    dk_thread_close(thread);
    dk_sampler_close(sampler);
    return 0;
}
