#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest: the
# Release build (unit, golden and script tests), an ASan+UBSan build of the
# unit and script tests, a ThreadSanitizer build of the threaded tests, and
# the libFuzzer targets for a bounded time.
# This is the README's test command; .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

bash tools/setup.sh

echo "== Release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== Scalar build (TL_NO_SIMD, as on targets without SSE2): unit and ingest tests"
cmake -S . -B build-nosimd -DCMAKE_BUILD_TYPE=Release -DTL_NO_SIMD=ON
cmake --build build-nosimd -j"$jobs"
ctest --test-dir build-nosimd --output-on-failure -j"$jobs" -R '^(unit|ingest)\.'

echo "== ASan + UBSan build: unit and script tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTL_SANITIZE=ON
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$jobs" -L 'unit|script'

echo "== ThreadSanitizer build: the threaded tests (label threads)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTL_TSAN=ON
cmake --build build-tsan -j"$jobs" --target threaded_tests
# die_after_fork=0: test_thread starts threads in a child of fork, as a
# Python program using the library may
TSAN_OPTIONS="halt_on_error=1 die_after_fork=0" ctest --test-dir build-tsan --output-on-failure -j"$jobs" -L threads

echo "== libFuzzer targets (bounded)"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DTL_FUZZ=ON -DTL_WERROR=OFF -DCMAKE_BUILD_TYPE=Release
cmake --build build-fuzz -j"$jobs" --target fuzzers
ctest --test-dir build-fuzz --output-on-failure -L fuzz
