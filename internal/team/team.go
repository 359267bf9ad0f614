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
// reused every step. A dispatch (Run) cuts the work into up to
// PartsPerWorker parts a worker; worker w owns a run of consecutive parts
// and takes them from its front, and a worker done with its own takes the
// parts others have not started, from the back of theirs (the calling
// goroutine is worker 0). A part's result depends on the part alone, never
// on which goroutine ran it, so the bits are the same however the parts
// fall.
//
// Taking parts is what keeps a rank fast where its cores are shared: a
// worker that the OS has descheduled, or that is parked, holds up only the
// part it has started; on a quiet machine each worker runs its own parts
// and keeps their data in its own cache. Waiting goroutines spin, yield
// and park through package wait: back-to-back dispatches (interior, rim,
// next step) find the workers awake on a quiet machine, and they leave the
// cores alone on a busy one.
type Team struct {
	n       int // workers
	f       func(int)
	epoch   atomic.Uint64 // seq<<8 | parts a worker: a new seq every dispatch
	queues  []queue       // each worker's parts not yet taken
	pending atomic.Int64  // parts of the current dispatch not finished
	closed  atomic.Bool

	mu       sync.Mutex
	wake     *sync.Cond   // workers park here for the next epoch
	done     *sync.Cond   // the dispatcher parks here for pending to reach 0
	sleepers atomic.Int32 // workers parked on wake
	waiting  atomic.Bool  // the dispatcher is parked on done

	next, finish *wait.Site
	finished     func() bool // pending == 0, made once (a closure per dispatch would allocate)
}

// PartsPerWorker is the most parts a dispatch gives each worker: enough
// that a worker stopped in the middle of a part holds up a small share of
// the sweep. PartCells is the least a part holds (PartsFor): a part's
// fixed cost (taking it, starting its rows) stays far below its work, and
// a small sweep keeps one part a worker, each in its own worker's cache.
const PartsPerWorker = 4

// MaxWorkers is the most workers a Team can index: a queue packs part
// indices, up to workers × PartsPerWorker, in 16 bits.
const MaxWorkers = 0xffff / PartsPerWorker

// PartCells is the least a part holds where a worker has several (see
// PartsPerWorker); SetPartCells changes it for tests.
var PartCells = 1 << 16

// SetPartCells sets PartCells (for tests: small sweeps in many parts) and
// returns what puts it back.
func SetPartCells(n int) (restore func()) {
	old := PartCells
	PartCells = n
	return func() { PartCells = old }
}

// queue is the parts [lo, hi) of one worker not yet taken in the dispatch
// whose sequence number's low 32 bits it carries, packed in one word
// (seq<<32 | lo<<16 | hi) on a cache line of its own, so that one
// compare-and-swap takes a part. A word of an earlier dispatch stands for
// the worker's whole run of parts: the dispatcher writes no queue, the
// first take does. Every part of a dispatch is taken before the next
// begins, so each queue then carries its sequence number or a later one,
// and a worker late for a dispatch takes nothing.
type queue struct {
	w atomic.Uint64
	_ [56]byte
}

// take takes a part of queue q (worker w's) in dispatch seq of k parts a
// worker: from its front (the owner) or its back (another worker); -1
// when none is left.
func (q *queue) take(seq uint64, k, w int, front bool) int {
	seq &= 0xffffffff
	for {
		v := q.w.Load()
		lo, hi := int(v>>16&0xffff), int(v&0xffff)
		switch d := int32(uint32(v>>32) - uint32(seq)); {
		case d > 0:
			return -1 // a later dispatch's: seq is over
		case d < 0:
			lo, hi = w*k, (w+1)*k // untouched in seq
		}
		if lo >= hi {
			return -1
		}
		p := lo
		if front {
			lo++
		} else {
			hi--
			p = hi
		}
		if q.w.CompareAndSwap(v, seq<<32|uint64(lo)<<16|uint64(hi)) {
			return p
		}
	}
}

// spinFor caps how long a waiting goroutine spins before it parks: longer
// than the serial work between two sweeps (a 256² run's diagnostics every
// 10 steps took 0.4 ms, and waking the parked workers after it cost that
// run half its speed on 2 threads). The budgets adapt below it.
const spinFor = 2 * time.Millisecond

