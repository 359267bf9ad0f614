// Package team is the persistent worker goroutines of one rank, which split
// each sweep over the rank's box (hybrid parallelism).
package team

import (
	"sync"
	"sync/atomic"
	"time"
)

// Team is a rank's persistent worker goroutines: they are started once and
// reused every step. Waking a parked goroutine costs tens of microseconds
// on a virtual machine (a futex wake and a scheduler hand-off), more than a
// small grid's whole step, so a waiting goroutine first spins on an atomic
// counter for up to spinFor and parks only after that: back-to-back
// dispatches (interior, rim, next step) find the workers awake. Spinning
// is off when the process has more busy goroutines than cores. The calling
// goroutine works as worker 0.
type Team struct {
	n       int
	spin    bool
	f       func(int)
	epoch   atomic.Uint64 // bumped by every dispatch
	pending atomic.Int64  // workers still running the current dispatch
	closed  atomic.Bool
	mu      sync.Mutex
	wake    *sync.Cond // workers wait here for the next epoch
	done    *sync.Cond // the dispatcher waits here for pending to reach 0
}

// spinFor is how long a waiting goroutine spins before it parks: longer
// than the serial work between two sweeps (a 256² run's diagnostics every
// 10 steps took 0.4 ms, and waking the parked workers after it cost that
// run half its speed on 2 threads).
const spinFor = 2 * time.Millisecond

// New starts n-1 workers. With spin false (more busy goroutines than
// cores) waiting goroutines park at once.
func New(n int, spin bool) *Team {
	t := &Team{n: n, spin: spin}
	t.wake = sync.NewCond(&t.mu)
	t.done = sync.NewCond(&t.mu)
	for w := 1; w < n; w++ {
		go t.work(w)
	}
	return t
}

// spinUntil polls cond for up to spinFor (when spinning is on) and reports
// whether it became true.
func (t *Team) spinUntil(cond func() bool) bool {
	if !t.spin {
		return cond()
	}
	var start time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if i&1023 == 1023 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spinFor {
				return false
			}
		}
	}
}

func (t *Team) work(w int) {
	seen := uint64(0)
	moved := func() bool { return t.epoch.Load() != seen }
	for {
		if !t.spinUntil(moved) {
			t.mu.Lock()
			for !moved() {
				t.wake.Wait()
			}
			t.mu.Unlock()
		}
		seen = t.epoch.Load()
		if t.closed.Load() {
			return
		}
		t.f(w)
		if t.pending.Add(-1) == 0 {
			t.mu.Lock()
			t.done.Signal()
			t.mu.Unlock()
		}
	}
}

// Run calls f(w) for every worker w in parallel and returns when all are done.
func (t *Team) Run(f func(w int)) {
	if t.n == 1 {
		f(0)
		return
	}
	t.f = f
	t.pending.Store(int64(t.n - 1))
	t.mu.Lock()
	t.epoch.Add(1)
	t.wake.Broadcast()
	t.mu.Unlock()
	f(0)
	finished := func() bool { return t.pending.Load() == 0 }
	if !t.spinUntil(finished) {
		t.mu.Lock()
		for !finished() {
			t.done.Wait()
		}
		t.mu.Unlock()
	}
}

// Close stops the workers.
func (t *Team) Close() {
	t.closed.Store(true)
	t.mu.Lock()
	t.epoch.Add(1)
	t.wake.Broadcast()
	t.mu.Unlock()
}

// Size is the number of workers, the caller included.
func (t *Team) Size() int { return t.n }
