package store

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LogFiles returns the files of the session log at path (LogPath) that
// exist: path itself and its rotated generations path.N, newest first.
func LogFiles(path string) []string {
	out := []string{}
	if _, err := os.Lstat(path); err == nil {
		out = append(out, path)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	type gen struct {
		n int
		p string
	}
	var gens []gen
	base := filepath.Base(path) + "."
	for _, e := range ents {
		suf, ok := strings.CutPrefix(e.Name(), base)
		if n, err := strconv.Atoi(suf); ok && err == nil && n > 0 && suf[0] != '+' {
			gens = append(gens, gen{n, filepath.Join(filepath.Dir(path), e.Name())})
		}
	}
	for i := range gens {
		for j := i + 1; j < len(gens); j++ {
			if gens[j].n < gens[i].n {
				gens[i], gens[j] = gens[j], gens[i]
			}
		}
	}
	for _, g := range gens {
		out = append(out, g.p)
	}
	return out
}
