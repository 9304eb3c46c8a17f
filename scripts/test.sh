#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Install what the tests need (scripts/setup.sh --tests), build everything
# (library, tool, tests, examples, benchmarks) with warnings as errors and
# run every test.
# usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
bash scripts/setup.sh --tests
# The parts are named: a build directory first configured for the tool
# alone (the README's first command) keeps those choices in its cache.
cmake -S . -B "$dir" -DDKPERF_WERROR=ON -DDKPERF_BUILD_TESTS=ON -DDKPERF_BUILD_EXAMPLES=ON \
      -DDKPERF_BUILD_BENCH=ON -DDKPERF_BUILD_TOOLS=ON >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" --timeout 120
