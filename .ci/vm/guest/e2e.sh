#!/bin/bash
# e2e.sh CONTEXT — end-to-end checks of the real tether binary as the calling
# user, in the caller's own cgroup (a service, a user-manager unit, a login
# session). One line per assertion: "PASS [CONTEXT] ..." or
# "FAIL [CONTEXT] ... (evidence)". Exit status: the number of FAILs.
#
# The checks (issue 10, "Done when"):
# - tether run --memory 64M --pids 20 --cpus 0.5 enforces and reports each
#   limit: an allocation past 64M is OOM-killed and the receipt says so; a
#   fork loop hits pids.max and the receipt counts it; a busy loop is
#   throttled and the receipt shows it;
# - a daemonizing command under tether run leaves nothing, in a cgroup;
# - tether start --profile tmux from a transient unit survives that unit's
#   end, tether ls shows it, tether stop stops it clean with nothing left;
# - after every step, the caller's cgroup is as before (subtree_control,
#   type) and holds no tether leaf;
# - tether exec reaches the session's daemon and what it starts is the
#   session's; sh -c 'tether start' keeps its session (issue 11);
# - nothing a session's command does to its runtime dir (a FIFO, rm -rf,
#   chmod 750, a symlink) or its process group (kill -HUP 0) defeats or
#   causes its stop; a session started inside tether run --owner none
#   outlives the run; another user's XDG_RUNTIME_DIR is refused (issue 22);
# - tether run SIGKILLed (auto mechanism, and fallback) and a session's
#   supervisor SIGKILLed leave nothing of their trees (issue 24);
# - tether doctor --json runs; a user.delegate mark the caller sets on its
#   own unit is reported as proving no delegation (user-xattr).
C=${1:?usage: e2e.sh CONTEXT}
fails=0
pass() { echo "PASS [$C] $*"; }
fail() { echo "FAIL [$C] $*"; fails=$((fails + 1)); }
check() { # check NAME CONDITION-COMMAND... (evidence on failure: $EV)
  local n=$1; shift
  if "$@"; then pass "$n"; else fail "$n${EV:+ ($EV)}"; fi
}
W=$(mktemp -d /tmp/tether-e2e.XXXXXX)
U=$(id -u)
CG=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
SC0=$(cat "$CG/cgroup.subtree_control") T0=$(cat "$CG/cgroup.type")
echo "[$C] uid $U, cgroup ${CG#/sys/fs/cgroup}: subtree_control '$SC0', type $T0"

# r FILE EXPR: a python expression over the receipt r (a JSON file).
r() { python3 -c 'import json,sys
try: r=json.load(open(sys.argv[1]))
except Exception as e: print("no receipt: %s" % e); sys.exit()
print(eval(sys.argv[2]))' "$1" "$2" 2>&1; }
summary() { r "$1" '"exit=%s mechanism=%s delegation=%s caveats=%s error=%r applied=%s outcome=%s" % (r["exit"], r.get("mechanism"), (r.get("cgroup") or {}).get("delegation"), r.get("caveats"), r.get("error",""), [(a["name"],a["read_back"]) for a in (r.get("limits") or {}).get("applied",[])], {k:v for k,v in ((r.get("limits") or {}).get("outcome") or {}).items() if v and k!="sources"})'; }

# The caller's cgroup must be as it was; a change is reported, then undone
# so that later checks stand on their own.
cgcheck() {
  local sc t left
  sc=$(cat "$CG/cgroup.subtree_control") t=$(cat "$CG/cgroup.type")
  left=$(find "$CG" -mindepth 1 -type d -name 'tether-*' 2>/dev/null | tr '\n' ' ')
  EV="subtree_control '$SC0' -> '$sc', type $T0 -> $t"
  check "$1: caller's cgroup unchanged" [ "$sc" = "$SC0" -a "$t" = "$T0" ]
  EV=$left; check "$1: no tether cgroup left under the caller's" [ -z "$left" ]
  for c in $sc; do case " $SC0 " in *" $c "*) ;; *) echo "-$c" >"$CG/cgroup.subtree_control" 2>/dev/null ;; esac; done
}

