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

GOOS=windows go test -count=1 -timeout 10m ./contain/ ./receipt/ ./internal/store/ ./internal/identity/
GOOS=windows go test -count=1 -timeout 10m ./internal/cli/

# tether killed while its run holds a child and a grandchild, from Linux
# (SIGKILL) and from Windows (taskkill /F: TerminateProcess); a program
# embedding contain (examples/embed) killed the same ways; a session's
# supervisor SIGKILLed: KILL_ON_JOB_CLOSE must end the tree each time (the
# members have PPID 1 on Linux; found by the tag in their command line).
work=$(mktemp -d)
# On any failure, nothing of the tests may outlive the script (it would
# also hold the caller's pipes open): every process whose command line
# has a test's tag or state dir is killed.
killtagged() { for p in $( { grep -l "[t]ether-wine-test-" /proc/[0-9]*/cmdline 2>/dev/null || true; } | cut -d/ -f3); do kill -9 "$p" 2>/dev/null || true; done; }
trap 'killtagged; rm -rf "$work"' EXIT
GOOS=windows go build -o "$work/tether.exe" ./cmd/tether
GOOS=windows go test -c -o "$work/contain.test.exe" ./contain/
(cd examples/embed && GOOS=windows go build -o "$work/embed.exe" .)
W64=/usr/lib/wine/wine64
# "[t]" keeps grep from finding its own command line.
tagged() { { grep -l "[t]${1#t}" /proc/[0-9]*/cmdline 2>/dev/null || true; } | wc -l; }
# started WHAT TAG: wait for the helper's sleeper, then for >= 3 processes
# tagged TAG (the owner's, the helper, its grandchild); prints their count.
started() {
  for _ in $(seq 300); do compgen -G "$work/sleep-*" >/dev/null && break; sleep 0.1; done
  compgen -G "$work/sleep-*" >/dev/null || { echo "wine: $1: the sleeper never started" >&2; exit 1; }
  local n
  n=$(tagged "$2")
  [ "$n" -ge 3 ] || { echo "wine: $1: $n tagged processes before the kill, want >= 3" >&2; exit 1; }
  echo "$n"
}
# gone WHAT TAG BEFORE: after WHAT was killed, every process tagged TAG is
# gone within 15 s (a hang guard; the time is printed).
gone() {
  local t1=$SECONDS after
  while [ "$(tagged "$2")" -gt 0 ] && [ $((SECONDS - t1)) -lt 15 ]; do sleep 0.05; done
  after=$(tagged "$2")
  [ "$after" -eq 0 ] || { echo "wine: $after of $3 tagged processes survived $1" >&2; exit 1; }
  echo "wine: $1: its $3 tagged processes were gone within $((SECONDS - t1))s"
}
# owner KILL NAME EXE ARGS...: run EXE ARGS (a tether or an embedder
# running the grandchild helper tagged by its case), kill it by KILL
# (sigkill, from Linux; taskkill, TerminateProcess from Windows), and check
# that its tree is gone.
owner() {
  cases=$((cases + 1))
  local how=$1 name=$2 exe=$3 tag=tether-wine-test-$1-$cases-$$ pid before
  shift 3
  rm -f "$work"/sleep-*
  TETHER_WIN_HELPER=grandchild "$W64" "$exe" "$@" -- "$work/contain.test.exe" "$tag" "$work" stay &
  pid=$!
  before=$(started "$name" "$tag")
  case $how in
  sigkill) kill -9 "$pid" ;;
  taskkill) "$W64" taskkill /F /IM "$(basename "$exe")" >/dev/null 2>&1 || { echo "wine: taskkill /F /IM $(basename "$exe") failed" >&2; exit 1; } ;;
  esac
  wait "$pid" 2>/dev/null || true
  gone "$name killed ($how)" "$tag" "$before"
}
cases=0
owner sigkill "tether run" "$work/tether.exe" run -q
owner taskkill "tether run" "$work/tether.exe" run -q
owner sigkill "a program embedding contain" "$work/embed.exe" -timeout 1h
owner taskkill "a program embedding contain" "$work/embed.exe" -timeout 1h

export TETHER_STATE_DIR='C:\users\root\Temp\tether-wine-test-state'
stag=tether-wine-test-supervisor-$$
rm -f "$work"/sleep-*
"$W64" "$work/tether.exe" start --name wine-killed -e TETHER_WIN_HELPER=grandchild -- "$work/contain.test.exe" "$stag" "$work" stay >/dev/null
before=$(started "a session's supervisor" "$stag")
sup=$( { grep -la "[_]_supervise.*wine-killed" /proc/[0-9]*/cmdline 2>/dev/null || true; } | head -1 | cut -d/ -f3)
[ -n "$sup" ] || { echo "wine: the session's supervisor was not found" >&2; exit 1; }
kill -9 "$sup"
gone "a session's supervisor SIGKILLed from Linux" "$stag" "$before"
"$W64" "$work/tether.exe" reap --json | grep -q '"dead-supervisor-empty"' || { echo "wine: reap did not clean the killed supervisor's session" >&2; exit 1; }
"$W64" "$work/tether.exe" ls | grep -q wine-killed && { echo "wine: the killed supervisor's session is still listed after reap" >&2; exit 1; }
echo "wine: reap cleaned the killed supervisor's record"

left=$(tagged tether-wine-test-)
[ "$left" -eq 0 ] || { echo "wine: $left processes of the Windows tests are still alive:" >&2; grep -l "[t]ether-wine-test-" /proc/[0-9]*/cmdline >&2; exit 1; }
# Supervisors carry no tag, but the state dir of the tests in theirs.
sups=$( { grep -la "[_]_supervise.*tether-cli-test-" /proc/[0-9]*/cmdline 2>/dev/null || true; } | wc -l)
[ "$sups" -eq 0 ] || { echo "wine: $sups session supervisors of the Windows tests are still alive" >&2; exit 1; }
echo "wine: the Windows tests took $((SECONDS - t0))s"
