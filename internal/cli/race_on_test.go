//go:build race

package cli_test

// raceEnabled: this test binary, and so every tether process the tests
// start from it, is built with the race detector.
const raceEnabled = true
