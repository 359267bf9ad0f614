package team

import (
	"fmt"
	"runtime"
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

// With fewer Ps than workers a dispatch does not wait for a worker that
// cannot run: the caller takes its part, and every part still runs exactly
// once.
func TestTeamTakesThePartsOfWorkersThatCannotRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, spin := range []bool{false, true} {
		tm := New(4, spin)
		counts := make([]int64, 4)
		for round := range 2000 {
			tm.Run(func(p int) { atomic.AddInt64(&counts[p], 1) })
			for p := range counts {
				if got := atomic.LoadInt64(&counts[p]); got != int64(round+1) {
					t.Fatalf("spin=%v round %d: part %d ran %d times", spin, round, p, got)
				}
			}
		}
		tm.Close()
		if tm.Stolen() == 0 {
			t.Errorf("spin=%v: no part was taken by another worker on one P", spin)
		}
	}
}
