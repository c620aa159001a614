package pidfd

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// InfoCgroupID asks PIDFD_GET_INFO for the cgroup id (PIDFD_INFO_CGROUPID
// in linux/pidfd.h); the kernel clears it in Info.Mask when it has none.
const InfoCgroupID = 0x4

// getInfo is PIDFD_GET_INFO, _IOWR(0xFF, 11, struct pidfd_info) for the
// 88 bytes of Info. It is one number on every architecture (x/sys has it
// in its architecture-independent ztypes_linux.go). The kernel takes the
// struct's size from the number and fills what fits, so an older kernel
// with a shorter struct answers too (pidfs.c, copy_struct_to_user).
const getInfo = 0xc058ff0b

// Info is struct pidfd_info of linux/pidfd.h, laid out as x/sys v0.50.0's
// unix.PidfdInfo (the one tether used before this package).
type Info struct {
	Mask           uint64
	CgroupID       uint64
	Pid            uint32
	Tgid           uint32
	Ppid           uint32
	Ruid           uint32
	Rgid           uint32
	Euid           uint32
	Egid           uint32
	Suid           uint32
	Sgid           uint32
	Fsuid          uint32
	Fsgid          uint32
	ExitCode       int32
	CoredumpMask   uint32
	CoredumpSignal uint32
	CoredumpCode   uint32
	_              uint32
	SupportedMask  uint64
}

// GetInfo fills info for the process of the pidfd fd, for the fields
// named in info.Mask. Kernels before 6.13 fail with ENOTTY (or EINVAL);
// ESRCH means the process was reaped. The error is a bare unix.Errno, as
// x/sys's IoctlPidfdInfo returns.
func GetInfo(fd int, info *Info) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), getInfo, uintptr(unsafe.Pointer(info)))
	if errno != 0 {
		return errno
	}
	return nil
}
