package cli

import (
	"errors"
	"fmt"

	"github.com/tether-run/tether/internal/census"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/session"
)

// refusal is a start tether refused before anything was created: a
// --require-free not met, a full pool, a limit --limits strict cannot
// apply, a storage ceiling already crossed or that cannot be checked, an
// owner already gone. It exits 125 and leaves a not_run receipt.
type refusal struct {
	reason string // receipt.Refused*
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refusalOf is the refusal err is, or nil.
func refusalOf(err error) *refusal {
	var ref *refusal
	var se *session.StartError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ref):
		return ref
	case errors.As(err, &se) && se.Refusal != "":
		return &refusal{reason: se.Refusal, err: err}
	case errors.Is(err, census.ErrStorage):
		return &refusal{reason: receipt.RefusedStorage, err: err}
	case errors.Is(err, limits.ErrInsufficientSpace):
		return &refusal{reason: receipt.RefusedRequireFree, err: err}
	case errors.Is(err, limits.ErrUnavailable), errors.Is(err, limits.ErrAboveParent):
		return &refusal{reason: receipt.RefusedLimits, err: err}
	case errors.Is(err, session.ErrPoolFull):
		return &refusal{reason: receipt.RefusedPoolFull, err: err}
	case errors.Is(err, session.ErrOwner) && !errors.Is(err, session.ErrBadOptions):
		return &refusal{reason: receipt.RefusedOwnerGone, err: err}
	}
	return nil
}

// refuse completes r as the not_run receipt of ref, writes it to out
// (--receipt, when given) and to the state dir's receipts/ (as
// not-run-RUNID.json), and returns exit 125 with the reason.
func refuse(e *env, ref *refusal, r *receipt.Receipt, out *receiptOut) error {
	r.Outcome = receipt.OutcomeNotRun
	r.Refusal = &receipt.Refusal{Reason: ref.reason, Detail: ref.err.Error()}
	r.Error = ref.err.Error()
	r.Exit = receipt.Exit{Code: ExitTether, MainStatus: -1}
	var rf *census.Refused
	if errors.As(ref.err, &rf) {
		r.Storage = rf.Figures
	}
	errs := []error{fmt.Errorf("refused (%s): %w", ref.reason, ref.err)}
	if err := out.write(e, r); err != nil {
		errs = append(errs, err)
	}
	if err := keepReceipt(e, r); err != nil {
		errs = append(errs, fmt.Errorf("the not_run receipt is not in the state dir: %w", err))
	}
	return exit(ExitTether, errors.Join(errs...))
}

// keepReceipt writes r to the state dir's receipts/.
func keepReceipt(e *env, r *receipt.Receipt) error {
	reg, err := openRegistry(e)
	if err != nil {
		return err
	}
	defer reg.Close()
	b, err := r.JSON()
	if err != nil {
		return err
	}
	_, err = reg.WriteReceipt(store.RefusalPrefix+r.RunID, "", b) // not-run-RUN_ID.json: no run of a name
	return err
}
