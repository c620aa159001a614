// Package bench holds tether's benchmarks, each measured side by side with
// a peer in the same run (the machine is noisy: compare ratios, not
// absolute numbers). Run the suite with
//
//	bash bench/run.sh
//
// which installs the peers (bench/setup.sh: tini, catatonit, dumb-init,
// bubblewrap) and gives each benchmark its own -benchtime; one benchmark
// with, for example,
//
//	go test ./bench/ -run '^$' -bench StartToExit -benchtime 200x
//	TETHER_LEAK_TABLE=$PWD/leaks.md go test ./bench/ -run '^$' -bench LeakTable -benchtime 1x
//
// Custom metrics are medians over the iterations, in milliseconds unless
// named otherwise. BENCHMARKS.md has the latest figures.
package bench
