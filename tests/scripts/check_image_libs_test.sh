#!/usr/bin/env bash
# The tests of scripts/check-image-libs.sh: against copies of deploy/Dockerfile with a package
# removed or one added, it fails naming the library and the package; on bad arguments it says
# what is wrong. The shipped Dockerfile itself is checked by its own ctest entry.
#   tests/scripts/check_image_libs_test.sh BINARY
set -euo pipefail
binary="$(realpath "${1:?usage: check_image_libs_test.sh PATH_TO_KUBESCHED}")"
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# expect NAME WANT_EXIT TEXT... -- ARGS: runs the checker with ARGS, wants exit code WANT_EXIT and
# every TEXT in its output.
expect() {
  local name="$1" want="$2"; shift 2
  local texts=()
  while [ "$1" != "--" ]; do texts+=("$1"); shift; done
  shift
  local output code=0
  output=$(scripts/check-image-libs.sh "$@" 2>&1) || code=$?
  local ok=1 text
  [ "$code" -eq "$want" ] || ok=0
  for text in "${texts[@]}"; do grep -qF -- "$text" <<<"$output" || ok=0; done
  if [ "$ok" -eq 1 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name (exit $code, wanted $want; wanted the output to hold: ${texts[*]})"
    echo "$output" | sed 's/^/  | /'
  fi
}

without_civetweb="$work/Dockerfile.without-civetweb"
sed 's/ libcivetweb1//' deploy/Dockerfile >"$without_civetweb"
expect "a package removed from the runtime stage is named with its library" 1 \
  "libcivetweb.so.1 needs package libcivetweb1" "does not install" -- \
  --binary "$binary" --dockerfile "$without_civetweb"

without_pull="$work/Dockerfile.without-prometheus-pull"
sed 's/ libprometheus-cpp-pull1.0//' deploy/Dockerfile >"$without_pull"
expect "the prometheus-cpp pull library missing from the image is caught" 1 \
  "libprometheus-cpp-pull.so.1.0 needs package libprometheus-cpp-pull1.0" -- \
  --binary "$binary" --dockerfile "$without_pull"

with_extra="$work/Dockerfile.with-extra"
sed 's/ libcivetweb1 / libcivetweb1 libcurl4 /' deploy/Dockerfile >"$with_extra"
expect "a package providing none of the linked libraries is named" 1 \
  "installs libcurl4, which provides none of the libraries" -- \
  --binary "$binary" --dockerfile "$with_extra"

no_install="$work/Dockerfile.no-install"
printf 'FROM debian:12 AS build\nRUN apt-get install -y cmake\nFROM debian:12-slim\nCOPY x /x\n' \
  >"$no_install"
expect "a runtime stage without apt-get install is reported (the build stage's does not count)" 1 \
  "no apt-get install in the last stage" -- --binary "$binary" --dockerfile "$no_install"

expect "the shipped Dockerfile passes" 0 "installs exactly the packages" -- \
  --binary "$binary" --dockerfile deploy/Dockerfile
expect "a missing binary is a clear error" 2 "no binary at $work/none" -- --binary "$work/none"
expect "a missing Dockerfile is a clear error" 2 "no Dockerfile at $work/none" -- \
  --binary "$binary" --dockerfile "$work/none"
expect "an unknown argument is a clear error" 2 "unknown argument --bogus" -- --bogus

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
