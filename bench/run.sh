#!/usr/bin/env bash
# Runs tether's benchmark suite against its peers and prints the results
# (about 15 minutes on 2 cores). BENCHMARKS.md has the latest figures and
# what they mean. Usage: bash bench/run.sh [go test -bench args...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash bench/setup.sh
run() { go test ./bench/ -run '^$' -count=1 "$@"; }
if [ $# -gt 0 ]; then run "$@"; exit; fi
run -bench 'StartToExit|PeersStartToExit|LibraryRunTrue|LimitsCost' -benchtime 200x
run -bench 'Stop1000|StopTree' -benchtime 10x
run -bench 'SupervisorRSS' -benchtime 1x
run -bench 'Ls' -benchtime 5x
run -bench 'Reap' -benchtime 5x
TETHER_LEAK_TABLE="${TETHER_LEAK_TABLE:-$PWD/bench/leaks.md}" run -bench 'LeakTable' -benchtime 1x
