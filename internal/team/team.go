// Package team is the persistent worker goroutines of one rank, which split
// each sweep over the rank's box (hybrid parallelism).
package team

import (
	"sync"
	"sync/atomic"
	"time"

	"heat/internal/wait"
)

// Team is a rank's persistent worker goroutines: they are started once and
// reused every step. A dispatch has one part per worker; worker w runs part
// w, and whoever is done with its own part takes the parts nobody has
// started yet (the calling goroutine is worker 0). A part's result depends
// on the part alone, never on which goroutine ran it, so the bits are the
// same however the parts fall.
//
// Taking parts is what keeps a rank fast where its cores are shared: a
// worker that the OS has descheduled, or that is parked, holds up nobody;
// on a quiet machine each worker finds its own part first and keeps its
// data in its own cache. Waiting goroutines spin, yield and park through
// package wait: back-to-back dispatches (interior, rim, next step) find the
// workers awake on a quiet machine, and they leave the cores alone on a
// busy one.
type Team struct {
	n       int
	f       func(int)
	epoch   atomic.Uint64 // bumped by every dispatch
	claims  []claim       // the epoch in which each part was last taken
	pending atomic.Int64  // parts of the current dispatch not finished
	closed  atomic.Bool
	stolen  atomic.Uint64 // parts run by another than their own worker

	mu       sync.Mutex
	wake     *sync.Cond   // workers park here for the next epoch
	done     *sync.Cond   // the dispatcher parks here for pending to reach 0
	sleepers atomic.Int32 // workers parked on wake
	waiting  atomic.Bool  // the dispatcher is parked on done

	next, finish *wait.Site
	finished     func() bool // pending == 0, made once (a closure per dispatch would allocate)
}

// claim is one part's last epoch, on a cache line of its own.
type claim struct {
	epoch atomic.Uint64
	_     [56]byte
}

// spinFor caps how long a waiting goroutine spins before it parks: longer
// than the serial work between two sweeps (a 256² run's diagnostics every
// 10 steps took 0.4 ms, and waking the parked workers after it cost that
// run half its speed on 2 threads). The budgets adapt below it.
const spinFor = 2 * time.Millisecond

// New starts n-1 workers. With spin false (more busy goroutines than
// cores) waiting goroutines yield and park without spinning.
func New(n int, spin bool) *Team {
	t := &Team{n: n, claims: make([]claim, n), next: wait.NewSite(spinFor, spin), finish: wait.NewSite(spinFor, spin)}
	t.wake = sync.NewCond(&t.mu)
	t.done = sync.NewCond(&t.mu)
	t.finished = func() bool { return t.pending.Load() == 0 }
	for w := 1; w < n; w++ {
		go t.work(w)
	}
	return t
}

func (t *Team) work(w int) {
	seen := uint64(0)
	moved := func() bool { return t.epoch.Load() != seen }
	for {
		if ok, start := t.next.Until(moved); !ok {
			t.mu.Lock()
			t.sleepers.Add(1)
			for !moved() {
				t.wake.Wait()
			}
			t.sleepers.Add(-1)
			t.mu.Unlock()
			t.next.Woke(start)
		}
		seen = t.epoch.Load()
		if t.closed.Load() {
			return
		}
		t.parts(seen, w)
	}
}

// parts runs the parts of dispatch e that nobody has taken, part first and
// then the ones after it.
func (t *Team) parts(e uint64, first int) {
	for k := range t.n {
		p := (first + k) % t.n
		c := &t.claims[p].epoch
		old := c.Load()
		// Taken in e already, or e is over (a late worker: every part of
		// e was taken before the next dispatch began).
		if old >= e || !c.CompareAndSwap(old, e) {
			continue
		}
		if p != first {
			t.stolen.Add(1)
			wait.Took()
		}
		t.f(p)
		if t.pending.Add(-1) == 0 && t.waiting.Load() {
			t.mu.Lock()
			t.done.Signal()
			t.mu.Unlock()
		}
	}
}

// Run calls f(p) for every part p in parallel and returns when all are
// done.
func (t *Team) Run(f func(part int)) {
	if t.n == 1 {
		f(0)
		return
	}
	t.f = f
	t.pending.Store(int64(t.n))
	e := t.epoch.Add(1)
	if t.sleepers.Load() > 0 {
		t.mu.Lock()
		t.wake.Broadcast()
		t.mu.Unlock()
	}
	t.parts(e, 0)
	if ok, start := t.finish.Until(t.finished); !ok {
		t.mu.Lock()
		t.waiting.Store(true)
		for !t.finished() {
			t.done.Wait()
		}
		t.waiting.Store(false)
		t.mu.Unlock()
		t.finish.Woke(start)
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

// Stolen is how many parts ran on another than their own worker.
func (t *Team) Stolen() uint64 { return t.stolen.Load() }

// Size is the number of workers, the caller included, and of the parts of
// a dispatch.
func (t *Team) Size() int { return t.n }
