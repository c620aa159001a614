package hostinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/tether-run/tether/internal/delegate"

	"golang.org/x/sys/unix"
)

func probe(o Options) (Report, error) {
	r := newReport(runtime.GOOS)
	r.Supported = true
	r.UID = os.Getuid()
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		r.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	probeCgroups(&r, o)
	err := probeFeatures(&r)
	r.Systemd = probeSystemd(o.RuntimeDir)
	decide(&r)
	return r, err
}

// probeSystemd looks for a user systemd instance: its runtime directory
// under $XDG_RUNTIME_DIR, which exists while the user's manager runs.
func probeSystemd(runtimeDir string) Systemd {
	s := Systemd{Booted: delegate.Booted(), ScopeControllers: []string{}}
	if s.Booted {
		m, err := delegate.Reachable()
		s.Manager, s.ManagerReachable = string(m), err == nil
		if err != nil {
			s.ManagerError = err.Error()
		} else {
			s.ScopeControllers = delegate.ScopeControllers(m)
		}
	}
	if runtimeDir != "" {
		st, err := os.Stat(filepath.Join(runtimeDir, "systemd"))
		s.UserManager = err == nil && st.IsDir()
	}
	s.SystemdRun, _ = exec.LookPath("systemd-run")
	return s
}
