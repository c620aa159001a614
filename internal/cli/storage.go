package cli

import (
	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// warnStorage says which storage ceiling stopped the run (or was found
// crossed at its end), and which census could not complete.
func warnStorage(e *env, r *receipt.Receipt) {
	what := "at the end, "
	if r.Stop.Reason == string(contain.ReasonStorage) {
		what = "stopped the run: "
	}
	for _, s := range r.Storage {
		switch {
		case s.Error != "":
			e.warnf("%sthe storage census of %s could not complete: %s", what, s.Path, s.Error)
		case s.Exceeded:
			e.warnf("%s%s held %s (--storage-max %s); after the stop it holds %s", what, s.Path,
				limits.FormatSize(s.Peak), limits.FormatSize(s.LimitBytes), limits.FormatSize(max(s.After, 0)))
		}
	}
}
