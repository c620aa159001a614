//go:build !linux

package leakcheck

import "testing"

// Main runs the tests; leak detection is implemented for Linux only.
func Main(m *testing.M) int { return m.Run() }
