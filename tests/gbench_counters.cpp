// SPDX-License-Identifier: MIT OR Apache-2.0
//
// A google benchmark program that counts with dkperf/benchmark.hpp, for
// check_gbench_counters.py. Every benchmark counts the events of
// $DKPERF_GB_EVENTS (default: the header's own default).
#include <benchmark/benchmark.h>
#include <dkperf/benchmark.hpp>

#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

static const char *events()
{
    return std::getenv("DKPERF_GB_EVENTS");
}

// One fresh page touched per iteration: about one page fault each.
static const int PAGES = 2048;
static void touch(benchmark::State &state, char *p, size_t page)
{
    for (auto _ : state) {
        *p = 1;
        benchmark::ClobberMemory();
        p += page;
    }
}
static void BM_fresh_page(benchmark::State &state)
{
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t len = page * PAGES;
    void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        state.SkipWithError("mmap failed");
        return;
    }
#ifdef MADV_NOHUGEPAGE
    madvise(m, len, MADV_NOHUGEPAGE); // a huge page would serve 512 iterations with one fault
#endif
    if (events()) {
        dkperf::BenchmarkCounters counters(state, events());
        touch(state, static_cast<char *>(m), page);
    } else {
        dkperf::BenchmarkCounters counters(state);
        touch(state, static_cast<char *>(m), page);
    }
    munmap(m, len);
}
BENCHMARK(BM_fresh_page)->Iterations(PAGES);

// CPU work alone; with $DKPERF_GB_EXIT set, the process exits in the loop,
// counters counting.
static void loop(benchmark::State &state)
{
    bool exit_now = std::getenv("DKPERF_GB_EXIT") != nullptr;
    for (auto _ : state) {
        if (exit_now)
            std::exit(0);
        for (int i = 0; i < 1000; i++)
            benchmark::DoNotOptimize(i);
    }
}
static void spin(benchmark::State &state)
{
    if (events()) {
        dkperf::BenchmarkCounters counters(state, events());
        loop(state);
    } else {
        dkperf::BenchmarkCounters counters(state);
        loop(state);
    }
}
static void BM_spin(benchmark::State &state)
{
    spin(state);
}
static void BM_spin_again(benchmark::State &state)
{
    spin(state);
}
BENCHMARK(BM_spin);
BENCHMARK(BM_spin_again);
BENCHMARK(BM_spin)->Threads(2);

BENCHMARK_MAIN();
