package bench

import "testing"

// TestNothing keeps `go test ./...` from reporting "no tests to run" here:
// the package holds only benchmarks.
func TestNothing(t *testing.T) {}
