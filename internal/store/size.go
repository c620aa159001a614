//go:build unix || windows

package store

import (
	"math"
	"strconv"

	"github.com/tether-run/tether/registry"
)

// recordGrowth bounds what a record gains after its first write, besides
// what its errors quote of the command (counted apart, by CheckSize): the
// supervisor's and main process's tokens, the leaf and its v1 leaves, the
// receipt's path, the exit, the output loss, the caveats, the times, and
// the errors that name them. A path is at most PATH_MAX (4,096 bytes):
// thirty fit as written, five if every byte took JSON's longest escape
// (\u00XX).
const recordGrowth = 128 << 10

// quotedByte bounds what one byte of a string takes in a record when an
// error quotes it (%q, then JSON): '<' takes 6 (\u003c), a control byte 5
// (\\x01), U+0080's two bytes 7 (\\u0080). An error names the command or
// the working directory (exec's, chdir's) once; the room is for twice.
const quotedByte = 2 * 6

// CheckSize returns an error wrapping registry.ErrTooLarge when rec could not be
// kept: encoded, with room for what its supervisor writes into it later,
// it would be larger than the 1 MiB a record is read back with. The
// fields its caller sizes are the command line and the working
// directory; the rest are bounded. A start calls it before it claims its
// name or creates anything, so that no name is held by a record nobody
// can read (issue 22); every write refuses such a record anyway.
func CheckSize(rec *registry.Record) error {
	b, err := appendFields(nil, rec)
	if err != nil {
		return err
	}
	n := len(b) + 1 + recordGrowth
	if len(rec.Argv) > 0 {
		n += quotedByte * len(rec.Argv[0])
	}
	n += quotedByte * len(rec.Cwd)
	if n > maxRecord {
		return registry.Errorf(rec.Name, registry.ErrTooLarge, "the command line and working directory need a record of %s, over the %s limit of a record: pass long argument lists in a file", mib(n), mib(maxRecord))
	}
	return nil
}

// mib formats n bytes in MiB, rounded up to two places (a size over a
// limit never reads as the limit), without trailing zeros: 1.17 MiB, 1 MiB.
func mib(n int) string {
	s := strconv.FormatFloat(math.Ceil(float64(n)*100/(1<<20))/100, 'f', -1, 64)
	return s + " MiB"
}
