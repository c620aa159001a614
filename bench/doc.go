// Package bench holds tether's benchmarks, each measured side by side with
// a peer in the same run (the machine is noisy: compare ratios, not
// absolute numbers). Run them with
//
//	go test ./bench/ -run '^$' -bench . -benchtime 200x
//
// Custom metrics are medians over the iterations, in milliseconds.
package bench
