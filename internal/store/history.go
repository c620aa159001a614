//go:build unix || windows

package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tether-run/tether/internal/par"
	"github.com/tether-run/tether/registry"
)

// History (issue 27): each run of a name keeps its own files, keyed
// NAME@RUNID — logs/NAME@RUNID.log (and its generations), receipts/ and
// configs/NAME@RUNID.json — so that a name used again keeps what its
// earlier runs left. The newest run's record stays where Read finds it
// (records/NAME.json while live, ended/NAME.json once ended); a start
// moves the one before it aside, to ended/NAME@RUNID.json (Archive). '@'
// is outside the name policy, so no name is mistaken for a run.

// ErrNotEnded is returned by RemoveRun for a run that is live, or whose
// runtime dir or cgroup leaf is still there (a stop not confirmed:
// tether reap's to finish). Nothing was removed.
var ErrNotEnded = errors.New("store: run has not ended")

// CheckRunID refuses a run id that cannot name a run's files: the name
// policy's characters (registry.CheckName), as the run ids tether makes
// (32 hex digits) are.
func CheckRunID(id string) error {
	if !validRunID(id) {
		return fmt.Errorf("run id %q: use 1–%d of A-Z a-z 0-9 . _ -, starting with a letter or digit", id, registry.MaxName)
	}
	return nil
}

func validRunID(id string) bool { return registry.CheckName(id) == nil }

// runKey is the stem of the files of the run runID of name: NAME@RUNID,
// or NAME for a run id that cannot be in a file name (a run record of an
// embedder's contain.Cmd with a RunID of its own).
func runKey(name, runID string) string {
	if validRunID(runID) {
		return name + "@" + runID
	}
	return name
}

// LogOf returns the log of rec's run: the path its record names when it
// is one of the run's own (LogPath's, or NAME.log as tethers before
// issue 27 wrote it), else LogPath's.
func (r *Registry) LogOf(rec *registry.Record) string {
	return own(rec.Log, r.LogPath(rec.Name, rec.RunID), r.LogPath(rec.Name, ""))
}

// receiptOf is LogOf for the receipt.
func (r *Registry) receiptOf(rec *registry.Record) string {
	return own(rec.Receipt, r.ReceiptPath(rec.Name, rec.RunID), r.ReceiptPath(rec.Name, ""))
}

// own returns p if it is one of want, else want[0]: a path read from a
// record is used only where the registry itself would have put it.
func own(p string, want ...string) string {
	for _, w := range want {
		if p == w {
			return p
		}
	}
	return want[0]
}

// Archive keeps the newest ended run of name as an earlier run: it moves
// ended/NAME.json to ended/NAME@RUNID.json. A start calls it under Lock
// once it has claimed name, before it writes the new run's record (Write
// would remove the ended one). One without a usable run id (corrupt) is
// left to Write, which removes it as before.
func (r *Registry) Archive(name string) error {
	if err := registry.CheckName(name); err != nil {
		return err
	}
	rec, err := r.readAt("ended", name)
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrCorrupt) {
			return nil
		}
		return err
	}
	if !validRunID(rec.RunID) {
		return nil
	}
	return r.rename("ended", name+".json", runKey(name, rec.RunID)+".json")
}

// readStem reads the record in sub whose file is stem.json: NAME, or an
// earlier run NAME@RUNID, which must be that run's.
func (r *Registry) readStem(sub, stem string) (*registry.Record, error) {
	name, id, _ := strings.Cut(stem, "@")
	p := filepath.Join(r.Dir, sub, stem+".json")
	b, err := r.readIn(sub, stem+".json", maxRecord)
	if errors.Is(err, os.ErrNotExist) {
		return nil, registry.Errorf(name, registry.ErrNotFound, "not found")
	}
	if err != nil {
		return nil, err
	}
	var rec registry.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", registry.ErrCorrupt, p, err)
	}
	if rec.SchemaVersion != SchemaVersion || rec.Name != name || (id != "" && rec.RunID != id) {
		return nil, fmt.Errorf("%w: %s: schema %d, name %q, run %q", registry.ErrCorrupt, p, rec.SchemaVersion, rec.Name, rec.RunID)
	}
	return &rec, nil
}

// earlier lists the stems of the earlier runs in ended/ (NAME@RUNID), of
// name only unless name is "".
func (r *Registry) earlier(name string) ([]string, error) {
	ents, err := r.readDirNames("ended")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e, ".json")
		n, _, run := strings.Cut(stem, "@")
		if ok && run && !strings.HasPrefix(stem, ".") && (name == "" || n == name) {
			out = append(out, stem)
		}
	}
	sort.Strings(out)
	return out, nil
}

// readStems reads the ended records stems in parallel.
func (r *Registry) readStems(stems []string) ([]*registry.Record, []error) {
	got := make([]*registry.Record, len(stems))
	errAt := make([]error, len(stems))
	par.For(len(stems), func(i int) { got[i], errAt[i] = r.readStem("ended", stems[i]) })
	var recs []*registry.Record
	var errs []error
	for i := range stems {
		if errAt[i] != nil {
			errs = append(errs, errAt[i])
		} else {
			recs = append(recs, got[i])
		}
	}
	return recs, errs
}

// Runs returns the runs of name on record, newest first: the one Read
// returns (live, or the newest ended), then the earlier ones.
func (r *Registry) Runs(name string) ([]*registry.Record, []error) {
	if err := registry.CheckName(name); err != nil {
		return nil, []error{err}
	}
	var recs []*registry.Record
	var errs []error
	if rec, err := r.Read(name); err == nil {
		recs = append(recs, rec)
	} else if !errors.Is(err, registry.ErrNotFound) {
		errs = append(errs, err)
	}
	stems, err := r.earlier(name)
	if err != nil {
		return recs, append(errs, err)
	}
	more, errs2 := r.readStems(stems)
	recs = append(recs, more...)
	sortRuns(recs)
	return recs, append(errs, errs2...)
}