LIMITS=(--memory 64M --pids 20 --cpus 0.5)
limit() { # limit ID WHAT CONDITION -- WORKLOAD...: run WORKLOAD under all three limits
  local id=$1 what=$2 cond=$3; shift 4
  timeout 300 tether run "${LIMITS[@]}" --receipt "$W/$id.json" -- "$@" >/dev/null 2>&1
  EV="rc=$? $(summary "$W/$id.json")"
  check "run ${LIMITS[*]}: $what" [ "$(r "$W/$id.json" "$cond")" = True ]
  EV=; cgcheck "run $id"
}
APPLIED='sorted(a["name"] for a in r["limits"]["applied"]) == ["cpus","memory","pids"]'
limit memory "an allocation past 64M is OOM-killed, receipt says oom" \
  "$APPLIED and r['exit'].get('oom_killed') and r['limits']['outcome']['oom_kills'] >= 1" \
  -- python3 -c 'a = bytearray(400 << 20)'
limit pids "a fork loop hits pids.max, receipt counts the hits" \
  "$APPLIED and r['limits']['outcome']['pids_limit_hits'] >= 1" \
  -- sh -c 'for i in $(seq 40); do sleep 3 & done 2>/dev/null; wait'
limit cpus "a busy loop is throttled, receipt shows throttling" \
  "$APPLIED and r['limits']['outcome']['cpu_nr_throttled'] >= 1 and r['limits']['outcome']['cpu_throttled_usec'] > 0" \
  -- timeout 3 sh -c 'while :; do :; done'

# One limit at a time: pids and cpu are threaded controllers, which the
# kernel lets anyone enable in a populated cgroup, turning it "domain
# threaded" and breaking every later start in it. Whether or not tether can
# apply the limit, the caller's cgroup must stay as it was, and a plain run
# must still work after.
for l in "--pids 20" "--cpus 0.5" "--memory 64M"; do
  # A fresh receipt each time: --receipt refuses an existing file (exit
  # 125, nothing run), which had made every limit after the first a no-op.
  rm -f "$W/one.json"
  timeout 120 tether run $l --receipt "$W/one.json" -- true >/dev/null 2>&1
  echo "  [$C] run $l -- true: rc=$? $(summary "$W/one.json")"
  timeout 120 tether run -- true >"$W/plain.out" 2>&1; rc=$?
  EV="rc=$rc $(tr '\n' ' ' <"$W/plain.out")"; check "run $l: a plain run after it works" [ $rc = 0 ]
  EV=; cgcheck "run $l"
done

# A command that daemonizes (setsid, double fork, a tmux server) leaves nothing.
timeout 120 tether run --receipt "$W/d.json" -- sh -c \
  "setsid sleep 4242 & (sleep 4243 &); tmux -S $W/tmux.sock -f /dev/null new-session -d 'sleep 4244'; echo hi" >"$W/d.out" 2>&1
EV="rc=$? $(summary "$W/d.json") stop_confirmed=$(r "$W/d.json" 'r["stop_confirmed"]')"
check "run of a daemonizing command: stop confirmed" [ "$(r "$W/d.json" 'r["stop_confirmed"]')" = True ]
check "run of a daemonizing command: cgroup containment, not the fallback" [ "$(r "$W/d.json" 'r["mechanism"]')" = cgroup ]
EV=$(pgrep -a -u "$U" -f 'sleep 424[234]' | tr '\n' ' ')
check "run of a daemonizing command: nothing left" [ -z "$EV" ]
EV=; cgcheck "run of a daemonizing command"

# A tmux session started from a transient unit that then ends.
if [ "$U" = 0 ]; then SR=(systemd-run); else SR=(systemd-run --user); fi
timeout 120 "${SR[@]}" --pipe --wait --quiet -- tether start --name e2e-tmux --owner none --profile tmux --until empty \
  -- tmux new-session -d 'sleep 4245' >"$W/s.out" 2>&1
