package budget

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tether-run/tether/receipt"
)

// Outcome reads what the group did against its budget from the counters of
// the controllers in use. Call it after the group stopped and before the
// cgroups are removed. It is also stored in the Budget's receipt.
func (b *Budget) Outcome() *receipt.Outcome {
	o := &receipt.Outcome{Sources: []string{}}
	read := func(d Dir, file string) map[string]int64 {
		s, err := d.ReadFile(file)
		if err != nil {
			return nil
		}
		o.Sources = append(o.Sources, where(d, file))
		return keyed(s)
	}
	if d, ok := b.dirs["memory"]; ok {
		if b.backend["memory"] == "v2" {
			if s, err := d.ReadFile("memory.peak"); err == nil {
				o.MemoryPeakBytes, _ = strconv.ParseInt(s, 10, 64)
				o.Sources = append(o.Sources, where(d, "memory.peak"))
			}
			ev := read(d, "memory.events")
			o.OOMKills, o.MemoryLimitHits = ev["oom_kill"], ev["max"]
		} else {
			if s, err := d.ReadFile("memory.max_usage_in_bytes"); err == nil {
				o.MemoryPeakBytes, _ = strconv.ParseInt(s, 10, 64)
				o.Sources = append(o.Sources, where(d, "memory.max_usage_in_bytes"))
			}
			o.OOMKills = read(d, "memory.oom_control")["oom_kill"]
			if s, err := d.ReadFile("memory.failcnt"); err == nil {
				o.MemoryLimitHits, _ = strconv.ParseInt(s, 10, 64)
				o.Sources = append(o.Sources, where(d, "memory.failcnt"))
			}
		}
	}
	if d, ok := b.dirs["pids"]; ok {
		o.PidsLimitHits = read(d, "pids.events")["max"]
	}
	if d, ok := b.dirs["cpu"]; ok {
		st := read(d, "cpu.stat")
		o.CPUThrottled = st["nr_throttled"]
		if b.backend["cpu"] == "v2" {
			o.CPUThrottledUsec = st["throttled_usec"]
		} else {
			o.CPUThrottledUsec = st["throttled_time"] / 1000 // ns in v1
		}
	}
	b.rec.Outcome = o
	return o
}

// keyed parses "key value" lines.
func keyed(s string) map[string]int64 {
	m := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				m[f[0]] = n
			}
		}
	}
	return m
}

// Remover is a v1 leaf that can be removed.
type Remover interface{ Remove() error }

// Remove removes the v1 leaves the budget created. The group must be empty.
func (b *Budget) Remove() error {
	if b == nil {
		return nil
	}
	var errs []error
	for _, d := range b.v1 {
		if r, ok := d.(Remover); ok {
			errs = append(errs, r.Remove())
		}
	}
	b.v1 = map[string]Dir{}
	return errors.Join(errs...)
}
