package hostinfo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/internal/pidfd"
	"golang.org/x/sys/unix"
)

// probeTrue is what the clone3 probe starts: a program that exits at once.
const probeTrue = "/bin/true"

// probeFeatures tries each kernel feature. It returns an error only when
// the clone3 probe may have left its leaf behind.
func probeFeatures(r *Report) error {
	f := &r.Features
	v := &r.Cgroup.V2
	f.PidfdOpen, f.PidfdCgroupID = probePidfd(v.Dir)
	f.ChildSubreaper = probeSubreaper()

	var leafKill *bool
	var err error
	switch lp := v.LeafParent; {
	case v.Mount == "":
		f.Clone3IntoCgroup.Detail = "not probed: no cgroup v2 hierarchy is mounted"
	case !lp.Usable:
		f.Clone3IntoCgroup.Detail = "not probed: no writable cgroup v2 parent to create a probe leaf in (" + lp.Why + ")"
	case delegate.Booted() && lp.Source == SourceOwn && !lp.Delegation.Delegated:
		f.Clone3IntoCgroup.Detail = "not probed: systemd did not delegate our cgroup, and tether writes no leaf where systemd did not delegate (tether run takes a scope of its own)"
	default:
		var hasKill bool
		f.Clone3IntoCgroup, hasKill, err = probeClone3(lp.Dir)
		if f.Clone3IntoCgroup.Probed {
			leafKill = &hasKill
		}
	}
	f.CgroupKill = probeKill(v, leafKill)
	return err
}

// probePidfd opens a pidfd on ourselves (pidfd_open, Linux 5.3) and asks
// it for our cgroup id (PIDFD_GET_INFO, Linux 6.13). ourDir is our cgroup
// v2 directory, whose inode number the id should equal.
func probePidfd(ourDir string) (open, info Feature) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		open = Feature{Probed: true, Detail: "pidfd_open on ourselves failed: " + os.NewSyscallError("pidfd_open", err).Error()}
		info = Feature{Detail: "not probed: needs a pidfd"}
		return open, info
	}
	defer unix.Close(fd)
	open = Feature{Available: true, Probed: true, Detail: "pidfd_open on ourselves returned a pidfd"}

	pi := pidfd.Info{Mask: pidfd.InfoCgroupID}
	err = pidfd.GetInfo(fd, &pi)
	switch {
	case errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL):
		info = Feature{Probed: true, Detail: "the kernel lacks the PIDFD_GET_INFO ioctl (Linux 6.13+)"}
	case err != nil:
		info = Feature{Probed: true, Detail: "PIDFD_GET_INFO failed: " + os.NewSyscallError("ioctl", err).Error()}
	case pi.Mask&pidfd.InfoCgroupID == 0:
		info = Feature{Probed: true, Detail: "PIDFD_GET_INFO answered without a cgroup id"}
	default:
		info = Feature{Available: true, Probed: true, Detail: fmt.Sprintf("PIDFD_GET_INFO reports cgroup id %d", pi.CgroupID)}
		var st unix.Stat_t
		if ourDir != "" && unix.Stat(ourDir, &st) == nil {
			if st.Ino == pi.CgroupID {
				info.Detail += ", the inode number of " + ourDir
			} else {
				info.Detail += fmt.Sprintf(", but %s has inode number %d", ourDir, st.Ino)
			}
		}
	}
	return open, info
}

// probeSubreaper asks whether we are a child subreaper: the prctl pair
// exists since Linux 3.4.
func probeSubreaper() Feature {
	var v int32
	// unix.Syscall, not unix.Prctl: the pointer must stay valid during
	// the call, which only the assembly entry guarantees.
	_, _, e := unix.Syscall(unix.SYS_PRCTL, unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0)
	if e != 0 {
		return Feature{Probed: true, Detail: "PR_GET_CHILD_SUBREAPER failed: " + os.NewSyscallError("prctl", e).Error()}
	}
	state := "this process is not a subreaper now; tether run makes itself one"
	if v != 0 {
		state = "this process is a subreaper already"
	}
	return Feature{Available: true, Probed: true, Detail: "PR_GET_CHILD_SUBREAPER works (" + state + ")"}
}

