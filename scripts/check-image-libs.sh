#!/usr/bin/env bash
# Checks that the runtime stage of deploy/Dockerfile installs exactly the Debian packages providing
# the shared libraries kubesched links, without Docker: `ldd` on the built binary, `dpkg -S` for
# each library's package, compared with the packages of the last stage's `apt-get install`.
# Fails naming the library and its package when a library is provided by no listed package (the
# image would exit 127 with "error while loading shared libraries"), and naming the package when
# one listed provides none of them.
#   scripts/check-image-libs.sh [--binary build/bin/kubesched] [--dockerfile deploy/Dockerfile]
set -euo pipefail
usage_error() {
  echo "check-image-libs: $1" >&2
  exit 2
}
# Counts a problem and reports it.
failures=0
problem() {
  echo "check-image-libs: $1" >&2
  failures=$((failures + 1))
}
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="$root/build/bin/kubesched"
dockerfile="$root/deploy/Dockerfile"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --dockerfile) dockerfile="$2"; shift 2 ;;
    *) usage_error "unknown argument $1 (use --binary PATH, --dockerfile PATH)" ;;
  esac
done
[ -x "$binary" ] || usage_error "no binary at $binary (build kubesched first)"
[ -f "$dockerfile" ] || usage_error "no Dockerfile at $dockerfile"

# Packages debian:12-slim already has (Priority: required, or needed by apt and dpkg), so the
# runtime stage must not list them: the C library and loader, the C++ runtime, zlib.
base_image_packages=(libc6 libstdc++6 libgcc-s1 zlib1g)
# The sanitizer runtimes a -DKUBESCHED_SANITIZE=ON build (scripts/test.sh) links; the image is a
# Release build without them.
sanitizer_packages=(libasan8 libubsan1 liblsan0 libtsan2)
# Listed without providing a library: the CA bundle, for TLS to the API server.
data_packages=(ca-certificates)

# The packages of the runtime stage's `apt-get install`: the last FROM's instructions, continuation
# lines joined, the words after `install` up to the next `&&` that are not options.
listed=$(awk '
  /^[[:space:]]*FROM[[:space:]]/ { stage = "" }
  { line = $0; continued = sub(/\\[[:space:]]*$/, "", line); stage = stage " " line
    if (!continued) stage = stage "\n" }
  END { printf "%s", stage }' "$dockerfile" |
  awk '/apt-get[[:space:]]+install/ {
         sub(/.*apt-get[[:space:]]+install/, ""); sub(/&&.*/, "")
         for (i = 1; i <= NF; i++) if ($i !~ /^-/) print $i }' | sort -u)
if [ -z "$listed" ]; then
  echo "check-image-libs: $dockerfile: no apt-get install in the last stage" >&2
  exit 1
fi

# The package owning each library, from one `dpkg -S` over every name a library may be registered
# under (Debian 12 merges /lib into /usr, and packages register either form).
candidates() {
  local path="$1"
  echo "$path"
  echo "/usr$path"
  readlink -f "$path"
}
owners=""
owner() {
  local path="$1" candidate line
  for candidate in $(candidates "$path"); do
    # "libssl3:amd64: /usr/lib/x86_64-linux-gnu/libssl.so.3" (a diverted file: "a, b: path").
    line=$(awk -v path="$candidate" '
      substr($0, length($0) - length(path) - 1) == ": " path { print; exit }' <<<"$owners")
    if [ -n "$line" ]; then
      sed 's/: .*//; s/, .*//; s/:[a-z0-9_]*$//' <<<"$line"
      return 0
    fi
  done
  return 1
}

in_list() {
  local word="$1"; shift
  local item
  for item in "$@"; do [ "$item" = "$word" ] && return 0; done
  return 1
}

used=()
ldd_output=$(ldd "$binary")
if grep -q "not found" <<<"$ldd_output"; then
  echo "check-image-libs: $binary has unresolved libraries here:" >&2
  grep "not found" <<<"$ldd_output" >&2
  exit 1
fi
# "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)".
libraries=$(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$ldd_output")
# dpkg -S exits 1 when any name is unknown (most have one unregistered form): its output counts.
owners=$(for library in $libraries; do candidates "$library"; done | sort -u |
  xargs dpkg -S 2>/dev/null || true)
for library in $libraries; do
  if ! package=$(owner "$library"); then
    problem "$library belongs to no Debian package (dpkg -S finds none)"
    continue
  fi
  used+=("$package")
  in_list "$package" "${base_image_packages[@]}" "${sanitizer_packages[@]}" && continue
  if ! grep -qx -- "$package" <<<"$listed"; then
    problem "$(basename "$library") needs package $package, which the runtime stage of \
$dockerfile does not install"
  fi
done
for package in $listed; do
  in_list "$package" "${data_packages[@]}" && continue
  if ! in_list "$package" "${used[@]}"; then
    problem "$dockerfile installs $package, which provides none of the libraries $binary links"
  fi
done
if [ "$failures" -gt 0 ]; then
  echo "check-image-libs: $failures problem(s); the runtime packages must be exactly those" \
    "of the linked libraries" >&2
  exit 1
fi
echo "check-image-libs: $dockerfile installs exactly the packages of the" \
  "$(wc -w <<<"$libraries") libraries $binary links"
