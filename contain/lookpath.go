package contain

import "github.com/tether-run/tether/internal/execpath"

// lookPath resolves name on the process's PATH, with the answer a shell
// and timeout(1) give for a name found only as something that cannot be
// executed: exit 126, not 127 (execpath.Look).
func lookPath(name string) (string, error) { return execpath.Look(name, nil, "") }