echo "  [$C] start in a transient unit (${SR[*]} --pipe --wait): rc=$? $(tr '\n' ' ' <"$W/s.out")"
sleep 2
EV=$(tether ls --all 2>&1 | grep -w e2e-tmux)
check "start from a transient unit: tether ls shows the session after the unit ended" \
  sh -c "tether ls 2>/dev/null | grep -w e2e-tmux | grep -qw running"
EV=$(tether status e2e-tmux 2>&1 | grep -E '^(state|stopped|reason)' | tr '\n' ' ')
check "start from a transient unit: tmux survived the unit's end" sh -c "pgrep -u $U -f '[s]leep 4245' >/dev/null"
# tether exec reaches the tmux server with no hand-set TMUX_TMPDIR, and a
# daemon it starts is the session's (in its cgroup, stopped with it): the
# supervisor clones it there, which an ordinary user's login shell could
# not do itself.
EV=$(env -u TMUX_TMPDIR timeout 60 tether exec e2e-tmux -- tmux ls 2>&1 | tr '\n' ' ')
check "tether exec NAME -- tmux ls reaches the session's tmux server" grep -q '^0:' <<<"$EV"
timeout 60 tether exec e2e-tmux -- sh -c 'setsid sleep 4246 >/dev/null 2>&1 </dev/null &' >/dev/null 2>&1
LEAF=$(tether status --json e2e-tmux | python3 -c 'import json,sys; print(json.load(sys.stdin)["cgroup"])')
P=$(pgrep -u "$U" -f '^sleep 4246$' | head -1)
EV="leaf $LEAF, sleep 4246 pid ${P:-none} in $(cat /proc/${P:-0}/cgroup 2>&1)"
check "tether exec: a daemon it starts is in the session's cgroup" sh -c "[ -n '$P' ] && grep -qx '0::${LEAF#/sys/fs/cgroup}' /proc/$P/cgroup"
# The agent-harness pattern: sh -c 'tether start' keeps its session after
# the shell exits (the default owner is none outside a session).
sh -c 'tether start -q --name e2e-own -- sleep 4247' >/dev/null 2>&1
sleep 1
EV=$(tether ls --all 2>&1 | grep -w e2e-own)
check "sh -c 'tether start': the session outlives the shell" sh -c "tether ls 2>/dev/null | grep -w e2e-own | grep -qw running"
timeout 120 tether stop e2e-own >/dev/null 2>&1
timeout 120 tether stop --json e2e-tmux >"$W/stop.json" 2>"$W/stop.err"; rc=$?
EV="rc=$rc $(tr '\n' ' ' <"$W/stop.err")"
check "tether stop of the session: exit 0" [ $rc = 0 ]
sleep 1
EV=$(pgrep -a -u "$U" -f 'sleep 424[567]|tmux' | tr '\n' ' ')
check "tether stop of the session: nothing left" [ -z "$EV" ]
EV=; cgcheck "start/stop of a session"

