#!/bin/bash
# Logging costs of a session (issue 11), two figures:
#  1. wake-ups of an idle `tether logs -f` (and of the idle session's
#     supervisor) over $IDLE seconds: context switches of all their
#     threads, from /proc/PID/task/*/status;
#  2. the supervisor's CPU time (utime+stime) to log a burst of lines $LINE,
#     `yes $LINE | head -c $BYTES` (default y: the worst case, 2-byte
#     lines), and the log it leaves.
# Usage: bash bench/logs.sh NEW_TETHER [OLD_TETHER]   (root, cgroup v2)
# Each binary runs in turn, $RUNS times, alternating which goes first.
set -eu
IDLE=${IDLE:-10} BYTES=${BYTES:-100000000} RUNS=${RUNS:-3} LINE=${LINE:-y}
bins=("$@")
export XDG_RUNTIME_DIR=$(mktemp -d) && chmod 700 "$XDG_RUNTIME_DIR"
trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT

switches() { # PID: voluntary+involuntary context switches of all threads
	cat /proc/$1/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n}'
}
cputicks() { awk '{print $14 + $15}' /proc/$1/stat; }
suppid() { "$1" status --json "$2" | sed -n 's/.*"supervisor": "linux:[^:]*:\([0-9]*\):.*/\1/p'; }

idle() { # BIN
	local t=$1 name f sup a b c d
	name=$($t start --owner none -- sleep 1000)
	sup=$(suppid "$t" "$name")
	$t logs -f "$name" >/dev/null & f=$!
	sleep 1
	a=$(switches $f) c=$(switches $sup)
	sleep "$IDLE"
	b=$(switches $f) d=$(switches $sup)
	$t stop "$name" >/dev/null
	wait $f
	echo "$t: idle ${IDLE}s: logs -f $((b - a)) context switches, supervisor $((d - c))"
}

burst() { # BIN
	local t=$1 name sup size ticks
	name=$($t start --owner none -- sh -c "yes $LINE | head -c $BYTES; exec sleep 1000")
	sup=$(suppid "$t" "$name")
	local log=$XDG_RUNTIME_DIR/tether/logs/$name.log
	# Done once the command sleeps and the log stopped growing.
	while pgrep -f "head -c $BYTES" >/dev/null; do sleep 0.1; done
	size=-1
	while [ "$size" != "$(cat "$log"* | wc -c)" ]; do size=$(cat "$log"* | wc -c); sleep 0.3; done
	ticks=$(cputicks $sup)
	$t stop "$name" >/dev/null
	echo "$t: burst $BYTES bytes of $((${#LINE} + 1))-byte lines: supervisor CPU $((ticks * 10)) ms, log kept $size bytes in $(ls "$log"* | wc -l) files"
}

for r in $(seq "$RUNS"); do
	order=("${bins[@]}")
	if [ $((r % 2)) = 0 ] && [ ${#bins[@]} = 2 ]; then order=("${bins[1]}" "${bins[0]}"); fi
	for t in "${order[@]}"; do burst "$t"; done
done
for t in "${bins[@]}"; do idle "$t"; done
