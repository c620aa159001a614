package reap

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tether-run/tether/internal/par"
	"github.com/tether-run/tether/internal/sessionlog"
	"github.com/tether-run/tether/internal/store"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Run reaps the registry reg.
func Run(reg *store.Registry, o Options) *Report {
	t0 := time.Now()
	rep, o := newReport(o)
	runtimeDirs := map[string]bool{}
	if ents, err := os.ReadDir(filepath.Join(reg.Dir, "s")); err == nil {
		for _, e := range ents {
			runtimeDirs[e.Name()] = true
		}
	}
	names, err := recordNames(reg, runtimeDirs, o)
	if err != nil {
		rep.Actions = append(rep.Actions, Action{Class: Unresolvable, Plan: "read the records directory", Error: err.Error()})
	}
	// Records are independent: classify them in parallel (reads of
	// records, /proc, the cgroupfs), then act on them in parallel too
	// (each action touches only its own record, leaf and dirs).
	type result struct {
		a    Action
		rec  *registry.Record
		keep bool
	}
	results := make([]result, len(names))
	par.For(len(names), func(i int) {
		a, rec := classify(reg, names[i], o, runtimeDirs)
		results[i] = result{a: a, rec: rec}
	})
	referenced := map[string]bool{}
	var todo []int
	for i, res := range results {
		if res.rec != nil && res.rec.Cgroup != "" {
			referenced[res.rec.Cgroup] = true
		}
		if res.rec != nil {
			for _, p := range res.rec.V1Cgroups {
				referenced[p] = true
			}
		}
		c := res.a.Class
		if c == Supervised || (o.Quick && c != DeadLeaf && c != DeadFallback && c != DeadEmpty && c != OtherBoot) {
			results[i].keep = !o.Quick
			continue
		}
		results[i].keep = true
		if !o.DryRun {
			todo = append(todo, i)
		}
	}
	par.For(len(todo), func(j int) {
		r := &results[todo[j]]
		act(reg, r.rec, &r.a, o)
	})
	for _, res := range results {
		if res.keep {
			rep.Actions = append(rep.Actions, res.a)
		}
	}
	if o.Prune > 0 {
		rep.Actions = append(rep.Actions, pruneEarlier(reg, o)...)
	}
	if !o.Quick {
		rep.Actions = append(rep.Actions, stale(reg, names, o)...)
		rep.Actions = append(rep.Actions, pruneRefusals(reg, o)...)
		rep.OrphanLeaves = append(orphanLeaves(reg, referenced, o), orphanV1Leaves(referenced, o)...)
	}
	rep.DurationMS = time.Since(t0).Milliseconds()
	return rep
}

// recordNames lists the records to classify: every live record, and the
// ended ones that still have a runtime dir (or all of them when pruning).
// Ended records are otherwise history, and reading them would make every
// reap pay for it.
func recordNames(reg *store.Registry, runtimeDirs map[string]bool, o Options) ([]string, error) {
	names, err := reg.Names("records")
	if err != nil {
		return nil, err
	}
	if o.Quick {
		return names, nil
	}
	ended, err := reg.Names("ended")
	if err != nil {
		return names, err
	}
	for _, n := range ended {
		if o.Prune > 0 || runtimeDirs[n] {
			names = append(names, n)
		}
	}
	return names, nil
}

