//go:build unix || windows

package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tether-run/tether/internal/par"
	"github.com/tether-run/tether/registry"
)

// Open opens (creating if needed) the registry at dir, checking that it
// and its subdirectories are safe. On Unix it first checks every
// directory on the way to dir (see DefaultDir) and keeps the state
// directory and its subdirectories open: what the registry creates,
// replaces or removes afterwards is relative to those, so a component of
// the path swapped later redirects nothing. Close releases them.
func Open(dir string) (*Registry, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("registry: state directory %q must be absolute", dir)
	}
	r, err := newRegistry(dir)
	if err != nil {
		return nil, err
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// subdirs are the subdirectories of a state directory.
var subdirs = []string{"records", "ended", "s", "logs", "receipts", "configs", "requests"}

// EnsureDir creates d inside the registry (0700; on Windows with the
// registry's protected DACL) if missing, then checks it.
func (r *Registry) EnsureDir(d string) error { return r.ensureDir(d) }

// ensureDirPath creates d (0700; on Windows with the registry's protected
// DACL) if missing, then checks it, by its path.
func (r *Registry) ensureDirPath(d string) error {
	err := r.checkDir(d)
	if !errors.Is(err, os.ErrNotExist) {
		return err // checked, or unsafe
	}
	if err := r.mkdirPrivate(d); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("registry: create %s: %w", d, err)
	}
	return r.checkDir(d)
}

// recordPath is where the record of name is kept: records/ while the
// session or run may have processes, ended/ once it has ended, so that
// whatever scans live records (reap, ls) does not pay for history.
func (r *Registry) recordPath(name string) string {
	return filepath.Join(r.Dir, "records", name+".json")
}

func (r *Registry) endedPath(name string) string {
	return filepath.Join(r.Dir, "ended", name+".json")
}

// LogPath returns where the output of the run runID of session name is
// kept (LogFiles lists it with its rotated generations): each run its
// own log, so a name used again keeps the earlier runs' (issue 27). Logs
// outlive the runtime dir.
func (r *Registry) LogPath(name, runID string) string {
	return filepath.Join(r.Dir, "logs", runKey(name, runID)+".log")
}

// ReceiptPath returns where the stop receipt of the run runID of session
// name is kept.
func (r *Registry) ReceiptPath(name, runID string) string {
	return filepath.Join(r.Dir, "receipts", runKey(name, runID)+".json")
}

// WriteReceipt stores the stop receipt of the run runID of name and
// returns its path. The write is atomic (readers see the old receipt or
// the new one, never a torn one, and a failed write leaves the old one),
// and a file planted in its place is replaced, never written through. Not
// synced, as records.
func (r *Registry) WriteReceipt(name, runID string, b []byte) (string, error) {
	if err := registry.CheckName(name); err != nil {
		return "", err
	}
	return r.ReceiptPath(name, runID), r.replace("receipts", runKey(name, runID)+".json", b)
}

// ConfigPath returns where the configuration an ended run of name was
// started with (its supervisor's spec) is kept, for tether inspect.
func (r *Registry) ConfigPath(name, runID string) string {
	return filepath.Join(r.Dir, "configs", runKey(name, runID)+".json")
}

// WriteConfig stores the configuration of the run runID of name, as
// WriteReceipt stores a receipt.
func (r *Registry) WriteConfig(name, runID string, b []byte) error {
	if err := registry.CheckName(name); err != nil {
		return err
	}
	return r.replace("configs", runKey(name, runID)+".json", b)
}

// RefusalPrefix begins the name of the receipt of each refused start in
// receipts/ (not-run-RUN_ID.json): no record names it, so `tether reap
// --prune` finds it by this prefix.
const RefusalPrefix = "not-run-"

// CheckDir applies the registry's safety rules to a directory inside it.
func (r *Registry) CheckDir(d string) error { return r.checkDir(d) }

// RequestsDir returns the directory stop requests are left in for
// supervisors (stop-*.json). It is the state dir's, not a session's
// runtime dir: the session's command is handed its runtime dir and may
// remove it, chmod it or swap it for a symlink, which lost a stop's
// --grace (issue 30; issue 22 made such a session stoppable).
func (r *Registry) RequestsDir() string { return filepath.Join(r.Dir, "requests") }

// PutRequest leaves the request file in RequestsDir, atomically (the
// supervisor never reads a torn one). Not synced: after a reboot there is
// no supervisor to read it.
func (r *Registry) PutRequest(file string, b []byte) error { return r.replace("requests", file, b) }

// RemoveRequest removes a request file PutRequest left; one already taken
// is not an error.
func (r *Registry) RemoveRequest(file string) error { return r.remove("requests", file) }

// RemoveLog removes file (a log's name, as LogPath gives it) from the logs
// dir.
func (r *Registry) RemoveLog(file string) error { return r.remove("logs", file) }

// ReadRequest reads a request file PutRequest left, without taking it.
func (r *Registry) ReadRequest(file string) ([]byte, error) {
	return r.readIn("requests", file, MaxRequest)
}

// MaxRequest bounds a request file read: a request is a few dozen bytes.
const MaxRequest = 64 << 10

