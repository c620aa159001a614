package cli

import (
	"errors"
	"fmt"
	"os"
)

// receiptFD: Windows passes handles, not numbered descriptors, to a
// child; --receipt FILE is the way there.
func receiptFD(n int) (*os.File, error) {
	return nil, fmt.Errorf("%w on Windows: use --receipt FILE", errors.ErrUnsupported)
}
