#!/usr/bin/env bash
# Installs the peers that bench/peers_linux_test.go measures tether against,
# from Debian packages, when they are missing: tini, catatonit, dumb-init and
# bubblewrap (bwrap). timeout (coreutils), setsid and unshare (util-linux)
# and tmux are expected already (.ci/run installs tmux). Quick when all are
# present. Never fails its caller: without apt-get, or when an install
# fails, it says what is missing and exits 0, and the benchmarks skip those
# peers with the reason.
set -u
export DEBIAN_FRONTEND=noninteractive

# binary:package
peers=(tini:tini catatonit:catatonit dumb-init:dumb-init bwrap:bubblewrap)

need=()
for p in "${peers[@]}"; do
  command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done

if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "bench/setup.sh: no apt-get; cannot install ${need[*]}" >&2
  elif [ "$(id -u)" -ne 0 ]; then
    echo "bench/setup.sh: not root; cannot install ${need[*]}" >&2
  else
    apt-get update -qq ||
      echo "bench/setup.sh: apt-get update failed" >&2
    apt-get install -y -qq "${need[@]}" >/dev/null ||
      echo "bench/setup.sh: apt-get install ${need[*]} failed" >&2
  fi
fi

missing=()
for b in timeout tini catatonit dumb-init bwrap setsid unshare tmux; do
  command -v "$b" >/dev/null || missing+=("$b")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench/setup.sh: missing (their benchmarks skip them): ${missing[*]}" >&2
fi
if [ -d /run/systemd/system ]; then
  command -v systemd-run >/dev/null ||
    echo "bench/setup.sh: systemd is running but systemd-run is missing" >&2
else
  echo "bench/setup.sh: no systemd instance (/run/systemd/system absent): systemd-run --scope is not measured" >&2
fi
exit 0
