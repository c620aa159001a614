package limits

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseStorage(t *testing.T) {
	wd, _ := os.Getwd()
	tests := []struct {
		in   string
		want Storage
		err  bool
	}{
		{"/srv/out=2G", Storage{"/srv/out", 2 << 30}, false},
		{"out/../cache=512M", Storage{filepath.Join(wd, "cache"), 512 << 20}, false},
		{"/a=b=1K", Storage{"/a=b", 1 << 10}, false},
		{"/srv", Storage{}, true},
		{"=1M", Storage{}, true},
		{"/srv=0", Storage{}, true},
		{"/srv=lots", Storage{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseStorage(tt.in)
			if got != tt.want || (err != nil) != tt.err || (err != nil && !errors.Is(err, ErrSyntax)) {
				t.Errorf("ParseStorage(%q) = %+v, %v; want %+v, error %t (ErrSyntax)", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
}
