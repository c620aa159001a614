package identity

import (
	"errors"
	"testing"
	"time"
)

// TestMacToken: what kern.proc.pid says of a process becomes a token that
// prints and parses back, names the start to the microsecond, and a
// zombie or a record without a start time is refused.
func TestMacToken(t *testing.T) {
	at := time.Date(2026, 12, 2, 1, 2, 3, 456789000, time.UTC)
	tok, err := macToken("5F1C0B7E-1D2A-4C3B-9E8F-0A1B2C3D4E5F", macProc{PID: 4242, StartSec: at.Unix(), StartUsec: 456789, Stat: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s := tok.String(); s != "mac:5F1C0B7E-1D2A-4C3B-9E8F-0A1B2C3D4E5F:4242:1796173323456789" {
		t.Errorf("token %s", s)
	}
	if back, err := Parse(tok.String()); err != nil || back != tok {
		t.Errorf("Parse(%s) = %v, %v", tok, back, err)
	}
	if got := macStartedAt(tok); !got.Equal(at) {
		t.Errorf("macStartedAt = %v, want %v", got, at)
	}
	later := tok
	later.StartTime++
	if tok.Matches(later) {
		t.Error("tokens a microsecond apart match")
	}
	for name, p := range map[string]macProc{
		"zombie":        {PID: 7, StartSec: at.Unix(), Stat: macZombie},
		"no process":    {PID: 0},
		"no start time": {PID: 7, Stat: 2},
		"bad usec":      {PID: 7, StartSec: at.Unix(), StartUsec: 1e6, Stat: 2},
	} {
		_, err := macToken("b", p)
		if err == nil {
			t.Errorf("%s: token accepted", name)
		}
		if (name == "zombie" || name == "no process") != errors.Is(err, ErrGone) {
			t.Errorf("%s: %v; ErrGone only for a process that has exited or is not there", name, err)
		}
	}
	if !macStartedAt(Token{OS: "linux", StartTime: 5}).IsZero() {
		t.Error("macStartedAt of a Linux token is not zero")
	}
}