// classify decides what a record is, without acting.
func classify(reg *store.Registry, name string, o Options, runtimeDirs map[string]bool) (Action, *registry.Record) {
	rec, a, ok := readRecord(reg, name)
	if !ok {
		return a, nil
	}
	if !rec.Live() && rec.Cgroup != "" && exists(rec.Cgroup) && !supervisorAlive(rec) {
		// Ended on record, but its leaf is still there: a supervisor that
		// died before it could stop the group (or confirm the stop).
		if l, err := cgroup.OpenLeaf(rec.Cgroup, rec.CgroupID); err == nil {
			l.Close()
			a.Class, a.Plan = DeadLeaf, "stop the leaf "+rec.Cgroup+" (id checked): the record says ended but the leaf remains"
			return a, rec
		}
	}
	if !rec.Live() {
		a.Class, a.Plan = Ended, "nothing left of it"
		if runtimeDirs[name] {
			a.Plan = "sweep what is left of it (runtime dir)"
		}
		if o.Prune > 0 && time.Since(rec.UpdatedAt) > o.Prune {
			a.Plan = "delete the record, its log and receipt (older than --prune)"
		}
		return a, rec
	}
	sup, err := identity.Parse(rec.Supervisor)
	if err != nil {
		if rec.State == registry.StateStarting && time.Since(rec.CreatedAt) < time.Minute {
			a.Class, a.Plan = Supervised, "leave it: still starting"
			return a, rec
		}
		a.Class, a.Plan, a.Error = Unresolvable, "leave it: no supervisor identity recorded", fmt.Sprint(err)
		return a, rec
	}
	boot, _ := identity.BootID()
	if sup.BootID != boot {
		a.Class, a.Plan = OtherBoot, "clean the record and its dirs: it is from boot "+sup.BootID
		return a, rec
	}
	h, err := identity.Open(sup)
	if err == nil {
		h.Close()
		a.Class, a.Plan = Supervised, "leave it: its supervisor is alive"
		return a, rec
	}
	if !errors.Is(err, identity.ErrGone) && !errors.Is(err, identity.ErrMismatch) {
		a.Class, a.Plan, a.Error = Unresolvable, "leave it: cannot tell whether its supervisor lives", err.Error()
		return a, rec
	}
	switch {
	case rec.Cgroup != "":
		l, err := cgroup.OpenLeaf(rec.Cgroup, rec.CgroupID)
		switch {
		case errors.Is(err, os.ErrNotExist):
			a.Class, a.Plan = DeadEmpty, "mark it stopped: its supervisor and its leaf are gone"
		case errors.Is(err, cgroup.ErrNotSame):
			a.Class, a.Plan, a.Error = Unresolvable, "leave it: another cgroup is at the recorded path", err.Error()
		case err != nil:
			a.Class, a.Plan, a.Error = Unresolvable, "leave it: the leaf cannot be opened", err.Error()
		default:
			l.Close()
			a.Class, a.Plan = DeadLeaf, "stop the leaf "+rec.Cgroup+" (id checked), then mark it stopped"
		}
	case rec.Main != "":
		a.Class, a.Plan = DeadFallback, "stop the recorded main process if its token still matches; descendants cannot be proven"
	default:
		a.Class, a.Plan = DeadEmpty, "mark it stopped: nothing of it is left to prove (no leaf, no recorded process)"
	}
	return a, rec
}

// act carries out a's plan.
func act(reg *store.Registry, rec *registry.Record, a *Action, o Options) {
	var err error
	switch a.Class {
	case Corrupt:
		err = quarantine(reg, a.Name, a.Error)
	case Ended:
		if a.Plan == "nothing left of it" {
			a.Done = true
			return
		}
		err = sweep(reg, rec, o)
	case OtherBoot:
		err = finishRecord(reg, rec, "reboot", nil)
	case DeadEmpty:
		err = removeV1(rec)
		if err == nil {
			err = finishRecord(reg, rec, "supervisor-died", nil)
		}
	case DeadLeaf, DeadFallback:
		stop := stopLeaf
		if a.Class == DeadFallback {
			stop = stopMain
		}
		var r *receipt.Receipt
		r, err = stop(rec, o)
		a.Receipt = r
		if err == nil && r.StopConfirmed {
			// The group is gone: its v1 leaves are empty and go too.
			err = removeV1(rec)
		}
		if err == nil {
			err = finishRecord(reg, rec, "reaped", r)
		}
	default:
		return
	}
	a.Done = err == nil
	if err != nil {
		a.Error = err.Error()
	}
}

// sweep removes what an ended session left (its runtime dir), and prunes
// old records.
func sweep(reg *store.Registry, rec *registry.Record, o Options) error {
	err := reg.Release(rec.Name)
	if o.Prune > 0 && time.Since(rec.UpdatedAt) > o.Prune {
		_, rerr := reg.RemoveRun(rec.Name, rec.RunID)
		err = errors.Join(err, rerr)
	}
	return err
}

// pruneEarlier prunes, as --prune asks, the ended runs the records above
// did not cover: the earlier runs of names used again (issue 27), each
// name's newest being classified and swept with the rest.
func pruneEarlier(reg *store.Registry, o Options) []Action {
	removed, errs := reg.Prune(store.Retention{MaxAge: o.Prune}, time.Now(), o.DryRun)
	var out []Action
	for _, rm := range removed {
		rec := rm.Record
		if cur, err := reg.Read(rec.Name); o.DryRun && err == nil && cur.RunID == rec.RunID {
			continue // the newest: planned above
		}
		out = append(out, Action{Name: rec.Name, Kind: rec.Kind, Class: Ended, Plan: "delete the earlier run " + rec.RunID + ", its log and receipt (older than --prune)", Done: !o.DryRun})
	}
	for _, err := range errs {
		out = append(out, Action{Class: Unresolvable, Plan: "leave it: an ended record cannot be read", Error: err.Error()})
	}
	return out
}

