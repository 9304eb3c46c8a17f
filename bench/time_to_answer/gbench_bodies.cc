// The two bodies of bodies.h as google benchmark benchmarks, the reference
// time_to_answer.py compares dkbench with.
#include <benchmark/benchmark.h>

#include "bodies.h"

static uint64_t state = 1;

static void body_short(benchmark::State &st)
{
    uint64_t x = state;
    for (auto _ : st) {
        x = tta_short(x);
        benchmark::DoNotOptimize(x);
    }
    state = x;
}

static void body_long(benchmark::State &st)
{
    uint64_t x = state;
    for (auto _ : st) {
        x = tta_long(x);
        benchmark::DoNotOptimize(x);
    }
    state = x;
}

BENCHMARK(body_short)->Name("body/short");
BENCHMARK(body_long)->Name("body/long");

BENCHMARK_MAIN();
