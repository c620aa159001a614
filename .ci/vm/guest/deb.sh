#!/bin/bash
# deb.sh STEP — checks of the release .deb (issue 26), one line per
# assertion as e2e.sh prints them: "PASS [deb-STEP] ..." or
# "FAIL [deb-STEP] ... (evidence)". Exit status: the number of FAILs.
#
#   deb.sh install DEB COMMIT  as root: dpkg -i, the package's files, the
#                              binary names COMMIT (the release's)
#   deb.sh user [UNIT]         as an ordinary user in a login shell (su -l):
#                              tether run, a session (start, ls, stop),
#                              tether mcp, the completions, man tether; all
#                              from /usr/bin, not the CI's /usr/local/bin;
#                              with UNIT (examples/integrations/systemd/
#                              tether-dev.service) that user unit: enabled,
#                              started with default.target, stopped
#   deb.sh purge               as root: dpkg --purge leaves none of its files
C=deb-${1:?usage: deb.sh install DEB COMMIT | user [UNIT] | purge}
fails=0
pass() { echo "PASS [$C] $*"; }
fail() { echo "FAIL [$C] $*"; fails=$((fails + 1)); }
check() { # check NAME CONDITION-COMMAND... (evidence on failure: $EV)
  local n=$1; shift
  if "$@"; then pass "$n"; else fail "$n${EV:+ ($EV)}"; fi
}
FILES="/usr/bin/tether /usr/bin/tether-mcp /usr/share/man/man1/tether.1.gz /usr/share/man/man1/tether-run.1.gz
/usr/share/bash-completion/completions/tether /usr/share/zsh/vendor-completions/_tether
/usr/share/fish/vendor_completions.d/tether.fish /usr/share/doc/tether/README.md /usr/share/doc/tether/LICENSE"

case $1 in
install)
  DEB=${2:?deb.sh install DEB COMMIT} COMMIT=${3:?deb.sh install DEB COMMIT}
  EV=$(dpkg -i "$DEB" 2>&1 | tail -3 | tr '\n' ' ')
  check "dpkg -i ${DEB##*/}" sh -c "dpkg-query -W -f '\${Status}' tether | grep -q 'install ok installed'"
  for f in $FILES; do
    EV=$(ls -l "$f" 2>&1); check "the package installs $f" sh -c "[ -s '$f' ] && dpkg -S '$f' | grep -q '^tether:'"
  done
  EV=$(/usr/bin/tether --version 2>&1)
  check "/usr/bin/tether --version names the release's commit ${COMMIT:0:12}" grep -q "^tether v.* (rev ${COMMIT:0:12}) " <<<"$EV"
  ;;