// supervisorAlive reports whether the record's supervisor is provably
// alive.
func supervisorAlive(rec *registry.Record) bool { return identity.Check(rec.Supervisor) == nil }

// stale finds runtime dirs without a record and temp files of interrupted
// record writes; those older than StaleAge are removed (unless dry-run).
func stale(reg *store.Registry, names []string, o Options) []Action {
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}

	var out []Action
	consider := func(name, kind, path, what string, remove func() error) {
		st, err := os.Lstat(path)
		if err != nil {
			return
		}
		a := Action{Name: name, Kind: kind, Class: Stale}
		if age := time.Since(st.ModTime()); age < StaleAge {
			a.Plan = fmt.Sprintf("leave %s %s for now: %s old, may belong to a start in flight", what, path, age.Round(time.Second))
		} else {
			a.Plan = "remove " + what + " " + path
			if !o.DryRun {
				if err := remove(); err != nil {
					a.Error = err.Error()
				} else {
					a.Done = true
				}
			}
		}
		out = append(out, a)
	}
	if ents, err := os.ReadDir(filepath.Join(reg.Dir, "s")); err == nil {
		for _, e := range ents {
			name := e.Name()
			if !have[name] && registry.CheckName(name) == nil && !exists(filepath.Join(reg.Dir, "ended", name+".json")) {
				consider(name, "", reg.RuntimeDir(name), "runtime dir without a record", func() error { return reg.Release(name) })
			}
		}
	}
	for _, dir := range []string{"records", "ended", "requests"} {
		ents, err := os.ReadDir(filepath.Join(reg.Dir, dir))
		if err != nil {
			continue
		}
		for _, e := range ents {
			n, kind := e.Name(), ""
			if dir == "requests" {
				kind = "request"
			}
			p := filepath.Join(reg.Dir, dir, n)
			switch {
			case strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp"):
				consider(n, kind, p, "temp file of an interrupted write", func() error { return os.Remove(p) })
			case dir == "requests" && e.Type().IsRegular() && !requestTaker(reg, n):
				consider(n, kind, p, "stop request no supervisor will take", func() error { return reg.RemoveRequest(n) })
			}
		}
	}
	// The log of a start whose client and supervisor were both killed
	// before the name was claimed (the supervisor opens it beside the
	// claim): no record names its run, and it holds no output.
	if ents, err := os.ReadDir(filepath.Join(reg.Dir, "logs")); err == nil {
		for _, e := range ents {
			stem, isLog := strings.CutSuffix(e.Name(), ".log")
			name, runID, ok := strings.Cut(stem, "@")
			if !isLog || !ok || !e.Type().IsRegular() || registry.CheckName(name) != nil || store.CheckRunID(runID) != nil || runNamed(reg, name, runID) {
				continue
			}
			file, p := e.Name(), filepath.Join(reg.Dir, "logs", e.Name())
			if sessionlog.Unwritten(p) {
				consider(file, "log", p, "log of a start that never claimed its name", func() error { return reg.RemoveLog(file) })
			}
		}
	}
	return out
}

// runNamed reports whether a record names the run runID of name: it has
// a receipt, or it is one of the name's runs on record (Runs: the live
// record or the newest ended, then the earlier ones).
func runNamed(reg *store.Registry, name, runID string) bool {
	if exists(reg.ReceiptPath(name, runID)) {
		return true
	}
	runs, errs := reg.Runs(name)
	for _, rec := range runs {
		if rec.RunID == runID {
			return true
		}
	}
	return len(errs) > 0 // a run that cannot be read may be it
}

// requestTaker reports whether the stop request file in the requests dir
// names a supervisor that provably lives, which takes it at its next
// wake-up. A live supervisor takes its requests at the wake-up that
// follows each, and the stop that left one removes it once done: one that
// stays was left by a stop killed in its wait, for a supervisor that was
// gone (or ended) before it took it.
func requestTaker(reg *store.Registry, file string) bool {
	b, err := reg.ReadRequest(file)
	if err != nil {
		return false
	}
	var req struct {
		Supervisor string `json:"supervisor"`
	}
	return json.Unmarshal(b, &req) == nil && req.Supervisor != "" && identity.Check(req.Supervisor) == nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// classifyOne is classify for one record, outside a Run.
func classifyOne(reg *store.Registry, name string, o Options) (Action, *registry.Record) {
	return classify(reg, name, o, map[string]bool{name: exists(reg.RuntimeDir(name))})
}

// actOne is act for one record, outside a Run.
func actOne(reg *store.Registry, rec *registry.Record, a *Action, o Options) { act(reg, rec, a, o) }
