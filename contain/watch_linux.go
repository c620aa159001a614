package contain

import (
	"os"
	"os/exec"

	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/internal/watch"
	"github.com/tether-run/tether/registry"
)

// noWatchEnv, set to anything in the environment, keeps runs from using
// a watcher: what a dead owner leaves then runs on until tether reap (the
// fault tests of reap use it to test that path).
const noWatchEnv = "TETHER_NO_WATCH"

// A program started as a watcher (internal/watch) is one before its main
// runs: every program that runs groups can watch over them, tether or
// not.
//
// It serves on a goroutine of its own: init runs with the main goroutine
// locked to the main thread, and each wake of a locked goroutine is a
// hand-off between threads (0.8 ms of CPU per owner, measured).
func init() {
	if _, ok := os.LookupEnv(watch.Env); ok {
		go func() {
			watch.Serve()
			os.Exit(0)
		}()
		select {}
	}
	watch.Spawn = spawnWatcher
}

// spawnWatcher starts a watcher as a child whose exit status is
// os/exec's (owned): neither the orphan sweep nor the fallback's walk,
// which claim our other children, ever take it for a member.
func spawnWatcher(cmd *exec.Cmd) (func(), error) {
	owned.Lock()
	defer owned.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	owned.pids[pid] = true
	return func() {
		owned.Lock()
		delete(owned.pids, pid)
		owned.Unlock()
	}, nil
}

// watchOwner tells a watcher about the group before anything can run in
// it unwatched — with a leaf, before the command is spawned; in the
// fallback, once its main process is known — so that the death of this
// program, SIGKILL included, stops the group (issue 24). No watcher is a
// caveat of the run, not a reason to refuse it.
func (c *Cmd) watchOwner() {
	if os.Getenv(noWatchEnv) != "" {
		c.rec.Caveats = append(c.rec.Caveats, "the group is not watched ("+noWatchEnv+" is set): if this program dies, it runs on until tether reap")
		return
	}
	g := watch.Group{Receipt: c.hooks.WatchReceipt, GraceMS: min(c.graceNow(), watch.Grace).Milliseconds()}
	switch {
	case c.hooks.WatchRecord != "":
		// A session's: its supervisor keeps the record.
		g.Registry, g.Name, g.Reason = c.hooks.WatchRegistry, c.hooks.WatchRecord, "supervisor-died"
	case c.track != nil:
		g.Registry, g.Name = c.track.reg.Dir, c.track.rec.Name
	default:
		g.Record = c.watchRecord()
	}
	sock := g.Registry
	if sock == "" {
		sock, _ = store.DefaultDir(os.Getenv) // the user's watcher
	}
	id, err := watch.Add(sock, g)
	if err != nil {
		c.rec.Caveats = append(c.rec.Caveats, "the group is not watched: if this program dies, it runs on until tether reap: "+err.Error())
		return
	}
	c.sys.watchID = id
}

// unwatchOwner tells the watcher the group's stop is over.
func (c *Cmd) unwatchOwner() {
	if c.sys.watchID != 0 {
		watch.Done(c.sys.watchID)
		c.sys.watchID = 0
	}
}

// watchRecord describes, to a watcher, a group that has no record in a
// registry, as its record would.
func (c *Cmd) watchRecord() *registry.Record {
	r := &registry.Record{Name: "run-" + randid.Hex(6), Kind: "run", RunID: c.RunID, Argv: c.rec.Argv, Cwd: c.rec.Cwd, Owner: "none", Until: string(ReasonMainExit)}
	store.SetContainment(r, &c.rec)
	r.StopSignal = stop.SignalName(c.StopSignal)
	if c.sys.main != nil {
		r.Main, r.Marker = c.sys.main.Token.String(), c.marker
	}
	return r
}
