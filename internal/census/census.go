// Package census counts the bytes under a path for a storage ceiling
// (--storage-max): the sizes of the regular files there, found without
// following a symlink, within a time bound. A census that cannot complete
// is an error, never a smaller count: a ceiling fails closed.
package census

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

var (
	// ErrStorage is wrapped by every error of Admit (a *Refused): a
	// ceiling refused the start (ErrOver) or could not be checked.
	ErrStorage = errors.New("census: storage ceiling")
	// ErrOver is wrapped when a census found more bytes than the ceiling
	// allows.
	ErrOver = errors.New("census: over the storage ceiling")
	// ErrSlow is wrapped when a census did not finish within its bound.
	ErrSlow = errors.New("census: too slow")
	// ErrSymlink is returned when the path itself is a symlink: it is not
	// followed, so there is nothing to count.
	ErrSymlink = errors.New("census: a symlink, not followed")
)

// Bound is how long one census may take before it fails (ErrSlow).
const Bound = 5 * time.Second

// Every is the interval between the censuses while a run goes on.
const Every = time.Second

// Count returns the bytes of the regular files under path (path itself
// when it is a regular file), not following symlinks: neither path
// itself nor any below it, nor out of path (an os.Root holds the walk in
// it, also against a directory swapped for a symlink mid-walk). Any
// entry that cannot be read fails the census, as does one that takes
// longer than bound; a file removed during it counts nothing.
func Count(path string, bound time.Duration) (int64, error) {
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return 0, err
	case st.Mode()&fs.ModeSymlink != 0:
		return 0, fmt.Errorf("%s: %w", path, ErrSymlink)
	case st.Mode().IsRegular():
		return st.Size(), nil
	case !st.IsDir():
		return 0, nil
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	deadline := time.Now().Add(bound)
	var n int64
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != "." {
				return nil // removed since its directory was read
			}
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s: not done after %s", ErrSlow, path, bound)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("census of %s: %w", path, err)
	}
	return n, nil
}

// Admit takes the first census of each ceiling, before the command
// starts, and returns the figures for the receipt. It fails with a
// *Refused when a path is already over its ceiling (ErrOver) or its
// census cannot complete.
func Admit(ceilings []limits.Storage) ([]receipt.Storage, error) {
	if len(ceilings) == 0 {
		return nil, nil
	}
	out := make([]receipt.Storage, 0, len(ceilings))
	var errs []error
	for _, c := range ceilings {
		s := receipt.Storage{Path: c.Path, LimitBytes: c.Max, Censuses: 1}
		n, err := Count(c.Path, Bound)
		s.BeforeAt = time.Now().UTC()
		switch {
		case err != nil:
			s.Before, s.Peak, s.Error = -1, -1, err.Error()
			errs = append(errs, &refusal{cause: err, msg: fmt.Sprintf("--storage-max %s: the census cannot complete, and a ceiling that cannot be checked refuses the start: %v", c.Path, err)})
		default:
			s.Before, s.Peak, s.PeakAt = n, n, s.BeforeAt
			if n > c.Max {
				s.Exceeded = true
				errs = append(errs, &refusal{cause: ErrOver, msg: fmt.Sprintf("--storage-max %s=%s: %s already holds %s (%d bytes)", c.Path, limits.FormatSize(c.Max), c.Path, limits.FormatSize(n), n)})
			}
		}
		s.After = -1
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, &Refused{Figures: out, Err: errors.Join(errs...)}
	}
	return out, nil
}

// Refused is Admit's error: the figures of every census, and why the
// start is refused. It is ErrStorage.
type Refused struct {
	Figures []receipt.Storage
	Err     error
}

func (e *Refused) Error() string   { return e.Err.Error() }
func (e *Refused) Unwrap() []error { return []error{ErrStorage, e.Err} }

// refusal is one ceiling's refusal: it reads as its message, and is
// its cause.
type refusal struct {
	msg   string
	cause error
}

func (e *refusal) Error() string   { return e.msg }
func (e *refusal) Unwrap() []error { return []error{ErrStorage, e.cause} }
