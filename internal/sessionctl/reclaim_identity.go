//go:build windows || darwin

package sessionctl

import (
	"errors"
	"fmt"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// Reclaim ends the record of an unsupervised session. On Windows the
// session's job was closed with its supervisor (KILL_ON_JOB_CLOSE), which
// killed every member; on macOS what the main process started cannot be
// proven without the supervisor's walks. Reclaim proves the main process
// gone by its token, or kills it through a handle proven to be it, before
// it marks the session stopped and frees its name.
func Reclaim(reg *store.Registry, rec *registry.Record) error {
	if h, err := SupervisorOf(rec); err == nil {
		h.Close()
		return fmt.Errorf("session: %q is supervised", rec.Name)
	}
	if rec.Main != "" {
		if err := identity.End(rec.Main, 10*time.Second); err != nil {
			return fmt.Errorf("session %q: main process: %w", rec.Name, err)
		}
	}
	rec.State, rec.StopReason, rec.UpdatedAt = registry.StateStopped, "reclaimed", time.Now().UTC()
	return errors.Join(reg.Write(rec), reg.Release(rec.Name))
}
