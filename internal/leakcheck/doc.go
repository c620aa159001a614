// Package leakcheck fails a test binary that leaves a process or a cgroup
// leaf behind. TestMain calls Main: it marks the environment that every
// child inherits, runs the tests, then looks for live processes still
// carrying the mark and for tether leaves created during the run. Anything
// found is reported, killed and removed, and the run fails.
package leakcheck

// Env is the variable that marks processes started by a test binary.
const Env = "TETHER_LEAKCHECK"
