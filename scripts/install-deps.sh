#!/usr/bin/env bash
# Installs the Debian 12 packages kubesched builds with. Idempotent: does nothing when they are
# all present. Uses sudo when not run as root.
#   --test  also the clients the end-to-end tests drive the test API server with: kubectl (from
#           Debian's kubernetes-client when no kubectl is on PATH) and the official Python client,
#           clang with its sanitizers and libFuzzer for the sanitizer build and the fuzz targets,
#           lld (links those builds' large binaries several times faster than ld), and promtool (Debian's prometheus package: `promtool check metrics` lints a real
#           /metrics scrape). Installing prometheus never
#           starts its daemon: while it is configured, a policy-rc.d denies every service start
#           (unless the machine already has one, as container images do).
set -euo pipefail
packages=(build-essential cmake libboost-dev libssl-dev rapidjson-dev libabsl-dev
          prometheus-cpp-dev catch2 libyaml-cpp-dev libre2-dev)
if [ "${1:-}" = "--test" ]; then
  # clang and its runtime (the sanitizers, libFuzzer) and lld for scripts/test.sh and
  # scripts/fuzz.sh.
  packages+=(python3 python3-kubernetes procps clang libclang-rt-14-dev lld prometheus)
  command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
echo "installing: ${missing[*]}" >&2
"${as_root[@]}" apt-get update -q
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# Installing build and test tools starts no service.\nexit 101\n' |
    "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  trap '"${as_root[@]}" rm -f "$policy"' EXIT
fi
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
