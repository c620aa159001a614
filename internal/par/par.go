// Package par runs independent pieces of work on a few goroutines. tether
// uses it where the work is system calls on independent files (records,
// /proc, cgroupfs), which overlap well even on two cores.
package par

import (
	"runtime"
	"sync"
)

// For calls f(i) for every i in [0, n) on at most 2×GOMAXPROCS goroutines
// and returns when all calls have returned. f must be safe to run
// concurrently for different i.
func For(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(2*runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
