// Package stop is tether's one stop protocol for a cgroup v2 leaf, used by
// contain (a run or a session stopping its own group) and by reap (a dead
// supervisor's leaf held anew):
//
//  1. thaw a frozen leaf; SIGTERM every verified member, then SIGCONT so a
//     stopped member can act on it;
//  2. wait the grace for populated 0;
//  3. kill: cgroup.kill, or on kernels without it (5.7–5.13) freeze the
//     leaf, SIGKILL every member through a verified pidfd, thaw, repeat;
//  4. wait the kill wait for populated 0;
//  5. let the caller reap its children, then confirm every identified
//     member gone, all under one deadline;
//  6. rmdir the leaf; every step goes into the receipt.
//
// A member is a process whose pidfd is open and proven in the leaf: by the
// pidfd's cgroup id (PIDFD_GET_INFO, Linux 6.13+), else by
// /proc/PID/cgroup read while the pidfd's process is alive or a zombie
// (it holds its pid, so the read is about it).
package stop