// TakeRequests reads and removes the request files whose names begin
// with prefix, in name order. Any process of the user's can write there:
// each is read as records are (no symlink followed, no FIFO waited on,
// only the user's regular files, at most max bytes), and removed whether
// or not it could be read (issue 22).
func (r *Registry) TakeRequests(prefix string, max int64) [][]byte {
	names, _ := r.readDirNames("requests")
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		b, err := r.readIn("requests", n, max)
		r.remove("requests", n)
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// RuntimeDir returns the runtime directory of a session.
func (r *Registry) RuntimeDir(name string) string { return filepath.Join(r.Dir, "s", name) }

// Claim reserves name by creating its runtime directory exclusively, with
// tmp/ and sock/ inside, and returns the directory.
func (r *Registry) Claim(name string) (string, error) {
	if err := registry.CheckName(name); err != nil {
		return "", err
	}
	d := r.RuntimeDir(name)
	if err := r.claim(name); err != nil {
		switch {
		case errors.Is(err, registry.ErrUnsafe):
			return "", err // a symlink or another user's directory in its place
		case errors.Is(err, os.ErrExist):
			return "", registry.Errorf(name, registry.ErrExists, "name in use (runtime dir %s exists): stop it first, or choose another name", d)
		}
		return "", fmt.Errorf("registry: claim %q: %w", name, err)
	}
	return d, nil
}

// Release removes a session's runtime directory (after a confirmed stop).
// A missing one is no error; one that is not the user's own directory is
// refused, and a symlink inside is removed, never followed.
func (r *Registry) Release(name string) error {
	if err := registry.CheckName(name); err != nil {
		return err
	}
	return r.release(name)
}

// Write stores rec atomically.
func (r *Registry) Write(rec *registry.Record) error {
	b, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	// Atomic, not synced: a record describes processes of this boot, and a
	// machine crash ends them all and changes the boot id (reap then
	// cleans the record), so durability would buy nothing and cost an
	// fsync on every step of every run.
	dst, other := "records", "ended"
	if !rec.Live() {
		dst, other = other, dst
	}
	if err := r.replace(dst, rec.Name+".json", b); err != nil {
		return err
	}
	return r.remove(other, rec.Name+".json")
}

// Create writes the first record of a live run under a name no record has
// had (a fresh random one): exclusively, failing if a record of that name
// exists, and with nothing to remove from ended/. Readers see no record or
// all of it.
func (r *Registry) Create(rec *registry.Record) error {
	if !rec.Live() {
		return fmt.Errorf("registry: create %q: a new record must be live, not %s", rec.Name, rec.State)
	}
	b, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	return r.create("records", rec.Name+".json", b)
}

// SchemaVersion is the version of the record format it writes and reads.
const SchemaVersion = 1

// encodeRecord checks rec's name and returns the record file's content.
func encodeRecord(rec *registry.Record) ([]byte, error) {
	if err := registry.CheckName(rec.Name); err != nil {
		return nil, err
	}
	rec.SchemaVersion = SchemaVersion
	if rec.Argv == nil {
		rec.Argv = []string{}
	}
	b, err := appendRecord(make([]byte, 0, 1024), rec)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Delete removes the record of name (a run whose stop was confirmed). A
// directory in its place is reported, never removed.
func (r *Registry) Delete(name string) error {
	if err := registry.CheckName(name); err != nil {
		return err
	}
	if err := r.remove("records", name+".json"); err != nil {
		return err
	}
	return r.remove("ended", name+".json")
}

// maxRecord bounds a record file; a larger one is corrupt.
const maxRecord = 1 << 20

// Read loads the record of name, refusing files that are not ours.
func (r *Registry) Read(name string) (*registry.Record, error) {
	if err := registry.CheckName(name); err != nil {
		return nil, err
	}
	rec, err := r.readAt("records", name)
	if errors.Is(err, registry.ErrNotFound) {
		rec, err = r.readAt("ended", name)
	}
	return rec, err
}

// readAt reads the record of name in the subdirectory sub.
func (r *Registry) readAt(sub, name string) (*registry.Record, error) { return r.readStem(sub, name) }

// List reads every record, live and ended, sorted by name. Records that
// cannot be read are returned as errors beside the good ones.
func (r *Registry) List() ([]*registry.Record, []error) {
	live, errs := r.list("records")
	ended, errs2 := r.list("ended")
	recs := append(live, ended...)
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	return recs, append(errs, errs2...)
}

// ListLive reads the records of sessions and runs that may still have
// processes.
func (r *Registry) ListLive() ([]*registry.Record, []error) { return r.list("records") }

// Names lists the record names in the live ("records") or ended ("ended")
// directory, sorted, without reading them. Dot-files (temp files) are
// skipped.
func (r *Registry) Names(dir string) ([]string, error) {
	ents, err := r.readDirNames(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		// NAME@RUNID.json: an earlier run of NAME (history.go), not a name.
		if n, ok := strings.CutSuffix(e, ".json"); ok && !strings.HasPrefix(n, ".") && !strings.Contains(n, "@") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

func (r *Registry) list(dir string) ([]*registry.Record, []error) {
	names, err := r.Names(dir)
	if err != nil {
		return nil, []error{err}
	}
	// Records are independent files: read them in parallel.
	got := make([]*registry.Record, len(names))
	errAt := make([]error, len(names))
	par.For(len(names), func(i int) { got[i], errAt[i] = r.Read(names[i]) })
	var recs []*registry.Record
	var errs []error
	for i := range names {
		if errAt[i] != nil {
			errs = append(errs, errAt[i])
		} else {
			recs = append(recs, got[i])
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	return recs, errs
}

// readBounded reads f (the file p, of size bytes when it was opened), at
// most max bytes, or fails wrapping registry.ErrCorrupt. One read sized by the
// file's size (plus one byte to see growth), not a growing buffer: reap
// reads thousands of records.
func readBounded(f *os.File, p string, size, max int64) ([]byte, error) {
	if size > max {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", registry.ErrCorrupt, p, max)
	}
	buf := make([]byte, size+1)
	n, err := io.ReadFull(f, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: p, Err: err}
	}
	if int64(n) > max {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", registry.ErrCorrupt, p, max)
	}
	return buf[:n], nil
}
