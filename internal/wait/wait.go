// Package wait is how one goroutine of heat waits for another: spin a
// little, then yield, then park. It holds the spin budgets, which adapt to
// what the waits measure, and the counters that show what the waits did.
//
// Spinning pays when the goroutine waited for has a core of its own and
// answers within microseconds: waking a parked goroutine costs tens of
// them on a virtual machine. It is harmful when the cores are shared
// (another job, a browser, more ranks × threads than cores): the spinner
// burns the core the one it waits for needs. So a wait
//
//   - spins for at most its site's budget, which follows the waits the
//     site has seen (twice a typical wait, halved by a wait that outlasts
//     it, never past the site's cap);
//   - stops spinning at once, process-wide, when the machine is crowded
//     (more threads runnable than it has CPUs) and a spin either notices
//     it lost its core (its clock jumps between two polls: the OS ran
//     another thread) or runs out of budget (it held a core that someone
//     else wanted), and spins again only after a back-off (doubled while
//     the machine stays busy, up to a second; the first spin after it is
//     the probe);
//   - then yields a few times (other goroutines on this P, such as another
//     in-process rank, run meanwhile);
//   - then tells its caller to park, which blocks on a condition variable
//     or a channel: no busy wait is unbounded.
package wait

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Site is one place that waits, with its own spin budget. The zero Site
// never spins; set Cap before use. Many goroutines may share a Site.
type Site struct {
	// Cap is the longest a wait at this site spins.
	Cap time.Duration
	// budget is the current spin budget in ns, 0 meaning Cap (unset).
	budget atomic.Int64
}

// NewSite is a Site that spins up to max; spin false (more goroutines that
// wait than cores for them) makes it never spin.
func NewSite(max time.Duration, spin bool) *Site {
	if !spin {
		max = 0
	}
	return &Site{Cap: max}
}

const (
	// pollEvery is how many polls of the condition pass between two reads
	// of the clock (a poll is a few ns; a clock read ~20-50 ns).
	pollEvery = 64
	// lostCore is a jump of the clock between two reads that means the
	// spinning thread did not run meanwhile: 64 polls take well under a
	// microsecond, and an OS time slice given to another thread is a
	// millisecond or more. (Interrupts and a virtual machine's hiccups
	// stop a vCPU for tens of microseconds, several times a second.)
	lostCore = 250 * time.Microsecond
	// minBudget is the least budget a site falls to while it spins at all.
	minBudget = 2 * time.Microsecond
	// yields is how many times a wait yields before it parks.
	yields = 3
	// Back-off of spinning after a lost core.
	backoffMin = time.Millisecond
	backoffMax = time.Second
)

// The process-wide contention state and counters.
var (
	base     = time.Now()
	offUntil atomic.Int64 // spinning is off until this clock (ns since base)
	backoff  atomic.Int64 // the current back-off, ns; 0 when quiet

	spun, yielded, parked, lost, expired, taken atomic.Uint64
)

func now() int64 { return clock() }

// clock is the monotonic clock in ns since base; tests replace it.
var clock = func() int64 { return int64(time.Since(base)) }

// isCrowded is crowded; tests replace it.
var isCrowded = crowded

// Counts is what the waits of this process did since it started.
type Counts struct {
	Spun    uint64 `json:"spun"`    // waits that ended while spinning (not those that needed no wait)
	Yielded uint64 `json:"yielded"` // waits that ended while yielding
	Parked  uint64 `json:"parked"`  // waits that parked
	Lost    uint64 `json:"lost"`    // spins that noticed they had lost their core to another thread
	Expired uint64 `json:"expired"` // spins that ran out of budget (crowded: spinning stops too)
	Taken   uint64 `json:"taken"`   // parts of a dispatch that another than their worker ran (Took)
}

// Stats returns the counters.
func Stats() Counts {
	return Counts{Spun: spun.Load(), Yielded: yielded.Load(), Parked: parked.Load(), Lost: lost.Load(), Expired: expired.Load(), Taken: taken.Load()}
}

// Took counts a part of a dispatch that a goroutine ran instead of
// waiting for the one it was meant for.
func Took() { taken.Add(1) }

// Sub is c − o, counter by counter: what happened between two Stats.
func (c Counts) Sub(o Counts) Counts {
	return Counts{Spun: c.Spun - o.Spun, Yielded: c.Yielded - o.Yielded, Parked: c.Parked - o.Parked,
		Lost: c.Lost - o.Lost, Expired: c.Expired - o.Expired, Taken: c.Taken - o.Taken}
}

// Busy reports whether spinning is off now because a spin lost its core.
func Busy() bool { return now() < offUntil.Load() }

// Budget is the site's current spin budget (0 while spinning is off).
func (s *Site) Budget() time.Duration {
	if s.Cap <= 0 || Busy() {
		return 0
	}
	return s.budgetNow()
}

func (s *Site) budgetNow() time.Duration {
	b := time.Duration(s.budget.Load())
	if b <= 0 || b > s.Cap {
		return s.Cap
	}
	return b
}

// Until waits for cond by spinning and yielding, and reports whether cond
// became true. When it returns false the caller must block until cond can
// have changed, and then call Woke with the start Until returned.
func (s *Site) Until(cond func() bool) (ok bool, start int64) {
	if cond() {
		return true, 0 // not counted: a shared counter on every dispatch costs more than the wait
	}
	start = now()
	if s.Cap > 0 && start >= offUntil.Load() {
		b := int64(s.budgetNow())
		last := start
		for i := 1; ; i++ {
			if cond() {
				spun.Add(1)
				s.grow(now() - start)
				calm()
				return true, start
			}
			if i%pollEvery != 0 {
				continue
			}
			t := now()
			if t-last > int64(lostCore) && isCrowded(true) {
				lost.Add(1)
				contended(t)
				break
			}
			last = t
			if t-start > b {
				expired.Add(1)
				if isCrowded(false) {
					contended(t)
				} else {
					calm()
				}
				break
			}
		}
	}
	for range yields {
		runtime.Gosched()
		if cond() {
			yielded.Add(1)
			return true, start
		}
	}
	parked.Add(1)
	return false, start
}

// Woke records the whole length of a wait that parked: a wait that a spin
// of twice its length, within the cap, would have covered raises the
// budget to that; a longer one halves it.
func (s *Site) Woke(start int64) {
	if s.Cap <= 0 || start == 0 {
		return
	}
	if d := now() - start; 2*d <= int64(s.Cap) {
		s.grow(d)
	} else {
		s.budget.Store(max(int64(s.budgetNow())/2, int64(minBudget)))
	}
}

// Learn records a wait that code outside this package spun and, where
// slept, slept through (an MPI poll in C): it took d, spinning up to the
// Budget this Site gave it.
func (s *Site) Learn(d time.Duration, slept bool) {
	if !slept {
		spun.Add(1)
		if s.Cap > 0 {
			s.grow(int64(d))
		}
		return
	}
	parked.Add(1)
	s.Woke(now() - int64(d))
}

// grow raises the budget to twice a wait of d ns, within the cap.
func (s *Site) grow(d int64) {
	if b := int64(s.budgetNow()); 2*d > b {
		s.budget.Store(min(2*d, int64(s.Cap)))
	}
}

// contended turns spinning off for the back-off, doubling it.
func contended(t int64) {
	b := min(max(2*backoff.Load(), int64(backoffMin)), int64(backoffMax))
	backoff.Store(b)
	offUntil.Store(t + b)
}

// calm halves the back-off after a spin that kept its core.
func calm() {
	if b := backoff.Load(); b > 0 {
		backoff.Store(b / 2)
	}
}
