#!/bin/bash
# suite.sh RESULTS — runs every test binary the host built (/root/ci/tests,
# named after the package path with / as .) from its package directory in
# a copy of the repo, as root in this shell's cgroup, with -test.v;
# RESULTS/PKG.log keeps each log (the host judges them). One line per
# package. Exit status: the number of packages that failed.
R=${1:?usage: suite.sh RESULTS}
mkdir -p "$R"; fails=0; t0=$SECONDS
echo "suite: kernel $(uname -r), $(systemctl --version | head -1), cgroup $(sed -n 's/^0:://p' /proc/self/cgroup)"
for t in /root/ci/tests/*.test; do
  p=$(basename "$t" .test) s=$SECONDS
  d=${p//.//}; [ "$p" = root ] && d=.   # the module's own package
  # TETHER_TEST_TMUX_ROUNDS: cli's back-to-back tmux test, 100 rounds on
  # the host, takes 1.3 s a round under TCG; 10 here. Each binary gets 10
  # minutes: a hang guard, not a budget (cli took 251-309 s under TCG, too
  # close to the 5 minutes it had).
  ( cd "/root/ci/repo/$d" && TETHER_TEST_TMUX_ROUNDS=10 timeout 630 "$t" -test.count=1 -test.timeout 10m -test.v ) >"$R/$p.log" 2>&1
  rc=$?; [ $rc = 0 ] || fails=$((fails + 1))
  printf 'suite: %-20s rc=%-3s %4ss\n' "$p" $rc $((SECONDS - s))
done
echo "suite: $((SECONDS - t0))s, $fails packages failed; tether cgroups left: $(find /sys/fs/cgroup -type d -name 'tether-*' | wc -l); pid_max $(cat /proc/sys/kernel/pid_max)"
exit $fails
