#!/usr/bin/env bash
# The whole test suite: a clean build with AddressSanitizer + UndefinedBehaviorSanitizer, then
# every test through ctest, then each fuzz target for a short while. Used by the README and by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase says how long it took, so that a slow CI run shows where its time went.
phase_start=$SECONDS
phase_done() {
  echo "test.sh: $1 took $((SECONDS - phase_start)) s (total $SECONDS s)"
  phase_start=$SECONDS
}
scripts/install-deps.sh --test
phase_done "installing dependencies"
# The include directions of ARCHITECTURE.md first: a wrong include fails in a second, not after
# the build.
python3 scripts/check-layers.py
build=build-test
rm -rf "$build"
# -O0 -g1: the build is most of the suite's time, and with both sanitizers clang compiles the
# code under test at -O0 in about 2.5 times less time than at -O1 (alone, without the PCH:
# rest_client.cc 52 s against 151 s, embedded_cluster.cc 24 against 68, cache.cc 15 against 36),
# and still reports file:line. The tests' own code goes without UndefinedBehaviorSanitizer's
# checks (AddressSanitizer's stay), which takes a third off its compile time again.
# -no-pie: a position-independent sanitizer binary spends a third of a second relocating itself
# at every start, and the suite starts hundreds of them. lld links the largest test binary in
# 1.8 s where ld takes 14 s.
# KUBESCHED_PCH: precompiled standard, abseil and Catch2 headers. KUBESCHED_PCH_CODEGEN: the test
# header's inline functions compiled once instead of in each of the 230 test files: the test
# code's part of the build (what follows the kubesched binary) went from 557 s to 332 s.
# clang++ (installed for the fuzz targets): the same files with the same flags took about a third
# less compile CPU than with g++ (8 files alternating: 86 / 83 s against 117 / 133 s), and the
# build is most of the suite's time. The README's build uses the default compiler (g++).
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O0 -g1" -DKUBESCHED_SANITIZE=ON \
  -DKUBESCHED_TEST_FLAGS="-fno-sanitize=undefined" -DCMAKE_EXE_LINKER_FLAGS="-no-pie -fuse-ld=lld" \
  -DKUBESCHED_PCH=ON -DKUBESCHED_PCH_CODEGEN=ON >/dev/null
# Only what ctest runs: the test executables and the binaries they start (kubesched_bench is
# never run by a test, and its files are as costly to compile as the core's).
cmake --build "$build" -j"$(nproc)" --target kubesched kubesched-testapi kubesched_unit_tests \
  kubesched_feature_tests kubesched_e2e_tests kubesched_conformance_tests
phase_done "the sanitizer build"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The decoders of untrusted input under libFuzzer, briefly: a clang build of only what they need.
# It compiles while the tests run: they leave about a third of the two cores idle (waiting on the
# servers they start: 279 s of CPU in 207 s), and at nice 19 the compiler takes only what the
# tests leave. Its output is shown if it fails.
fuzz_log="$build/fuzz-build.log"
nice -n 19 scripts/fuzz.sh --build-only >"$fuzz_log" 2>&1 &
fuzz_build=$!
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
phase_done "the tests (the fuzz targets compiling beside them)"
if ! wait "$fuzz_build"; then
  cat "$fuzz_log" >&2
  echo "test.sh: building the fuzz targets failed" >&2
  exit 1
fi
phase_done "the rest of the fuzz build"
scripts/fuzz.sh 20
phase_done "the fuzz runs"