user)
  export PATH=/usr/bin:/bin
  U=$(id -u) W=$(mktemp -d /tmp/tether-deb.XXXXXX)
  echo "[$C] uid $U, cgroup $(sed -n 's/^0:://p' /proc/self/cgroup)"
  EV=$(command -v tether tether-mcp | tr '\n' ' '); check "tether and tether-mcp are the package's (/usr/bin)" [ "$EV" = "/usr/bin/tether /usr/bin/tether-mcp " ]
  check "runs as an ordinary user (uid $U)" [ "$U" != 0 ]

  timeout 120 tether run --receipt "$W/run.json" -- sh -c 'setsid sleep 4291 & (sleep 4292 &); echo ran' >"$W/run.out" 2>"$W/run.err"; rc=$?
  R=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["exit"]["code"], r["mechanism"], r["stop_confirmed"])' "$W/run.json" 2>&1)
  EV="rc=$rc receipt: $R; stdout: $(tr '\n' ' ' <"$W/run.out") stderr: $(tr '\n' ' ' <"$W/run.err")"
  check "tether run of a daemonizing command: exit 0, its output, receipt: cgroup, stop confirmed" \
    [ $rc = 0 -a "$R" = "0 cgroup True" -a "$(cat "$W/run.out")" = ran ]
  EV=$(pgrep -a -u "$U" -f '^sleep 429[12]$' | tr '\n' ' '); check "tether run: nothing it started is left" [ -z "$EV" ]

  timeout 60 tether start --name deb-s -- sleep 1000 >"$W/start.out" 2>&1; rc=$?
  EV="rc=$rc $(tr '\n' ' ' <"$W/start.out")"; check "tether start deb-s -- sleep 1000: exit 0" [ $rc = 0 ]
  EV=$(tether ls 2>&1 | tr '\n' ' ')
  check "tether ls shows deb-s running" sh -c "tether ls 2>/dev/null | grep -w deb-s | grep -qw running"
  EV=$(pgrep -a -u "$U" -xf 'sleep 1000'); check "the session's sleep 1000 runs" [ -n "$EV" ]
  timeout 60 tether stop deb-s >"$W/stop.out" 2>&1; rc=$?
  EV="rc=$rc $(tr '\n' ' ' <"$W/stop.out")"; check "tether stop deb-s: exit 0" [ $rc = 0 ]
  EV=$(pgrep -a -u "$U" -xf 'sleep 1000'); check "tether stop deb-s: nothing of it left" [ -z "$EV" ]
  EV=$(tether ls 2>&1 | tr '\n' ' '); check "tether ls no longer shows deb-s running" sh -c "! tether ls 2>/dev/null | grep -w deb-s | grep -qw running"

  # tether mcp runs tether-mcp beside tether: it answers initialize. stdin
  # stays open a moment: on EOF straight after the request the server ends
  # without answering.
  INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deb.sh","version":"0"}}}'
  { echo "$INIT"; sleep 3; } | timeout 30 tether mcp >"$W/mcp.out" 2>&1
  EV=$(head -c 300 "$W/mcp.out")
  check "tether mcp answers initialize (tether-mcp from the package)" grep -q '"id":1,"result":{.*"serverInfo":{"name":"tether"' "$W/mcp.out"

  EV=$(bash -c 'source /usr/share/bash-completion/completions/tether && complete -p tether' 2>&1)
  check "bash completion loads and completes tether" grep -q -- '-F __start_tether tether$' <<<"$EV"
  EV=$(head -1 /usr/share/zsh/vendor-completions/_tether 2>&1); check "zsh completion is tether's (#compdef tether)" [ "$EV" = "#compdef tether" ]
  EV=$(grep -c '^complete -c tether' /usr/share/fish/vendor_completions.d/tether.fish 2>&1)
  check "fish completion is tether's" [ "${EV:-0}" -ge 1 ]
  MANPAGER=cat MANWIDTH=80 man tether >"$W/man.out" 2>&1; rc=$?
  EV="rc=$rc $(head -c 200 "$W/man.out" | tr '\n' ' ')"
  check "man tether: exit 0, the page names tether and its commands" sh -c "[ $rc = 0 ] && grep -q '^NAME' '$W/man.out' && grep -q 'tether-run(1)' '$W/man.out'"
  MANPAGER=cat man tether-run >"$W/man.out" 2>&1; rc=$?
  EV="rc=$rc $(head -c 200 "$W/man.out" | tr '\n' ' ')"; check "man tether-run: exit 0" sh -c "[ $rc = 0 ] && grep -q -- '--timeout' '$W/man.out'"

  # examples/integrations/systemd/tether-dev.service: enabled, its session
  # starts when default.target does (as at login), stops with the unit.
  UNIT=${2:-}
  if [ -s "$UNIT" ]; then
    mkdir -p ~/.config/systemd/user && cp "$UNIT" ~/.config/systemd/user/tether-dev.service
    systemctl --user daemon-reload
    EV=$(systemctl --user enable tether-dev.service 2>&1 | tr '\n' ' ')
    check "systemd user unit: systemctl --user enable" [ "$(systemctl --user is-enabled tether-dev.service 2>&1)" = enabled ]
    timeout 120 systemctl --user start default.target >"$W/u.out" 2>&1; rc=$?
    EV="rc=$rc $(tr '\n' ' ' <"$W/u.out") $(systemctl --user status tether-dev.service 2>&1 | tail -5 | tr '\n' ' ') ls: $(tether ls 2>&1 | tr '\n' ' ')"
    check "systemd user unit: starting default.target (as at login) starts session dev-http, ready on its port" \
      sh -c "tether ls 2>/dev/null | grep -w dev-http | grep -qw running && python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8000), 5)'"
    timeout 120 systemctl --user stop tether-dev.service >"$W/u.out" 2>&1; rc=$?
    sleep 1
    EV="rc=$rc $(tr '\n' ' ' <"$W/u.out") ls: $(tether ls 2>&1 | tr '\n' ' ') left: $(pgrep -a -u "$U" -f '[h]ttp.server 8000')"
    check "systemd user unit: systemctl --user stop stops the session, nothing left" \
      sh -c "[ $rc = 0 ] && ! tether ls 2>/dev/null | grep -w dev-http | grep -qw running && ! pgrep -u $U -f '[h]ttp.server 8000' >/dev/null"
    systemctl --user disable tether-dev.service >/dev/null 2>&1
    rm -f ~/.config/systemd/user/tether-dev.service && systemctl --user daemon-reload
  else
    echo "[$C] no systemd unit staged: its checks not run"
  fi
  rm -rf "$W"
  ;;
purge)
  EV=$(dpkg --purge tether 2>&1 | tail -3 | tr '\n' ' ')
  check "dpkg --purge tether" sh -c "! dpkg-query -W tether >/dev/null 2>&1 || ! dpkg-query -W -f '\${Status}' tether | grep -q installed"
  EV=$(ls -d $FILES 2>/dev/null | tr '\n' ' '); check "purge leaves none of its files" [ -z "$EV" ]
  ;;
*) echo "usage: deb.sh install DEB COMMIT | user [UNIT] | purge" >&2; exit 2 ;;
esac
exit $fails
