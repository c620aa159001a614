// Package crash holds the fault-injection points of tether. Built with
// the crashpoints tag, Point(name) SIGKILLs the process when
// $TETHER_CRASH_AT equals name (name#N: at its Nth pass), so tests can kill tether at every step
// boundary and check that `tether reap` recovers. In release builds Point
// does nothing and costs nothing.
package crash

// Env names the crash point to die at.
const Env = "TETHER_CRASH_AT"
