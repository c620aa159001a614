package identity

import (
	"errors"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Stat
		wantErr bool
	}{
		{
			name: "plain",
			in:   "42 (sleep) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 12345 1000 100 18446744073709551615",
			want: Stat{PID: 42, Comm: "sleep", State: 'S', PPID: 1, PGID: 42, SID: 42, Flags: 4194560, StartTime: 12345},
		},
		{
			name: "comm with spaces and parens",
			in:   "7 (a b) (c)) Z 3 4 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 999 0 0",
			want: Stat{PID: 7, Comm: "a b) (c)", State: 'Z', PPID: 3, PGID: 4, SID: 5, StartTime: 999},
		},
		{name: "empty", in: "", wantErr: true},
		{name: "short", in: "1 (x) S 0 1 1", wantErr: true},
		{
			name: "forked, not yet exec'd",
			in:   "691 (ct) R 460 371 371 0 -1 4194368 1 0 0 0 0 0 0 0 20 0 1 0 3975 1361981440 6430 18446744073709551615",
			want: Stat{PID: 691, Comm: "ct", State: 'R', PPID: 460, PGID: 371, SID: 371, Flags: 4194368, StartTime: 3975},
		},
		{name: "bad flags", in: "1 (x) S 0 1 1 0 -1 x 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0", wantErr: true},
		{name: "bad start time", in: "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 abc 0 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseStat(%q) error = %v, want error %t", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("ParseStat(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// TestExecedFlags: PF_FORKNOEXEC (0x40) alone tells a forked child that
// has not exec'd yet; the flags are those /proc showed for a sleep and for
// a Go test binary's child caught before its exec (Debian 13, TCG).
func TestExecedFlags(t *testing.T) {
	for flags, want := range map[uint64]bool{0x400100: true, 0x400040: false, 0: true, 0x40: false} {
		if got := (Stat{Flags: flags}).Execed(); got != want {
			t.Errorf("Stat{Flags: %#x}.Execed() = %t, want %t", flags, got, want)
		}
	}
}

func TestTokenRoundTrip(t *testing.T) {
	tok := Token{OS: "linux", BootID: "fddcdf39-8ad5-403a-8c3c-560897db47c2", PID: 5602, StartTime: 40721}
	got, err := Parse(tok.String())
	if err != nil || got != tok {
		t.Fatalf("Parse(%q) = %+v, %v, want %+v", tok.String(), got, err, tok)
	}
	withIno := Token{OS: "linux", BootID: "b", PID: 1, StartTime: 2, Ino: 3}
	if got, err := Parse(withIno.String()); err != nil || got != withIno {
		t.Errorf("Parse(%q) = %+v, %v", withIno.String(), got, err)
	}
	if !tok.Matches(Token{OS: tok.OS, BootID: tok.BootID, PID: tok.PID, StartTime: tok.StartTime, Ino: 9}) || withIno.Matches(Token{OS: "linux", BootID: "b", PID: 1, StartTime: 2, Ino: 4}) {
		t.Error("Matches: an unknown inode must match, a different one must not")
	}
	for _, bad := range []string{"", "linux:b:1", "linux:b:x:1", "linux:b:1:y", "linux:b:-3:1", ":b:1:1", "linux:b:1:2:0", "linux:b:1:2:x", "linux:b:1:2:3:4"} {
		if _, err := Parse(bad); !errors.Is(err, ErrBadToken) {
			t.Errorf("Parse(%q) error = %v, want ErrBadToken", bad, err)
		}
	}
}
