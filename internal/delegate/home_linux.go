package delegate

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tether-run/tether/internal/cgroup"
)

// ownDir returns the directory of this process's cgroup.
func ownDir() (string, error) {
	m, err := cgroup.Mount()
	if err != nil {
		return "", err
	}
	self, err := cgroup.Self(0)
	if err != nil {
		return "", err
	}
	return filepath.Join(m, self), nil
}

// Parent returns where this process's leaves go when none was named: the
// home it moved to; else, when it sits in the supervisor child of a
// delegated cgroup (a scope's layout), that cgroup; else its own cgroup
// when Check proves it ours.
func Parent(ctx context.Context) (Home, error) {
	if h := Entered(); h != nil {
		return *h, nil
	}
	own, err := ownDir()
	if err != nil {
		return Home{}, err
	}
	if h, ok := besideUs(ctx, own); ok {
		return h, nil
	}
	p, err := Check(ctx, own)
	if err != nil {
		return Home{}, err
	}
	return Home{Dir: own, Proof: p}, nil
}

// besideUs returns the parent of own as home when own is the supervisor
// child of a delegated cgroup: leaves then go beside the supervisor, in a
// cgroup without processes of its own.
func besideUs(ctx context.Context, own string) (Home, bool) {
	if filepath.Base(own) != SupervisorDir {
		return Home{}, false
	}
	parent := filepath.Dir(own)
	p, err := Check(ctx, parent)
	if err != nil {
		return Home{}, false
	}
	return Home{Dir: parent, Proof: p}, true
}

// Prepare finds the home for a run of this process and, where that is
// what it takes, moves the process: into a scope of its own when its
// cgroup is not delegated (or OwnScope asks for one), or into a child of
// its delegated cgroup when limits need that cgroup empty. It never moves
// the process out of a delegated subtree it is in unless OwnScope asks.
// On a host without systemd nothing moves and the home is our own cgroup.
//
// An error means no delegated home exists: the caller falls back to a
// weaker mechanism or refuses to start.
func Prepare(ctx context.Context, o PrepareOptions) (Home, error) {
	if h := Entered(); h != nil {
		return *h, nil
	}
	own, err := ownDir()
	if err != nil {
		return Home{}, err
	}
	if h, ok := besideUs(ctx, own); ok && !(o.OwnScope && Booted()) {
		return h, nil
	}
	if !Booted() {
		return Home{Dir: own, Proof: ProofNoManager}, nil
	}
	mg := &managers{}
	defer mg.close()
	proof, cerr := check(ctx, mg, own)
	if cerr == nil && !o.OwnScope {
		h := Home{Dir: own, Proof: proof}
		if o.Limits && !isRoot(own) {
			if err := enterChild(own); err != nil {
				// Leaves stay in the delegated subtree we are in; the
				// limits then report why their controllers are missing.
				h.Note = err.Error()
			} else {
				h.Moved = true
				entered.Store(&h)
			}
		}
		return h, nil
	}
	so := o.Scope
	so.StayInRoot = so.StayInRoot || !o.Limits
	s, serr := enterScope(ctx, mg, so)
	if serr == nil {
		return Home{Dir: s.Dir, Proof: ProofOwnScope, Scope: s, Moved: !so.StayInRoot}, nil
	}
	if cerr == nil {
		return Home{Dir: own, Proof: proof, Note: "no scope of its own: " + serr.Error()}, nil
	}
	return Home{}, fmt.Errorf("%w; no scope could be obtained either: %w", cerr, serr)
}

func isRoot(dir string) bool {
	m, err := cgroup.Mount()
	return err == nil && filepath.Clean(dir) == filepath.Clean(m)
}
