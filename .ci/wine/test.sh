#!/usr/bin/env bash
# The GOOS=windows tests under Wine (issue 14), run by .ci/run after the
# Linux tests: contain, receipt and cli, with real Job Objects; then, from
# Linux, tether SIGKILLed while its run holds a tree; then a check that no
# process a test tagged is left anywhere on the machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
WINEPREFIX=$(.ci/wine/setup.sh)
export WINEPREFIX WINEDEBUG=-all PATH="$PWD/.ci/wine:$PATH"
echo "wine: $(/usr/lib/wine/wine64 --version), prefix $WINEPREFIX (ready after $((SECONDS - t0))s)"

GOOS=windows go test -count=1 -timeout 10m ./contain/ ./receipt/ ./registry/ ./identity/
# These cli tests use t.TempDir, whose cleanup (os.RemoveAll) fails under
# Wine 8 (FileDispositionInformationEx is not implemented); they test flag
# parsing, the same code on every system.
GOOS=windows go test -count=1 -timeout 10m -skip '^(TestReadEnvFile|TestReadEnvFileBad|TestEnviron)$' ./cli/

# tether killed by SIGKILL from Linux while its run holds a child and a
# grandchild: KILL_ON_JOB_CLOSE must end them (they have PPID 1 on Linux;
# found by the tag in their command line).
work=$(mktemp -d)
# On any failure, nothing of the tests may outlive the script (it would
# also hold the caller's pipes open): every process whose command line
# has a test's tag or state dir is killed.
killtagged() { for p in $( { grep -l "[t]ether-wine-test-" /proc/[0-9]*/cmdline 2>/dev/null || true; } | cut -d/ -f3); do kill -9 "$p" 2>/dev/null || true; done; }
trap 'killtagged; rm -rf "$work"' EXIT
tag=tether-wine-test-sigkill-$$
GOOS=windows go build -o "$work/tether.exe" ./cmd/tether
GOOS=windows go test -c -o "$work/contain.test.exe" ./contain/
/usr/lib/wine/wine64 "$work/tether.exe" run -q -e TETHER_WIN_HELPER=grandchild -- "$work/contain.test.exe" "$tag" "$work" stay &
tether=$!
for _ in $(seq 300); do compgen -G "$work/sleep-*" >/dev/null && break; sleep 0.1; done
compgen -G "$work/sleep-*" >/dev/null || { echo "wine: the sleeper never started" >&2; exit 1; }
# "[t]" keeps grep from finding its own command line.
tagged() { { grep -l "[t]${1#t}" /proc/[0-9]*/cmdline 2>/dev/null || true; } | wc -l; }
before=$(tagged "$tag")
[ "$before" -ge 3 ] || { echo "wine: $before tagged processes before the kill, want >= 3" >&2; exit 1; }
kill -9 "$tether"
wait "$tether" 2>/dev/null || true
t1=$SECONDS
while [ "$(tagged "$tag")" -gt 0 ] && [ $((SECONDS - t1)) -lt 15 ]; do sleep 0.05; done
after=$(tagged "$tag")
[ "$after" -eq 0 ] || { echo "wine: $after of $before tagged processes survived tether's SIGKILL" >&2; exit 1; }
echo "wine: tether SIGKILLed from Linux: its $before tagged processes were gone within $((SECONDS - t1))s"

# A session's supervisor killed by SIGKILL from Linux while its session
# holds a child and a grandchild: the job dies with it, and tether reap
# cleans the record.
export TETHER_STATE_DIR='C:\users\root\Temp\tether-wine-test-state'
stag=tether-wine-test-supervisor-$$
rm -f "$work"/sleep-*
/usr/lib/wine/wine64 "$work/tether.exe" start --name wine-killed -e TETHER_WIN_HELPER=grandchild -- "$work/contain.test.exe" "$stag" "$work" stay >/dev/null
for _ in $(seq 300); do compgen -G "$work/sleep-*" >/dev/null && break; sleep 0.1; done
sup=$( { grep -la "[_]_supervise.*wine-killed" /proc/[0-9]*/cmdline 2>/dev/null || true; } | head -1 | cut -d/ -f3)
before=$(tagged "$stag")
[ -n "$sup" ] && [ "$before" -ge 3 ] || { echo "wine: supervisor ${sup:-not found}, $before tagged processes; want a supervisor and >= 3" >&2; exit 1; }
kill -9 "$sup"
t1=$SECONDS
while [ "$(tagged "$stag")" -gt 0 ] && [ $((SECONDS - t1)) -lt 15 ]; do sleep 0.05; done
after=$(tagged "$stag")
[ "$after" -eq 0 ] || { echo "wine: $after of $before tagged processes survived their supervisor's SIGKILL" >&2; exit 1; }
/usr/lib/wine/wine64 "$work/tether.exe" reap --json | grep -q '"dead-supervisor-empty"' || { echo "wine: reap did not clean the killed supervisor's session" >&2; exit 1; }
/usr/lib/wine/wine64 "$work/tether.exe" ls | grep -q wine-killed && { echo "wine: the killed supervisor's session is still listed after reap" >&2; exit 1; }
echo "wine: a session's supervisor SIGKILLed from Linux: its $before tagged processes were gone within $((SECONDS - t1))s, and reap cleaned its record"

left=$(tagged tether-wine-test-)
[ "$left" -eq 0 ] || { echo "wine: $left processes of the Windows tests are still alive:" >&2; grep -l "[t]ether-wine-test-" /proc/[0-9]*/cmdline >&2; exit 1; }
# Supervisors carry no tag, but the state dir of the tests in theirs.
sups=$( { grep -la "[_]_supervise.*tether-cli-test-" /proc/[0-9]*/cmdline 2>/dev/null || true; } | wc -l)
[ "$sups" -eq 0 ] || { echo "wine: $sups session supervisors of the Windows tests are still alive" >&2; exit 1; }
echo "wine: the Windows tests took $((SECONDS - t0))s"
