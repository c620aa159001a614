package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tether-run/tether/internal/atomicfile"
	"github.com/tether-run/tether/receipt"
)

// receiptOut is where a run's receipt goes: nowhere, stdout ("-"), or a
// file. A file is reserved before the command starts (issue 11: a
// receipt that cannot be written must be known before anything runs, and
// an existing file is never overwritten by accident), unless overwrite
// was asked for: then it is replaced atomically at the end, as before.
type receiptOut struct {
	path      string
	fd        *os.File // --receipt-fd; path is then its name
	overwrite bool
	res       *atomicfile.Reservation
}

// receiptPerm is the mode of a --receipt FILE before the umask: as any
// file a command creates (issue 22: it was 0644 whatever the umask).
const receiptPerm = 0o666

// openReceipt reserves path for the receipt. An existing path, a symlink
// included (never followed), is refused unless overwrite.
func openReceipt(path string, overwrite bool) (*receiptOut, error) {
	o := &receiptOut{path: path, overwrite: overwrite}
	if path == "" || path == "-" || overwrite {
		return o, nil
	}
	res, err := atomicfile.Reserve(path, receiptPerm)
	if errors.Is(err, fs.ErrExist) {
		what := "exists"
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			what = "exists (a symlink, not followed)"
		}
		return nil, fmt.Errorf("--receipt %q: %s; a receipt never replaces a file unless --receipt-overwrite is given", path, what)
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err // the path is in the message already
	}
	if err != nil {
		return nil, fmt.Errorf("--receipt %q: cannot create it: %w", path, err)
	}
	o.res = res
	return o, nil
}

// write writes r where it goes. It is called once per run.
func (o *receiptOut) write(e *env, r *receipt.Receipt) error {
	if o == nil || o.path == "" {
		return nil
	}
	b, err := r.JSON()
	if err != nil {
		o.cancel()
		return fmt.Errorf("receipt: %w", err)
	}
	switch {
	case o.path == "-":
		_, err = e.stdout.Write(b)
		return err
	case o.fd != nil:
		_, err = o.fd.Write(b)
		o.fd.Close()
	case o.res != nil:
		err = o.res.Commit(b)
	default:
		err = atomicfile.WriteFileUmask(o.path, b, receiptPerm)
	}
	if err != nil {
		return fmt.Errorf("write receipt %q: %w", o.path, err)
	}
	return nil
}

// openReceiptFD takes descriptor n, which the caller opened for the
// receipt, for writing, and keeps the command from inheriting it
// (descriptors a shell opens are not close-on-exec).
func openReceiptFD(n int) (*receiptOut, error) {
	f, err := receiptFD(n)
	if err != nil {
		return nil, fmt.Errorf("--receipt-fd %d: %w", n, err)
	}
	return &receiptOut{path: f.Name(), fd: f}, nil
}

// cancel gives up the reservation of a run that will write no receipt.
func (o *receiptOut) cancel() {
	if o != nil && o.res != nil {
		o.res.Cancel()
	}
}
