#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (AddressSanitizer + UndefinedBehaviorSanitizer)
# in their own build folder and runs each for SECONDS (default 20) on its seed corpus, as many at
# once as there are cores. Fails when a target crashes, leaks, hangs on one input or runs out of
# memory; the input that did it is kept under build-fuzz/findings/. Used by scripts/test.sh.
#   scripts/fuzz.sh [SECONDS]
#   scripts/fuzz.sh --build-only    (scripts/test.sh builds them while its tests run)
# Environment: KUBESCHED_FUZZ_BUILD (default build-fuzz), KUBESCHED_FUZZ_TARGETS (default all).
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
if [ "${1:-}" = "--build-only" ]; then
  build_only=true
  shift
fi
seconds="${1:-20}"
build="${KUBESCHED_FUZZ_BUILD:-build-fuzz}"
jobs="$(nproc)"

# Each target and its seeds: the shipped examples, the configuration examples and upstream's
# conformance vectors, plus a few hand-written inputs in fuzz/seeds/.
declare -A seeds=(
  [quantity_fuzzer]="fuzz/seeds/quantity"
  [label_selector_fuzzer]="fuzz/seeds/label_selector tests/conformance/vectors"
  [json_objects_fuzzer]="tests/conformance/vectors"
  [yaml_objects_fuzzer]="examples config/examples"
  [config_fuzzer]="config/examples"
  [kubeconfig_fuzzer]="fuzz/seeds/kubeconfig"
  [cel_selector_fuzzer]="fuzz/seeds/cel_selector"
)
# Tokens of each target's input language, so that mutations reach past the syntax.
declare -A dicts=(
  [label_selector_fuzzer]=fuzz/dicts/json.dict
  [json_objects_fuzzer]=fuzz/dicts/json.dict
  [yaml_objects_fuzzer]=fuzz/dicts/yaml.dict
  [config_fuzzer]=fuzz/dicts/yaml.dict
  [kubeconfig_fuzzer]=fuzz/dicts/yaml.dict
  [cel_selector_fuzzer]=fuzz/dicts/cel.dict
)
read -r -a targets <<<"${KUBESCHED_FUZZ_TARGETS:-${!seeds[*]}}"

# -O1 -g1: quick to compile, still file:line in reports, and optimised code, so that the seconds
# each target runs try more inputs (scripts/test.sh's sanitizer build, which runs fixed tests,
# compiles at -O0). lld links, as in scripts/test.sh.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-O1 -g1" -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DKUBESCHED_FUZZ=ON \
  -DKUBESCHED_TESTS=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
"$build_only" && exit 0

work="$build/runs"
findings="$build/findings"
rm -rf "$work"
mkdir -p "$work" "$findings"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

run() {
  local target="$1"
  mkdir -p "$work/$target/corpus"
  local dict=()
  [ -n "${dicts[$target]:-}" ] && dict=(-dict="${dicts[$target]}")
  # The first folder collects new inputs; the seed folders are only read. -timeout catches an
  # input that never finishes (yaml-cpp's loops), -rss_limit_mb one that eats memory.
  "$build/fuzz/$target" "$work/$target/corpus" ${seeds[$target]} \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/$target-" "${dict[@]}" >"$work/$target.log" 2>&1
}

declare -A pids=()
failed=()
wait_for() {
  local target="$1"
  if wait "${pids[$target]}"; then
    echo "fuzz: $target: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' \
      "$work/$target.log" | grep -o '[0-9]*$') inputs, no crash"
  else
    failed+=("$target")
    echo "fuzz: $target FAILED; its log ends:" >&2
    tail -n 40 "$work/$target.log" >&2
  fi
}

running=()
for target in "${targets[@]}"; do
  run "$target" &
  pids[$target]=$!
  running+=("$target")
  if [ "${#running[@]}" -ge "$jobs" ]; then
    wait_for "${running[0]}"
    running=("${running[@]:1}")
  fi
done
for target in "${running[@]}"; do wait_for "$target"; done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]} (inputs in $findings)" >&2
  exit 1
fi