# Issue 22: nothing a session's own command does to its runtime dir
# (TETHER_SESSION_DIR) keeps tether stop from stopping it, confirmed, and
# its name is free again after. Each command ignores SIGTERM, so only the
# protocol's kill ends it; each stop gets 60 s (a hang was the bug).
# hostile ID WHAT SETUP: SETUP runs in the session's command first.
hostile() {
  local id=$1 what=$2 setup=$3 n=e2e-h$1 rc dir
  rm -f "$W/ready-$id" "$W/h-$id.json"
  timeout 60 tether start -q --name $n -e READY="$W/ready-$id" -- sh -c \
    "$setup; trap '' TERM; echo \"\$TETHER_SESSION_DIR\" >\"\$READY\"; exec sleep 425$id" >"$W/h.out" 2>&1; rc=$?
  for _ in $(seq 60); do [ -s "$W/ready-$id" ] && break; sleep 0.5; done
  EV="start rc=$rc $(tr '\n' ' ' <"$W/h.out")"
  check "hostile session ($what): starts and does it" [ -s "$W/ready-$id" ]
  dir=$(cat "$W/ready-$id" 2>/dev/null)
  timeout 60 tether stop --json --grace 200ms $n >"$W/h-$id.json" 2>"$W/h.err"; rc=$?
  EV="rc=$rc $(tr '\n' ' ' <"$W/h.err")"
  check "hostile session ($what): tether stop --grace 200ms exits 0 within 60 s" [ $rc = 0 ]
  EV=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["receipts"][0]; print("stop_confirmed=%s stop=%s exit=%s unconfirmed=%s" % (r["stop_confirmed"], r.get("stop"), r.get("exit"), (r.get("evidence") or {}).get("unconfirmed")))' "$W/h-$id.json" 2>&1)
  check "hostile session ($what): the receipt says stop_confirmed" grep -q '^stop_confirmed=True ' <<<"$EV"
  # The stop's --grace is carried (issue 30): the session's own 10 s was
  # waited when the request could not reach its runtime dir.
  EV=$(r "$W/h-$id.json" '[(s["name"], s["elapsed_ms"]) for s in r["receipts"][0]["stop"]["steps"] if s["name"] == "kill"]')
  check "hostile session ($what): the kill comes after the 200ms grace, not the session's 10 s" grep -qE "^\[\('kill', [0-9]{1,4}\)\]$" <<<"$EV"
  EV=$(pgrep -a -u "$U" -f "^sleep 425$id\$" | tr '\n' ' ')
  check "hostile session ($what): nothing of it left" [ -z "$EV" ]
  [ -n "$dir" ] && rm -rf "$dir.moved"
  timeout 60 tether start -q --name $n -- sleep 4259 >"$W/h.out" 2>&1; rc=$?
  EV="rc=$rc $(tr '\n' ' ' <"$W/h.out")"
  check "hostile session ($what): tether start --name $n works again" [ $rc = 0 ]
  timeout 60 tether stop $n >/dev/null 2>&1
  EV=; cgcheck "hostile session ($what)"
}
hostile 1 "progress.jsonl a FIFO" 'rm -f "$TETHER_SESSION_DIR/progress.jsonl"; mkfifo "$TETHER_SESSION_DIR/progress.jsonl"'
hostile 2 "a stop request file a FIFO" 'mkfifo "$TETHER_SESSION_DIR/stop-0-x.json"'
hostile 3 "runtime dir removed" 'rm -rf "$TETHER_SESSION_DIR"'
hostile 4 "runtime dir chmod 750" 'chmod 750 "$TETHER_SESSION_DIR"'
hostile 5 "runtime dir replaced by a symlink" 'mv "$TETHER_SESSION_DIR" "$TETHER_SESSION_DIR.moved" && ln -s /tmp "$TETHER_SESSION_DIR"'

# The command's kill -HUP 0 (INT, TERM) reaches its own process group, not
# its supervisor: the session runs on.
rm -f "$W/ready-k"
timeout 60 tether start -q --name e2e-kill0 -e READY="$W/ready-k" -- sh -c \
  'trap "" HUP INT TERM; kill -HUP 0; kill -INT 0; kill -TERM 0; echo ok >"$READY"; exec sleep 4260' >/dev/null 2>&1
for _ in $(seq 60); do [ -s "$W/ready-k" ] && break; sleep 0.5; done
sleep 2
EV="$(tether status e2e-kill0 2>&1 | grep -E '^(state|stopped|reason)' | tr '\n' ' ') sleep: $(pgrep -u "$U" -f '^sleep 4260$')"
check "the command's kill -HUP/-INT/-TERM 0 leaves its session running" \
  sh -c "[ -s '$W/ready-k' ] && tether ls 2>/dev/null | grep -w e2e-kill0 | grep -qw running && pgrep -u $U -f '^sleep 4260\$' >/dev/null"
timeout 60 tether stop --grace 200ms e2e-kill0 >/dev/null 2>&1
EV=; cgcheck "kill 0 from a session's command"

# A session started inside tether run with --owner none outlives the run,
# outside the run's leaf, and the run's stop is confirmed.
rm -f "$W/in.json"
timeout 120 tether run --receipt "$W/in.json" -- tether start -q --owner none --name e2e-inner -- sleep 4261 >"$W/in.out" 2>&1; rc=$?
EV="rc=$rc $(summary "$W/in.json") stop_confirmed=$(r "$W/in.json" 'r["stop_confirmed"]') $(tr '\n' ' ' <"$W/in.out")"
check "tether run -- tether start --owner none: the run's stop confirmed" \
  [ $rc = 0 -a "$(r "$W/in.json" 'r["stop_confirmed"]')" = True ]
