package team

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"heat/internal/wait"
)

// Every dispatch runs every part exactly once (Run: PartsFor's, RunEach:
// one a worker), and returns only after all of them finished.
func TestTeamRunsEveryPartOncePerDispatch(t *testing.T) {
	for _, spin := range []bool{false, true} {
		for _, n := range []int{1, 2, 3, 8} {
			tm := New(n, spin)
			for _, c := range []struct{ cells, parts int }{
				{10, n}, {n * PartCells, n}, {3 * n * PartCells, 3 * n}, {1 << 40, PartsPerWorker * n}} {
				parts := tm.PartsFor(c.cells)
				if want := max(1, c.parts*min(1, n-1)); parts != want {
					t.Fatalf("n=%d cells=%d: %d parts, want %d", n, c.cells, parts, want)
				}
				counts := make([]int64, parts)
				each := make([]int64, n)
				for round := range 300 {
					tm.Run(parts, func(p int) { atomic.AddInt64(&counts[p], 1) })
					tm.RunEach(func(w int) { atomic.AddInt64(&each[w], 1) })
					for p := range counts {
						if got := atomic.LoadInt64(&counts[p]); got != int64(round+1) {
							t.Fatalf("spin=%v n=%d parts=%d round %d: part %d ran %d times", spin, n, parts, round, p, got)
						}
					}
					for w := range each {
						if got := atomic.LoadInt64(&each[w]); got != int64(round+1) {
							t.Fatalf("spin=%v n=%d round %d: RunEach's part %d ran %d times", spin, n, round, w, got)
						}
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
				tm.Run(2, func(int) {})
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
		before := wait.Stats()
		parts := tm.PartsFor(1 << 30)
		counts := make([]int64, parts)
		for round := range 2000 {
			tm.Run(parts, func(p int) { atomic.AddInt64(&counts[p], 1) })
			for p := range counts {
				if got := atomic.LoadInt64(&counts[p]); got != int64(round+1) {
					t.Fatalf("spin=%v round %d: part %d ran %d times", spin, round, p, got)
				}
			}
		}
		tm.Close()
		if wait.Stats().Sub(before).Taken == 0 {
			t.Errorf("spin=%v: no part was taken by another worker on one P", spin)
		}
	}
}

// A sweep of at most SoloCells cells runs on its caller alone (one part,
// no dispatch), a larger one on the team, and a team of one is itself.
func TestSmallSweepsRunOnTheCaller(t *testing.T) {
	tm := New(2, false)
	defer tm.Close()
	small := tm.For(SoloCells)
	if small == tm || small.Workers() != 1 {
		t.Fatalf("a sweep of %d cells: a team of %d workers, want the caller alone", SoloCells, small.Workers())
	}
	if big := tm.For(SoloCells + 1); big != tm {
		t.Fatalf("a sweep of %d cells: a team of %d workers, want the rank's %d", SoloCells+1, big.Workers(), tm.Workers())
	}
	one := New(1, false)
	if one.For(1) != one {
		t.Fatal("a team of one gave another team for a small sweep")
	}
	// One part, run once.
	if parts := small.PartsFor(SoloCells); parts != 1 {
		t.Fatalf("a small sweep in %d parts, want 1", parts)
	}
	var ran []int
	small.Run(1, func(p int) { ran = append(ran, p) })
	if len(ran) != 1 || ran[0] != 0 {
		t.Fatalf("the small sweep ran parts %v, want [0]", ran)
	}
	defer SetSoloCells(0)()
	if got := tm.For(1); got != tm {
		t.Fatal("SoloCells 0: a one-cell sweep left the team")
	}
}