// History returns every run on record, live and ended, earlier runs of
// a name included: by name, each name's newest first.
func (r *Registry) History() ([]*registry.Record, []error) {
	recs, errs := r.List()
	stems, err := r.earlier("")
	if err != nil {
		return recs, append(errs, err)
	}
	more, errs2 := r.readStems(stems)
	recs = append(recs, more...)
	sortRuns(recs)
	return recs, append(errs, errs2...)
}

// Current reports whether rec is its name's current run, the one Read
// returns: the name's runtime dir is that run's. An earlier run kept when
// the name was used again (issue 27) names the same path, which the later
// run holds.
func (r *Registry) Current(rec *registry.Record) bool {
	cur, err := r.Read(rec.Name)
	return err == nil && cur.RunID == rec.RunID
}

// sortRuns sorts by name, then newest first.
func sortRuns(recs []*registry.Record) {
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].Name != recs[j].Name {
			return recs[i].Name < recs[j].Name
		}
		return recs[i].CreatedAt.After(recs[j].CreatedAt)
	})
}

// FindRun returns the run of name whose run id is id, or the one run
// whose run id starts with id (as docker takes a short container id).
func (r *Registry) FindRun(name, id string) (*registry.Record, error) {
	runs, errs := r.Runs(name)
	if len(runs) == 0 && len(errs) > 0 {
		return nil, errs[0]
	}
	if len(runs) == 0 {
		return nil, registry.Errorf(name, registry.ErrNotFound, "not found")
	}
	var found []*registry.Record
	for _, rec := range runs {
		if rec.RunID == id {
			return rec, nil
		}
		if id != "" && strings.HasPrefix(rec.RunID, id) {
			found = append(found, rec)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, registry.Errorf(name, registry.ErrNotFound, "no run %q (tether ls -a lists its runs)", id)
	}
	return nil, registry.Errorf(name, registry.ErrNotFound, "run %q is ambiguous: %d runs start with it; give more of it", id, len(found))
}

// Removed is a run removed (or, by a dry run, one that would be): its
// record and the files that went with it.
type Removed struct {
	Record *registry.Record
	// Files are the run's files: its record, its log's files, its
	// receipt, its configuration.
	Files []string
}

// RemoveRun removes the ended run runID of name: its record, log,
// receipt and configuration. A run that is live, or that still has its
// runtime dir or cgroup leaf (its stop was not confirmed), is refused
// with an error wrapping ErrNotEnded. It takes the registry's lock.
func (r *Registry) RemoveRun(name, runID string) (Removed, error) {
	if err := registry.CheckName(name); err != nil {
		return Removed{}, err
	}
	unlock, err := r.Lock()
	if err != nil {
		return Removed{}, err
	}
	defer unlock()
	if rec, err := r.readAt("records", name); err == nil && rec.RunID == runID {
		return Removed{}, registry.Errorf(name, ErrNotEnded, "run %s is %s: stop it first", runID, rec.State)
	}
	stem, newest := name, true
	rec, err := r.readAt("ended", name)
	if err == nil && rec.RunID != runID || errors.Is(err, registry.ErrNotFound) {
		stem, newest = runKey(name, runID), false
		rec, err = r.readStem("ended", stem)
	}
	if err != nil {
		return Removed{}, err
	}
	return r.removeRun(rec, stem, newest, false)
}

// removeRun removes rec's run (its record is ended/stem.json; newest: the
// one Read returns) unless something of it remains. Its files go first,
// its record last: a removal cut short leaves the record that names the
// rest. dry removes nothing.
func (r *Registry) removeRun(rec *registry.Record, stem string, newest, dry bool) (Removed, error) {
	if why := r.holding(rec, newest); why != "" {
		return Removed{}, registry.Errorf(rec.Name, ErrNotEnded, "run %s: %s", rec.RunID, why)
	}
	var files [][2]string // subdir, file
	log := r.LogOf(rec)
	for _, p := range LogFiles(log) {
		files = append(files, [2]string{"logs", filepath.Base(p)})
	}
	for _, p := range []string{r.receiptOf(rec), r.ConfigPath(rec.Name, rec.RunID)} {
		if _, err := os.Lstat(p); err == nil {
			files = append(files, [2]string{filepath.Base(filepath.Dir(p)), filepath.Base(p)})
		}
	}
	files = append(files, [2]string{"ended", stem + ".json"})
	out := Removed{Record: rec}
	for _, f := range files {
		if !dry {
			if err := r.remove(f[0], f[1]); err != nil {
				return out, err
			}
		}
		out.Files = append(out.Files, filepath.Join(r.Dir, f[0], f[1]))
	}
	return out, nil
}

// holding says what of rec's run remains that only its stop, or tether
// reap, may remove ("" if nothing): a live state, its runtime dir (the
// newest run's: an earlier run's name was claimed again, so its dir went),
// its cgroup leaf.
func (r *Registry) holding(rec *registry.Record, newest bool) string {
	if rec.Live() {
		return "it is " + rec.State + ": stop it first"
	}
	if _, err := os.Lstat(r.RuntimeDir(rec.Name)); newest && err == nil {
		return "its runtime dir " + r.RuntimeDir(rec.Name) + " remains (its stop was not confirmed): tether reap finishes it"
	}
	if _, err := os.Lstat(rec.Cgroup); rec.Cgroup != "" && err == nil {
		return "its cgroup leaf " + rec.Cgroup + " remains (its stop was not confirmed): tether reap finishes it"
	}
	return ""
}
