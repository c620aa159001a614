#!/bin/bash
# job.sh SUITE — the whole job of one guest boot, as root in vm-job.service:
# installs what the host built, runs the end-to-end checks in each context
# (root; on trixie also the lingering user tu through its user manager and
# through a login shell), the release .deb's checks (trixie, when staged),
# then the test suite. Results land in /mnt/host/results/SUITE/
# (e2e-CONTEXT.log, PKG.log) for matrix.sh to judge. JOB_ONLY=deb: the
# .deb's checks alone (.ci/vm/deb.sh), with no binaries or tests staged.
S=${1:?usage: job.sh SUITE}
H=/mnt/host R=/mnt/host/results/$1
rm -rf "$R"; mkdir -p "$R"; uname -r >"$R/kernel"
# JOB_ONLY=deb stages no binaries or tests: the package brings its own.
if [ "${JOB_ONLY:-}" != deb ]; then
# Off 9p onto the guest's disk: tests re-execute themselves and tether.
mkdir -p /root/ci && cp -a $H/tests $H/repo /root/ci/
install -m 0755 $H/tests/tether /usr/local/bin/tether
install -m 0755 $H/tests/tether-mcp /usr/local/bin/tether-mcp
install -m 0755 $H/tests/tether-crashpoints /usr/local/lib/tether-crashpoints
# The guest has no Go. reap's tests build tether with crash points by
# exactly one command; this stand-in serves it with the binary the host
# built by the same command, and refuses anything else.
cat >/usr/local/bin/go <<'GO'
#!/bin/sh
[ $# = 6 ] && [ "$*" = "build -tags crashpoints -o $5 ../../cmd/tether" ] && exec cp /usr/local/lib/tether-crashpoints "$5"
echo "go stand-in: only 'go build -tags crashpoints -o BIN ../../cmd/tether' exists in this guest" >&2; exit 1
GO
chmod 0755 /usr/local/bin/go
fi
install -d -m 0755 /usr/local/share/tether-ci && install -m 0755 $H/guest/e2e.sh /usr/local/share/tether-ci/
E=/usr/local/share/tether-ci/e2e.sh

echo "guest: $S, kernel $(uname -r), $(systemctl --version | head -1), $(systemctl is-system-running --wait)"
echo "guest: cgroup.controllers '$(cat /sys/fs/cgroup/cgroup.controllers)'"
# The probe reap's PID-reuse test makes: per-namespace pid_max (6.14+) or not.
setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U -r -p -f --mount-proc \
  sh -c 'cat /proc/sys/kernel/pid_max > /proc/sys/kernel/pid_max' 2>&1 | sed 's/^/guest: probe: /'
echo "guest: pid_max per namespace: $([ "${PIPESTATUS[0]}" = 0 ] && echo yes || echo no)"

e2e() { local c=$1 t=$SECONDS; shift; echo "== e2e $c"; "$@" 2>&1 | tee "$R/e2e-$c.log"; echo "== e2e $c took $((SECONDS - t))s"; }
[ "${JOB_ONLY:-}" = deb ] || e2e root bash $E root
if [ "$S" = trixie ] && [ "${JOB_ONLY:-}" != deb ]; then
  systemctl start user@1000.service
  e2e user-manager systemd-run --machine=tu@ --user --pipe --wait --quiet bash $E user-manager
  e2e login-shell su -l tu -c "bash $E login-shell"
fi
# The release .deb (issue 26), when the host staged one in pkg/
# (.ci/vm/deb.sh, as .ci/run does, or matrix.sh with DEB): installed, used
# by tu from a login shell, purged before the suite.
if [ "$S" = trixie ] && [ -s $H/pkg/tether.deb ]; then
  install -m 0755 $H/guest/deb.sh /usr/local/share/tether-ci/
  D=/usr/local/share/tether-ci/deb.sh
  e2e deb-install bash $D install $H/pkg/tether.deb "$(cat $H/pkg/commit)"
  e2e deb-user su -l tu -c "bash $D user $H/pkg/tether-dev.service"
  e2e deb-purge bash $D purge
fi
[ "${JOB_ONLY:-}" = deb ] && exit 0
echo "== suite"
bash $H/guest/suite.sh "$R"
true
