package par

import (
	"sync/atomic"
	"testing"
)

func TestFor(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		seen := make([]int32, n)
		var calls atomic.Int32
		For(n, func(i int) { atomic.AddInt32(&seen[i], 1); calls.Add(1) })
		if int(calls.Load()) != n {
			t.Errorf("For(%d) made %d calls", n, calls.Load())
		}
		for i, c := range seen {
			if c != 1 {
				t.Errorf("For(%d): index %d called %d times", n, i, c)
			}
		}
	}
}
