#!/usr/bin/env bash
# Start to exit under systemd, with and without the scope tether takes,
# beside `systemd-run --scope`, in the Debian 13 guest of .ci/vm (pure
# cgroup v2, systemd 257). The guest runs under TCG here: compare ratios.
#
#   N=40 bash bench/vm-scope.sh
set -euo pipefail
cd "$(dirname "$0")/.."
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
CGO_ENABLED=0 go build -o "$d/tether" ./cmd/tether
cp bench/alt.py "$d/"
{ echo "N=${N:-40}"; cat bench/vm-scope-guest.sh; } > "$d/job.sh"
.ci/vm/image.sh trixie >&2
.ci/vm/boot.sh trixie "$d"