// New starts n-1 workers. With spin false (more busy goroutines than
// cores) waiting goroutines yield and park without spinning.
func New(n int, spin bool) *Team {
	t := &Team{n: n, queues: make([]queue, n), next: wait.NewSite(spinFor, spin), finish: wait.NewSite(spinFor, spin)}
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
		t.parts(seen>>8, int(seen&0xff), w)
	}
}

// parts runs worker w's parts of dispatch seq (k a worker), then takes
// the others'.
func (t *Team) parts(seq uint64, k, w int) {
	q := &t.queues[w]
	for p := q.take(seq, k, w, true); p >= 0; p = q.take(seq, k, w, true) {
		t.run(p)
	}
	for v := 1; v < t.n; v++ {
		o := (w + v) % t.n
		q := &t.queues[o]
		for p := q.take(seq, k, o, false); p >= 0; p = q.take(seq, k, o, false) {
			wait.Took()
			t.run(p)
		}
	}
}

// run runs part p of the current dispatch, which cannot end before it.
func (t *Team) run(p int) {
	t.f(p)
	if t.pending.Add(-1) == 0 {
		// The last part wakes a parked dispatcher. waiting is read under
		// the lock the dispatcher holds while it sets it and checks
		// pending: unlocked, a store and a later load of two atomics may
		// pass each other where an emulator (qemu-user, arm64 on x86) does
		// not order them, and both sides then missed the other: a hang.
		t.mu.Lock()
		if t.waiting.Load() {
			t.done.Signal()
		}
		t.mu.Unlock()
	}
}

// Run calls f(p) for every part p < parts in parallel and returns when
// all are done; parts is PartsFor's (or Workers()).
func (t *Team) Run(parts int, f func(part int)) { t.dispatch(parts/t.n, f) }

// RunEach calls f(w) once for every worker w < Workers() in parallel (a
// part a worker: work cut by the workers, such as temporal blocking's
// bands) and returns when all are done.
func (t *Team) RunEach(f func(worker int)) { t.dispatch(1, f) }

// PartsFor is how many parts a sweep over cells cells is cut into: a
// multiple of the workers, at most PartsPerWorker each, at least PartCells
// a part where there are several a worker.
func (t *Team) PartsFor(cells int) int {
	if t.n == 1 {
		return 1
	}
	return t.n * min(PartsPerWorker, max(1, cells/(t.n*PartCells)))
}

func (t *Team) dispatch(k int, f func(int)) {
	if t.n == 1 {
		f(0)
		return
	}
	t.f = f
	t.pending.Store(int64(k * t.n))
	seq := t.epoch.Load()>>8 + 1
	t.epoch.Store(seq<<8 | uint64(k))
	if t.sleepers.Load() > 0 {
		t.mu.Lock()
		t.wake.Broadcast()
		t.mu.Unlock()
	}
	t.parts(seq, k, 0)
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
	t.epoch.Add(1 << 8)
	t.wake.Broadcast()
	t.mu.Unlock()
}

// Workers is the number of worker goroutines, the caller included.
func (t *Team) Workers() int { return t.n }

// SoloCells is the most cells a sweep may hold and still run on its
// caller alone (For): below it a dispatch's handoff and wait cost more
// than the other workers save. On a 2-vCPU AMD EPYC (2026-12-06), a
// multigrid cycle at 256² took 35% less time with the levels of 64² and
// below on one worker (Crank–Nicolson, 300 F-cycles: 0.26 → 0.17 s).
// SetSoloCells changes it for tests.
var SoloCells = 4096

// SetSoloCells sets SoloCells (for tests: small sweeps on every worker)
// and returns what puts it back.
func SetSoloCells(n int) (restore func()) {
	old := SoloCells
	SoloCells = n
	return func() { SoloCells = old }
}

// solo is the team of the caller alone: it keeps no state, so every rank
// may share it.
var solo = New(1, false)

// For is the team that sweeps over cells cells: t, or where they are at
// most SoloCells, the caller alone (the bits are the same: a part's
// result never depends on who runs it).
func (t *Team) For(cells int) *Team {
	if t.n > 1 && cells <= SoloCells {
		return solo
	}
	return t
}
