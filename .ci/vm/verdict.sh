#!/usr/bin/env bash
# verdict.sh RESULTS — judges one guest's results (written by guest/job.sh):
# per package pass/fail/skip counts, every failure verbatim (the lines its
# test logged), every skip with its reason, allowed only if skips.txt lists
# it for this kernel; every FAIL line of the end-to-end checks. Exit 1 if
# anything failed or skipped without leave, else 0.
set -uo pipefail
R=${1:?usage: verdict.sh RESULTS}
HERE=$(cd "$(dirname "$0")" && pwd)
KERNEL=$(cat "$R/kernel" 2>/dev/null) || { echo "verdict: no $R/kernel: the guest job did not run" >&2; exit 1; }
bad=0

# older A B: kernel version A (6.12.117+deb13-amd64) is below B (6.14).
older() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "${1%%[-+]*}" "$2" | sort -V | head -1)" = "${1%%[-+]*}" ]; }
allowed() { # allowed PKG TEST: prints the reason when skips.txt allows it
  local p t k reason
  while read -r p t k reason; do
    case $p in '' | '#'*) continue ;; esac
    [ "$p" = "$1" ] && [[ $2 =~ ^($t)$ ]] || continue
    if [ "$k" = all ] || { [[ $k == '<'* ]] && older "$KERNEL" "${k#<}"; }; then echo "$reason"; return 0; fi
  done <"$HERE/skips.txt"
  return 1
}

# report LOG: "F name" then the test's lines, for each failure; "S name
# reason" for each skip. -test.v marks whose output follows with
# === RUN/CONT/NAME/PAUSE; a test's messages are the lines under its marks.
report() {
  awk '
    /^=== (RUN|CONT|NAME|PAUSE) / { cur = $3; next }
    /^ *--- (PASS|FAIL|SKIP): / {
      n = $3
      if ($2 == "FAIL:") { printf "F %s\n%s%s\n", n, out[n], $0 }
      if ($2 == "SKIP:") { m = out[n]; gsub(/\n */, " ", m); gsub(/^ +/, "", m); printf "S %s %s\n", n, m }
      delete out[n]; next
    }
    cur != "" { out[cur] = out[cur] $0 "\n" }
  ' "$1"
}

printf '%-16s %-6s %5s %5s %5s\n' package result pass fail skip
for log in "$R"/*.log; do
  p=$(basename "$log" .log)
  case $p in e2e-*) continue ;; esac
  ok=FAIL; tail -n 3 "$log" | grep -qx 'PASS' && ok=ok
  printf '%-16s %-6s %5s %5s %5s\n' "$p" $ok "$(grep -c -- '--- PASS' "$log")" "$(grep -c -- '--- FAIL' "$log")" "$(grep -c -- '--- SKIP' "$log")"
done

for log in "$R"/*.log; do
  p=$(basename "$log" .log)
  case $p in e2e-*) continue ;; esac
  if ! tail -n 3 "$log" | grep -qx 'PASS'; then
    bad=1
    echo "---- $p failed:"
    report "$log" | grep -v '^S ' | sed 's/^F /FAIL /'
    grep -q -- '--- FAIL' "$log" || { echo "(no test failed by name; the log ends:)"; tail -n 40 "$log"; }
  fi
  report "$log" | grep '^S ' | while read -r _ t reason; do
    if why=$(allowed "$p" "$t"); then
      echo "skip allowed: $p $t: $reason [skips.txt: $why]"
    else
      echo "SKIP NOT ALLOWED: $p $t: $reason"
    fi
  done
done >"$R/verdict.txt"
cat "$R/verdict.txt"
grep -q '^SKIP NOT ALLOWED' "$R/verdict.txt" && bad=1

e2e=0
for log in "$R"/e2e-*.log; do
  [ -e "$log" ] || continue
  n=$(grep -c '^FAIL ' "$log"); [ "$n" = 0 ] || bad=1; e2e=$((e2e + n))
  echo "e2e ${log##*/e2e-}: $(grep -c '^PASS ' "$log") passed, $n failed"
  grep '^FAIL ' "$log"
done
echo "verdict $(basename "$R") (kernel $KERNEL): $(grep -c '^---- ' "$R/verdict.txt") packages failed," \
  "$(grep -c '^SKIP NOT ALLOWED' "$R/verdict.txt") skips not allowed, $e2e e2e checks failed"
exit $bad
