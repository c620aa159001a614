#!/usr/bin/env bash
# deb.sh [DEB] — the release .deb's checks alone (guest/deb.sh), in one
# boot of the Debian 13 guest: installed with dpkg, `tether run` and a
# session (start, ls, stop), tether mcp, the completions and `man tether`
# as the ordinary user tu from a login shell, then purged. The matrix runs
# the same checks in its trixie boot when given DEB; this is for working
# on them (about 2 minutes under TCG: boot 20 s, the checks, power off).
# DEB defaults to dist/'s amd64 .deb (.ci/release/release.sh release
# --snapshot --clean). Environment: VM_DIR, TIMEOUT (as matrix.sh).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export VM_DIR=${VM_DIR:-/var/tmp/tether-vm-ci} TIMEOUT=${TIMEOUT:-900}
DEB=${1:-$(ls "$REPO"/dist/tether_*_amd64.deb 2>/dev/null | head -1)}
SH=$VM_DIR/share-deb R=$VM_DIR/share-deb/results/trixie
rm -rf "$SH" && mkdir -p "$SH/guest" || exit 1
cp "$HERE"/guest/*.sh "$SH/guest/"
"$HERE/stage-deb.sh" "$DEB" "$SH/pkg" || exit 1
"$HERE/image.sh" trixie || { echo "deb: image trixie failed" >&2; exit 1; }
echo "JOB_ONLY=deb exec bash /mnt/host/guest/job.sh trixie" >"$SH/job.sh"
t=$SECONDS
"$HERE/boot.sh" trixie "$SH"; b=$?
echo "deb: boot and checks took $((SECONDS - t))s (boot.sh exit $b)"
rc=0
[ $b = 0 ] || rc=1
for c in install user purge; do
  log=$R/e2e-deb-$c.log
  echo "deb $c: $(grep -c '^PASS ' "$log" 2>/dev/null) passed, $(grep -c '^FAIL ' "$log" 2>/dev/null) failed"
  grep '^FAIL ' "$log" 2>/dev/null && rc=1
  grep -q '^PASS ' "$log" 2>/dev/null || { echo "deb: the $c checks did not run"; rc=1; }
done
echo "deb: $([ $rc = 0 ] && echo passed || echo FAILED); logs in $R"
exit $rc
