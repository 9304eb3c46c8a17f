/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * spin.h - a loop of exactly two instructions per iteration (decrement and
 * branch), for exact instruction counts on a PMU that counts exactly (QEMU
 * with -icount). n must be at least 1.
 */
#ifndef DKPERF_TEST_SPIN_H
#define DKPERF_TEST_SPIN_H

static __attribute__((noinline, unused)) void dkt_spin(unsigned long n)
{
#if defined(__aarch64__)
    __asm__ __volatile__("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#elif defined(__x86_64__)
    __asm__ __volatile__("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#else
    for (volatile unsigned long i = 0; i < n; i++)
        ;
#endif
}

#endif /* DKPERF_TEST_SPIN_H */
