#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer: clang, -O1, into
# build-fuzz/, the build scripts/fuzz.sh runs the libFuzzer targets from (one instrumented build
# serves both). The CUDA plugin is left out (build/ compiles it). The layer libraries and the test
# programs compile as unity sources here (ROOFLINE_UNITY: fewer, larger compilations, the same
# code instrumented; each test file's helpers live in a namespace named after the file, so files
# batched together do not clash); build/ keeps one compilation per file, which catches a missing
# include.
#   scripts/sanitize.sh              configure, build, run ctest
#   scripts/sanitize.sh --configure  configure only (scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=clang++ CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG" -DROOFLINE_FUZZ=ON \
  -DROOFLINE_BUILD_TESTS=ON -DROOFLINE_BUILD_BENCH=OFF -DROOFLINE_CUDA=OFF \
  -DROOFLINE_UNITY=ON >/dev/null
[[ ${1:-} == --configure ]] && exit 0
cmake --build build-fuzz -j "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-fuzz --output-on-failure -j "$(nproc)"
