package solver

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// team is a rank's persistent worker goroutines: they are started once and
// reused every step, because waking goroutines through channels twice a
// step costs more than a small grid's update. Workers spin briefly on an
// epoch counter before they park, so back-to-back dispatches (interior,
// then rim) find them awake. The calling goroutine works as worker 0.
type team struct {
	n       int
	spin    int // polls before yielding or parking; 0 when cores are oversubscribed
	f       func(int)
	epoch   atomic.Uint64 // bumped by every dispatch
	pending atomic.Int64  // workers still running the current dispatch
	closed  atomic.Bool
	mu      sync.Mutex
	wake    *sync.Cond // workers wait here for the next epoch
	done    *sync.Cond // the dispatcher waits here for pending to reach 0
}

// spins is how many times a waiting goroutine polls before it yields or parks.
const spins = 4000

// newTeam starts n-1 workers. With spin false (more busy goroutines than
// cores) waiting goroutines park at once instead of polling.
func newTeam(n int, spin bool) *team {
	t := &team{n: n}
	if spin {
		t.spin = spins
	}
	t.wake = sync.NewCond(&t.mu)
	t.done = sync.NewCond(&t.mu)
	for w := 1; w < n; w++ {
		go t.work(w)
	}
	return t
}

func (t *team) work(w int) {
	seen := uint64(0)
	for {
		for i := 0; t.epoch.Load() == seen; i++ {
			if i < t.spin {
				if i%64 == 63 {
					runtime.Gosched()
				}
				continue
			}
			t.mu.Lock()
			for t.epoch.Load() == seen {
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

// run calls f(w) for every worker w in parallel and returns when all are done.
func (t *team) run(f func(w int)) {
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
	for i := 0; t.pending.Load() != 0; i++ {
		if i >= t.spin {
			t.mu.Lock()
			for t.pending.Load() != 0 {
				t.done.Wait()
			}
			t.mu.Unlock()
			return
		}
		if i%64 == 63 {
			runtime.Gosched()
		}
	}
}

// close stops the workers.
func (t *team) close() {
	t.closed.Store(true)
	t.mu.Lock()
	t.epoch.Add(1)
	t.wake.Broadcast()
	t.mu.Unlock()
}