RL=$(r "$W/in.json" '(r.get("cgroup") or {}).get("path")')
SL=$(tether status --json e2e-inner 2>/dev/null | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["state"], s.get("cgroup"))' 2>&1)
outlived() { # the session runs, its sleep too, and its leaf is not in the run's
  [ "${SL%% *}" = running ] && [ -n "$RL" ] && pgrep -u "$U" -f '^sleep 4261$' >/dev/null &&
    case "${SL#* }/" in "$RL"/*) false ;; esac
}
EV="run leaf $RL; session: $SL; sleep: $(pgrep -u "$U" -f '^sleep 4261$')"
check "tether run -- tether start --owner none: the session outlives the run, outside its leaf" outlived
timeout 60 tether stop --json e2e-inner >"$W/inner.json" 2>&1; rc=$?
EV="rc=$rc $(head -c 300 "$W/inner.json" | tr '\n' ' ')"
check "tether run -- tether start --owner none: the session stops, confirmed" \
  sh -c "[ $rc = 0 ] && python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))[\"receipts\"][0][\"stop_confirmed\"])' '$W/inner.json'"
EV=; cgcheck "a session started inside tether run"

# tether's own death (issue 24): tether run SIGKILLed while its command
# runs — a TERM-ignoring main, a setsid'd and a double-forked descendant —
# leaves nothing, on the mechanism auto mode picks and on the fallback
# (found by the group marker); the watcher writes the receipt (owner-died) to --receipt FILE.
# A session's supervisor SIGKILLed: its group is stopped and its record
# ends stopped (supervisor-died).
OD='trap "" TERM; setsid sh -c "trap \"\" TERM; exec sleep 427$1" & (exec sleep 427$1 &); exec sleep 427$1'
odleft() { pgrep -u "$U" -xf "sleep 427$1" | wc -l; }
odwait() { # odwait N COUNT: wait up to 15 s until COUNT sleeps 427N are alive (COUNT 0: none)
  for _ in $(seq 150); do [ "$(odleft "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1
}
for m in auto fallback; do
  n=$([ $m = auto ] && echo 3 || echo 4)
  rm -f "$W/od-$m.json"
  tether run --mechanism $m --receipt "$W/od-$m.json" -- sh -c "$OD" od $n >/dev/null 2>&1 &
  odpid=$!
  if odwait $n 3; then
    kill -9 $odpid; wait $odpid 2>/dev/null
    odwait $n 0; left=$(odleft $n)
    for _ in $(seq 150); do [ -s "$W/od-$m.json" ] && break; sleep 0.1; done
    EV="left $left: $(pgrep -u "$U" -af "sleep 427$n" | tr '\n' ' ') receipt: $(r "$W/od-$m.json" '(r["stop"]["reason"], r["stop_confirmed"], r["mechanism"])')"
    check "tether run --mechanism $m SIGKILLed: its whole tree is stopped, receipt owner-died" \
      [ "$left" = 0 -a "$(r "$W/od-$m.json" 'r["stop"]["reason"] == "owner-died" and r["stop_confirmed"]')" = True ]
  else
    kill -9 $odpid; EV="$(odleft $n) of 3 sleeps started"; fail "tether run --mechanism $m: the workload never forked ($EV)"
  fi
  pkill -9 -u "$U" -xf "sleep 427$n"
  EV=; cgcheck "tether run --mechanism $m SIGKILLed"
done
timeout 60 tether start -q --name e2e-od --owner none -- sh -c "$OD" od 5 >/dev/null 2>&1
odwait 5 3
SUP=$(tether status --json e2e-od 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["supervisor"].split(":")[2])' 2>&1)
kill -9 "$SUP" 2>/dev/null
odwait 5 0; left=$(odleft 5)
for _ in $(seq 150); do tether status e2e-od 2>/dev/null | grep -q '^state: *stopped' && break; sleep 0.1; done
ST=$(tether status --json e2e-od 2>/dev/null | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["state"], s.get("stop_reason"))' 2>&1)
EV="supervisor $SUP, left $left, status: $ST"
check "a session's supervisor SIGKILLed: its tree is stopped, the session ends stopped (supervisor-died)" \
  [ "$left" = 0 -a "$ST" = "stopped supervisor-died" ]
pkill -9 -u "$U" -xf "sleep 4275"
EV=; cgcheck "a session's supervisor SIGKILLed"

# A state dir under another user's directory is refused, naming the owner:
# root with tu's XDG_RUNTIME_DIR (su without -l, sudo -E), and an ordinary
# user with XDG_RUNTIME_DIR=/run, where /run/tether is root's (0700, made
# by the root context, which job.sh runs first).
if [ "$U" = 0 ]; then
  UR=/run/user/1000
  [ -d $UR ] || { UR=$W/user-1000; install -d -o 1000 -m 0700 $UR; }
  XR=$UR OWNER="uid 1000"
else
  XR=/run OWNER="uid 0"
fi
XDG_RUNTIME_DIR=$XR timeout 60 tether ls >"$W/x.out" 2>&1; rc=$?
EV="rc=$rc $(tr '\n' ' ' <"$W/x.out")[$(ls -ld "$XR/tether" 2>&1)]"
check "XDG_RUNTIME_DIR=$XR tether ls: refused, exit 1, naming $OWNER" sh -c "[ $rc = 1 ] && grep -q '$OWNER' '$W/x.out'"
EV=; cgcheck "XDG_RUNTIME_DIR of another user"

timeout 60 tether doctor --json >"$W/doctor.json" 2>"$W/doctor.err"; rc=$?
EV="rc=$rc $(tr '\n' ' ' <"$W/doctor.err" | cut -c1-300)"
check "tether doctor --json runs and prints JSON" sh -c "[ $rc = 0 ] && python3 -m json.tool '$W/doctor.json' >/dev/null"
echo "  [$C] doctor: $(r "$W/doctor.json" '{k: r.get(k) for k in ("mechanism", "full_containment", "systemd", "advice")}')"
DELEG='r["cgroup"]["v2"]["leaf_parent"]["delegation"]'
echo "  [$C] doctor: delegation proof $(r "$W/doctor.json" "$DELEG.get('proof')"): $(r "$W/doctor.json" "$DELEG.get('detail')")"

# A user.delegate mark the caller sets on its own unit's cgroup, as any
# owner may (issue 22): doctor takes it as proof of no more than that
# (user-xattr). The login shell's session scope is root's: nothing to set.
UNIT=$CG
while [ "$UNIT" != /sys/fs/cgroup ]; do case ${UNIT##*/} in *.scope | *.service) break ;; esac; UNIT=${UNIT%/*}; done
xattr() { python3 -c 'import os,sys; f=getattr(os, sys.argv[1]); f(*sys.argv[2:3], *[a.encode() for a in sys.argv[3:]])' "$@"; }
if [ "$UNIT" != /sys/fs/cgroup ] && [ -w "$UNIT" ] && xattr setxattr "$UNIT" user.delegate 1 2>"$W/x.err"; then
  timeout 60 tether doctor --json >"$W/doctor-mark.json" 2>"$W/doctor.err"; rc=$?
  xattr removexattr "$UNIT" user.delegate
  EV="rc=$rc $(r "$W/doctor-mark.json" "($DELEG['proof'], $DELEG['detail'])")"
  check "doctor with user.delegate set by its owner on ${UNIT##*/}: proof user-xattr, which proves no delegation" \
    [ "$(r "$W/doctor-mark.json" "$DELEG['proof'] == 'user-xattr' and 'not that a manager delegated it' in $DELEG['detail']")" = True ]
  EV=; cgcheck "doctor with a user.delegate mark"
else
  echo "  [$C] no user.delegate mark tried: ${UNIT#/sys/fs/cgroup} is not ours to mark ($(stat -c 'uid %u' "$UNIT") $(cat "$W/x.err" 2>/dev/null))"
fi

rm -rf "$W"
exit $fails
