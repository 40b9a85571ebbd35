#!/usr/bin/env bash
# The test of scripts/check-test-names.py: on a tree whose tests hold a name starting with '-' and
# one with ';', it fails naming both; on good names it passes. The project's own tests are checked
# by its own ctest entry.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bad/tests/x" "$work/good/tests"
printf 'TEST_CASE("--flag works", "[x]") {}\nTEST_CASE("a; b", "[x]") {}\nTEST_CASE("c, d", "[x]") {}\n' \
  >"$work/bad/tests/x/x_test.cc"
printf 'TEST_CASE("a name, with a comma", "[x]") {}\n' >"$work/good/tests/y_test.cc"

code=0
output=$(python3 scripts/check-test-names.py "$work/bad" 2>&1) || code=$?
[ "$code" -eq 1 ] || { echo "FAILED: bad names: exit $code, wanted 1"; exit 1; }
for text in 'tests/x/x_test.cc:1: "--flag works"' 'tests/x/x_test.cc:2: "a; b"'; do
  grep -qF -- "$text" <<<"$output" || { echo "FAILED: the output does not name $text"; exit 1; }
done
if grep -qF '"c, d"' <<<"$output"; then echo "FAILED: a comma was reported"; exit 1; fi
python3 scripts/check-test-names.py "$work/good" >/dev/null || { echo "FAILED: good names refused"; exit 1; }
echo "check-test-names: 4 checks passed"
