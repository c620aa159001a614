// Package stop is tether's one stop protocol. Drive runs it over any
// Group — a cgroup v2 leaf (Run, here), the fallback's process tree and
// the macOS process group (contain), a Windows Job Object (contain), a
// dead owner's recorded processes (reap) — under a Policy (the signal,
// the grace, the kill wait):
//
//  1. Term: the stop signal, then SIGCONT, to every identified member;
//  2. the grace: wait for the group to be empty, in slices, until the
//     grace in force is over or a second request cuts it;
//  3. Kill, and the wait for emptiness;
//  4. Confirm: the caller reaps what is its own, then every identified
//     member is confirmed gone, all under one deadline.
//
// Every step goes into a Log, for the receipt. What is one group's own
// lives in its Group methods: for the leaf (Run) that is the seal before
// the first look, cgroup.kill or, on kernels without it (5.7–5.13),
// freeze and SIGKILL every member through a verified pidfd, and the rmdir
// after the last look.
//
// A leaf's member is a process whose pidfd is open and proven in the
// leaf: by the pidfd's cgroup id (PIDFD_GET_INFO, Linux 6.13+), else by
// /proc/PID/cgroup read while the pidfd's process is alive or a zombie
// (it holds its pid, so the read is about it).
package stop
