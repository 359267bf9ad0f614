package team

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// Every dispatch runs every worker exactly once, and run returns only after
// all of them finished.
func TestTeamRunsEveryWorkerOncePerDispatch(t *testing.T) {
	for _, spin := range []bool{false, true} {
		for _, n := range []int{1, 2, 3, 8} {
			tm := New(n, spin)
			counts := make([]int64, n)
			for round := range 500 {
				tm.Run(func(w int) { atomic.AddInt64(&counts[w], 1) })
				for w := range n {
					if got := atomic.LoadInt64(&counts[w]); got != int64(round+1) {
						t.Fatalf("spin=%v n=%d round %d: worker %d ran %d times", spin, n, round, w, got)
					}
				}
			}
			tm.Close()
		}
	}
}

// BenchmarkTeamDispatch is the cost of one empty fork/join of the workers.
func BenchmarkTeamDispatch(b *testing.B) {
	for _, spin := range []bool{false, true} {
		b.Run(fmt.Sprintf("threads=2/spin=%v", spin), func(b *testing.B) {
			tm := New(2, spin)
			defer tm.Close()
			for b.Loop() {
				tm.Run(func(int) {})
			}
		})
	}
}
