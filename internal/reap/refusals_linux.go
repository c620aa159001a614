package reap

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tether-run/tether/internal/store"
)

// pruneRefusals deletes, with Options.Prune, the receipts of refused
// starts (receipts/not-run-RUN_ID.json) older than it: no record names
// them, so the pruning of ended records never reaches them.
func pruneRefusals(reg *store.Registry, o Options) []Action {
	if o.Prune <= 0 {
		return nil
	}
	dir := filepath.Join(reg.Dir, "receipts")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Action
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !strings.HasPrefix(name, store.RefusalPrefix) || !e.Type().IsRegular() {
			continue
		}
		st, err := e.Info()
		if err != nil || time.Since(st.ModTime()) <= o.Prune {
			continue
		}
		p := filepath.Join(dir, e.Name())
		a := Action{Name: name, Kind: "refusal", Class: Ended, Plan: "delete the not_run receipt " + p + " (older than --prune)"}
		if !o.DryRun {
			if err := os.Remove(p); err != nil {
				a.Error = err.Error()
			} else {
				a.Done = true
			}
		}
		out = append(out, a)
	}
	return out
}
