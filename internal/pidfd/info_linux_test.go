package pidfd

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestInfoSize: the kernel reads the struct's size from the ioctl number,
// so Info must be the 88 bytes getInfo names.
func TestInfoSize(t *testing.T) {
	if got := unsafe.Sizeof(Info{}); got != 88 {
		t.Fatalf("unsafe.Sizeof(Info{}) = %d, want 88", got)
	}
}

// TestGetInfoSelf asks about this process and checks what the kernel
// says against getpid, getppid and getuid.
func TestGetInfoSelf(t *testing.T) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		t.Skipf("pidfd_open (Linux 5.3): %v", err)
	}
	defer unix.Close(fd)
	info := Info{Mask: InfoCgroupID}
	err = GetInfo(fd, &info)
	if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) {
		t.Skipf("the kernel lacks PIDFD_GET_INFO (Linux 6.13): %v", err)
	}
	if err != nil {
		t.Fatalf("GetInfo(pidfd of self) = %v, want nil", err)
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"Pid", int(info.Pid), os.Getpid()},
		{"Tgid", int(info.Tgid), os.Getpid()},
		{"Ppid", int(info.Ppid), os.Getppid()},
		{"Ruid", int(info.Ruid), os.Getuid()},
	} {
		if c.got != c.want {
			t.Errorf("GetInfo(pidfd of self): %s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if info.Mask&InfoCgroupID != 0 && info.CgroupID == 0 {
		t.Errorf("GetInfo(pidfd of self): Mask has InfoCgroupID, CgroupID = 0, want an inode number")
	}
}

// TestGetInfoClosed: a bad descriptor is an error, not a zero Info.
func TestGetInfoClosed(t *testing.T) {
	var info Info
	if err := GetInfo(-1, &info); !errors.Is(err, unix.EBADF) {
		t.Fatalf("GetInfo(-1) = %v, want EBADF", err)
	}
}
