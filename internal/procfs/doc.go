// Package procfs reads small kernel files (/proc, cgroupfs) with plain
// blocking syscalls. os.ReadFile registers every file with the runtime's
// poller, which costs several system calls per read on procfs; tether reads
// such files on hot paths (every member, every stop).
package procfs
