// SPDX-License-Identifier: MIT OR Apache-2.0
//
// gbench_exact_program.cpp - a google benchmark program using
// dkperf/benchmark.hpp, for tests/check_gbench_exact.sh: one function whose
// body is exactly K instructions of inline asm (K = 0: an empty body, which
// leaves google benchmark's own cost per iteration), each K at two fixed
// iteration counts, so that the per-iteration slope and the constant cost
// (the constructor to the loop, the loop's end to the destructor) can both
// be read from the totals. User-mode instructions only: the kernel's (timer
// interrupts) would be noise.
//
// One template for every K: the instantiations are the same code but for
// the asm's repeat count, so the compiler cannot lay their loops out
// differently and the difference between two bodies is exactly the asm.
#include <benchmark/benchmark.h>
#include <dkperf/benchmark.hpp>

template <int K> static void BM_nops(benchmark::State &state)
{
    dkperf::BenchmarkCounters counters(state, "instructions:u");
    for (auto _ : state) {
#if defined(__aarch64__) || defined(__x86_64__)
        __asm__ __volatile__(".rept %c0\n\tnop\n\t.endr" : : "i"(K) : "memory");
#else
        benchmark::ClobberMemory();
#endif
    }
}

// Powers of two: the per-iteration counter (total / iterations) is then
// exact in a double, and so is the total read back from it.
static const int64_t kN = int64_t(1) << 16;

// First a run of the empty body whose figures are not used: the first
// benchmark of a process goes through code paths for the first time.
BENCHMARK_TEMPLATE(BM_nops, 0)->Name("warmup")->Iterations(kN);
BENCHMARK_TEMPLATE(BM_nops, 0)->Iterations(kN);
BENCHMARK_TEMPLATE(BM_nops, 0)->Iterations(2 * kN);
BENCHMARK_TEMPLATE(BM_nops, 8)->Iterations(kN);
BENCHMARK_TEMPLATE(BM_nops, 8)->Iterations(2 * kN);
BENCHMARK_TEMPLATE(BM_nops, 13)->Iterations(kN);
BENCHMARK_TEMPLATE(BM_nops, 13)->Iterations(2 * kN);

BENCHMARK_MAIN();
