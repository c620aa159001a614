#!/usr/bin/env bash
# matrix.sh [SUITE...] — the host matrix: builds tether and every package's
# test binary here (CGO_ENABLED=0; the guests have no Go), then boots each
# guest once (default: trixie bookworm) and judges what it ran (verdict.sh).
#
#   trixie   (Debian 13, 6.12, systemd 257): e2e checks as root in a service,
#            as tu through its user manager and through su -l; the suite as root
#   bookworm (Debian 12, 6.1, systemd 252):  e2e checks and the suite as root
#
# With DEB (a release .deb, dist/'s, its metadata.json beside it): on
# trixie also the package's checks (guest/deb.sh: installed, used by tu,
# purged); .ci/vm/deb.sh runs them alone.
#
# Exit 0 only when every guest ran, every test passed, every e2e check
# passed and no skip went beyond skips.txt. Timings go to stdout.
# Environment: VM_DIR (default /var/tmp/tether-vm-ci), TIMEOUT per boot in
# seconds (default 900), MIRROR (image.sh), DEB.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export VM_DIR=${VM_DIR:-/var/tmp/tether-vm-ci} TIMEOUT=${TIMEOUT:-900}
SUITES=${*:-trixie bookworm}
SH=$VM_DIR/share
took() { echo "matrix: $1 took $((SECONDS - $2))s"; }

t=$SECONDS
rm -rf "$SH" && mkdir -p "$SH/tests" "$SH/repo" "$SH/guest" || exit 1
(
  set -e
  cd "$REPO"; export CGO_ENABLED=0
  go build -o "$SH/tests/tether" ./cmd/tether
  go build -o "$SH/tests/tether-mcp" ./cmd/tether-mcp
  go build -tags crashpoints -o "$SH/tests/tether-crashpoints" ./cmd/tether
  mod=$(go list -m)
  for p in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do
    rel=${p#"$mod"}; rel=${rel#/}; name=${rel//\//.}
    go test -c -o "$SH/tests/${name:-root}.test" "./$rel"
  done
  # The tracked files as they are in the work tree: tests read testdata.
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$SH/repo"
) || { echo "matrix: build failed" >&2; exit 1; }
cp "$HERE"/guest/*.sh "$SH/guest/"
if [ -n "${DEB:-}" ]; then
  "$HERE/stage-deb.sh" "$DEB" "$SH/pkg" || { echo "matrix: cannot stage DEB=$DEB" >&2; exit 1; }
fi
took "build ($(ls "$SH/tests" | wc -l) binaries, $(du -sh "$SH" | cut -f1))" $t

rc=0
for s in $SUITES; do
  t=$SECONDS
  "$HERE/image.sh" "$s" || { echo "matrix: image $s failed" >&2; rc=1; continue; }
  took "image $s ($(grep KERNEL "$VM_DIR/$s/image.env"))" $t
  t=$SECONDS
  echo "exec bash /mnt/host/guest/job.sh $s" >"$SH/job.sh"
  "$HERE/boot.sh" "$s" "$SH"; b=$?
  if [ $b = 125 ]; then
    # The guest died without a result: its kernel panicked (under
    # multi-threaded TCG, an int3 left by text patching in update_curr:
    # about one boot in ten, twice in a row once) or qemu failed. Boot it
    # once more with single-threaded TCG (boot.sh), slower and without
    # that race; a job that ran to a result, or hung (124), is never
    # retried. It gets half as long again: on 2026-12-03 the trixie job
    # took about 830 s single-threaded, 700 s multi-threaded.
    echo "matrix: $s died without a result (console above); booting it once more, single-threaded TCG"
    rm -rf "$SH/results/$s"
    TCG_THREAD=single TIMEOUT=$((TIMEOUT * 3 / 2)) "$HERE/boot.sh" "$s" "$SH"; b=$?
  fi
  took "boot and job $s (exit $b)" $t
  echo "======== verdict $s ($(tr '\n' ' ' <"$VM_DIR/$s/image.env"))"
  case $b in 124 | 125) echo "matrix: $s did not finish (boot.sh exit $b)"; rc=1 ;; esac
  n=$(ls "$SH"/tests/*.test | wc -l) got=$(ls "$SH/results/$s"/*.log 2>/dev/null | grep -vc '/e2e-')
  [ "$got" = "$n" ] || { echo "matrix: $s: $got of $n test binaries have results"; rc=1; }
  "$HERE/verdict.sh" "$SH/results/$s" || rc=1
  if [ -n "${DEB:-}" ] && [ "$s" = trixie ]; then
    for c in install user purge; do
      grep -q '^PASS ' "$SH/results/$s/e2e-deb-$c.log" 2>/dev/null || { echo "matrix: $s: the .deb's $c checks did not run"; rc=1; }
    done
  fi
  mkdir -p "$VM_DIR/results" && rm -rf "$VM_DIR/results/$s" && cp -a "$SH/results/$s" "$VM_DIR/results/$s" &&
    cp "$SH/out.log" "$VM_DIR/results/$s/guest-output.txt"
done
echo "matrix: $([ $rc = 0 ] && echo passed || echo FAILED); logs in $VM_DIR/results/"
exit $rc
