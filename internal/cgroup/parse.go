package cgroup

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// mount is one line of /proc/PID/mountinfo, the fields tether reads.
type mount struct {
	point, fstype, superOpts string
}

// mounts parses /proc/PID/mountinfo:
// id parent major:minor root mountpoint opts [optional...] - fstype source superopts
func mounts(b []byte) []mount {
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		for i := 5; i+3 < len(f); i++ {
			if f[i] == "-" {
				// The kernel writes absolute clean points; anything else
				// is not a mount tether may join paths to.
				if p := unescapeOctal(f[4]); filepath.IsAbs(p) && filepath.Clean(p) == p {
					out = append(out, mount{point: p, fstype: f[i+1], superOpts: f[i+3]})
				}
				break
			}
		}
	}
	return out
}

// ParseMountinfo returns the mount point of the first cgroup2 filesystem in
// the contents of /proc/PID/mountinfo, or "" when there is none.
func ParseMountinfo(b []byte) string {
	for _, m := range mounts(b) {
		if m.fstype == "cgroup2" {
			return m.point
		}
	}
	return ""
}

// unescapeOctal undoes the \NNN escapes mountinfo uses for space, tab,
// newline and backslash in paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}

// ParseProcCgroup returns the cgroup v2 path (the "0::" line) from the
// contents of /proc/PID/cgroup.
func ParseProcCgroup(b []byte) (string, error) {
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			p = strings.TrimSuffix(p, " (deleted)")
			// Clean, so that joining it to the mount cannot leave it.
			if p == "" || p[0] != '/' || filepath.Clean(p) != p {
				return "", fmt.Errorf("cgroup: malformed v2 line %q", line)
			}
			return p, nil
		}
	}
	return "", ErrNoV2
}

// Events is the parsed content of cgroup.events.
type Events struct {
	Populated bool
	Frozen    bool
}

// ParseEvents parses cgroup.events.
func ParseEvents(b []byte) (Events, error) {
	var ev Events
	seen := false
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		switch k {
		case "populated":
			ev.Populated, seen = v == "1", true
		case "frozen":
			ev.Frozen = v == "1"
		}
	}
	if !seen {
		return ev, fmt.Errorf("cgroup: no populated key in cgroup.events %q", b)
	}
	return ev, nil
}

// ParsePids parses cgroup.procs: one pid a line.
func ParsePids(b []byte) ([]int, error) {
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("cgroup: bad pid %q in cgroup.procs", f)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

// CPUStat is the always-present part of cpu.stat, in microseconds.
type CPUStat struct {
	UsageUsec  uint64 `json:"usage_usec"`
	UserUsec   uint64 `json:"user_usec"`
	SystemUsec uint64 `json:"system_usec"`
}

// ParseCPUStat parses cpu.stat; unknown keys are ignored.
func ParseCPUStat(b []byte) (CPUStat, error) {
	var st CPUStat
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return st, fmt.Errorf("cgroup: bad value %q for %s in cpu.stat", v, k)
		}
		switch k {
		case "usage_usec":
			st.UsageUsec = n
		case "user_usec":
			st.UserUsec = n
		case "system_usec":
			st.SystemUsec = n
		}
	}
	return st, nil
}