// probeClone3 starts /bin/true straight into a fresh leaf under parent
// (clone3 CLONE_INTO_CGROUP, Linux 5.7), checks where it landed, reaps it
// and removes the leaf. It reports whether the leaf had cgroup.kill. The
// error is non-nil only when the leaf could not be removed.
func probeClone3(parent string) (f Feature, hasKill bool, err error) {
	leaf, err := cgroup.Create(parent)
	if err != nil {
		return Feature{Detail: "not probed: cannot create a probe leaf: " + err.Error()}, false, nil
	}
	f.Probed = true
	defer func() {
		if rerr := removeLeaf(leaf); rerr != nil {
			err = fmt.Errorf("hostinfo: probe leaf left behind: %w", rerr)
		}
	}()
	_, kerr := os.Stat(filepath.Join(leaf.Path, "cgroup.kill"))
	hasKill = kerr == nil

	fd, release, err := leaf.StartFD()
	if err != nil {
		f.Detail = "cannot use the probe leaf: " + err.Error()
		return f, hasKill, nil
	}
	pidfd := -1
	cmd := exec.Command(probeTrue)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd, PidFD: &pidfd}
	err = cmd.Start()
	release()
	if err != nil {
		f.Detail = "starting " + probeTrue + " into " + leaf.Path + " failed: " + startWhy(err)
		return f, hasKill, nil
	}
	placed := placement(pidfd, leaf)
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
	werr := cmd.Wait()
	f.Available = true
	f.Detail = fmt.Sprintf("started %s straight into a fresh leaf of %s (%s)", probeTrue, parent, placed)
	if werr != nil {
		f.Detail += "; it exited: " + werr.Error()
	}
	return f, hasKill, nil
}

// startWhy explains a failed start into a leaf.
func startWhy(err error) string {
	switch {
	case errors.Is(err, unix.ENOSYS):
		return err.Error() + ": the kernel lacks clone3 (Linux 5.7+)"
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return err.Error() + ": the kernel requires write access to cgroup.procs of the common ancestor of our cgroup and the leaf"
	}
	return err.Error()
}

// placement says how the probe child's cgroup was checked.
func placement(pfd int, leaf *cgroup.Leaf) string {
	if pfd < 0 {
		return "placement not checked: no pidfd"
	}
	pi := pidfd.Info{Mask: pidfd.InfoCgroupID}
	if err := pidfd.GetInfo(pfd, &pi); err != nil || pi.Mask&pidfd.InfoCgroupID == 0 {
		return "placement not checked: no cgroup id from PIDFD_GET_INFO"
	}
	if pi.CgroupID != leaf.ID {
		return fmt.Sprintf("but it ran in cgroup id %d, not the leaf's %d", pi.CgroupID, leaf.ID)
	}
	return "its pidfd reported the leaf's cgroup id"
}

// removeLeaf removes a probe leaf whose one process was reaped. Reaping
// comes after the kernel reports the group empty, so the wait is a bound
// for safety, not an expected delay.
func removeLeaf(l *cgroup.Leaf) error {
	if _, err := l.WaitEmpty(5 * time.Second); err != nil {
		l.Close()
		return err
	}
	if err := l.Remove(); err != nil {
		l.Close()
		return err
	}
	return nil
}

// probeKill looks for cgroup.kill (Linux 5.14) in our cgroup. The root
// cgroup has none by design, so there the probe leaf tells (leafKill, nil
// when no leaf was made), else any child of the root.
func probeKill(v *V2, leafKill *bool) Feature {
	if v.Mount == "" {
		return Feature{Detail: "not probed: no cgroup v2 hierarchy is mounted"}
	}
	if v.Path != "/" && v.Path != "" {
		return hasFile(v.Dir)
	}
	if leafKill != nil {
		f := Feature{Available: *leafKill, Probed: true}
		if *leafKill {
			f.Detail = "our cgroup is the root, which has no cgroup.kill; the probe leaf had one"
		} else {
			f.Detail = "our cgroup is the root, which has no cgroup.kill; the probe leaf had none either (Linux 5.14+)"
		}
		return f
	}
	ents, _ := os.ReadDir(v.Mount)
	for _, e := range ents {
		if e.IsDir() {
			f := hasFile(filepath.Join(v.Mount, e.Name()))
			f.Detail = "our cgroup is the root, which has no cgroup.kill; looked in " + e.Name() + ": " + f.Detail
			return f
		}
	}
	return Feature{Detail: "not probed: our cgroup is the root, which has no cgroup.kill, and it has no child cgroup to look in"}
}

func hasFile(dir string) Feature {
	p := filepath.Join(dir, "cgroup.kill")
	if _, err := os.Stat(p); err != nil {
		return Feature{Probed: true, Detail: p + " is missing (Linux 5.14+): " + err.Error()}
	}
	return Feature{Available: true, Probed: true, Detail: p + " exists"}
}
