// SPDX-License-Identifier: MIT OR Apache-2.0
//
// gbench_example.cpp - a google benchmark program with counters from
// libdkperf: one include and one line per benchmark.
//
//     c++ -O2 gbench_example.cpp $(pkg-config --cflags --libs dkperf-benchmark)
//
// Each event is reported per iteration beside the times. An event this
// machine cannot count is named once on stderr and left out: on a Mac
// task-clock and page-faults, on a Linux VM without a PMU instructions and
// cycles.
#include <benchmark/benchmark.h>
#include <dkperf/benchmark.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

#include <sys/mman.h>

static void BM_sum(benchmark::State &state)
{
    dkperf::BenchmarkCounters counters(state); // instructions,cycles
    std::vector<uint32_t> v(static_cast<size_t>(state.range(0)), 1);
    for (auto _ : state)
        benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), uint64_t{0}));
}
BENCHMARK(BM_sum)->Arg(1024)->Arg(64 << 10);

// A fresh 64 KiB mapping each iteration: each page faults in at its first
// touch (16 a block with 4 KiB pages, 4 with a Mac's 16 KiB pages).
static void BM_fresh_block(benchmark::State &state)
{
    dkperf::BenchmarkCounters counters(state, "instructions,cycles,task-clock,page-faults");
    const size_t len = 64 << 10;
    for (auto _ : state) {
        void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            state.SkipWithError("mmap failed");
            break;
        }
        for (size_t i = 0; i < len; i += 4096)
            static_cast<char *>(m)[i] = 1;
        munmap(m, len);
    }
}
BENCHMARK(BM_fresh_block);

BENCHMARK_MAIN();
