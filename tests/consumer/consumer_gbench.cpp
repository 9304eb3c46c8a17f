// SPDX-License-Identifier: MIT OR Apache-2.0
// A google benchmark program built against an installed dkperf/benchmark.hpp.
#include <benchmark/benchmark.h>
#include <dkperf/benchmark.hpp>

static void BM_consumer(benchmark::State &state)
{
    dkperf::BenchmarkCounters counters(state, "task-clock");
    for (auto _ : state)
        benchmark::DoNotOptimize(state.iterations());
}
BENCHMARK(BM_consumer)->Iterations(100);

BENCHMARK_MAIN();
