package wait

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// reset puts the process-wide state back to a quiet machine, crowded or
// not as the test says.
func reset(t *testing.T, crowd bool) {
	offUntil.Store(0)
	backoff.Store(0)
	isCrowded = func(bool) bool { return crowd }
	t.Cleanup(func() { isCrowded = crowded; offUntil.Store(0); backoff.Store(0) })
}

// A condition that holds at once needs no wait (and is not counted); one
// that holds after some polls is a spun wait; one that never holds spins
// no longer than the budget, yields, and then parks.
func TestUntilSpinsWithinTheBudgetThenParks(t *testing.T) {
	reset(t, false)
	s := NewSite(200*time.Microsecond, true)
	before := Stats()
	ok, start := s.Until(func() bool { return true })
	require.True(t, ok)
	require.Zero(t, start)
	require.Equal(t, Counts{}, Stats().Sub(before), "a wait that needed none is not counted")
	var n atomic.Int64
	ok, _ = s.Until(func() bool { return n.Add(1) > 100 })
	require.True(t, ok)
	require.Equal(t, uint64(1), Stats().Sub(before).Spun)

	before = Stats()
	t0 := time.Now()
	ok, start = s.Until(func() bool { return false })
	took := time.Since(t0)
	require.False(t, ok)
	require.NotZero(t, start)
	d := Stats().Sub(before)
	require.Equal(t, uint64(1), d.Parked)
	require.Equal(t, uint64(1), d.Expired+d.Lost, "the spin ended by its budget or a lost core")
	require.Less(t, took, 50*time.Millisecond, "a spin is bounded")
}

// A site that may not spin (more waiters than cores) never spins: a wait
// that does not hold at once yields and parks.
func TestNoSpinSiteParks(t *testing.T) {
	reset(t, false)
	s := NewSite(time.Second, false)
	require.Zero(t, s.Budget())
	var polls atomic.Int64
	before := Stats()
	ok, _ := s.Until(func() bool { polls.Add(1); return false })
	require.False(t, ok)
	require.Equal(t, int64(1+yields), polls.Load(), "one poll, then one a yield")
	d := Stats().Sub(before)
	require.Equal(t, uint64(1), d.Parked)
	require.Zero(t, d.Expired+d.Lost+d.Spun)
}

// A spin whose clock jumps (the thread did not run meanwhile) turns
// spinning off for every site, for a back-off that doubles while it keeps
// happening; after it, the next wait spins again (the probe), and a spin
// that keeps its core halves the back-off.
func TestLostCoreTurnsSpinningOff(t *testing.T) {
	reset(t, true)
	// A clock that ticks a microsecond a read, so that only the stalls
	// below jump it: a loaded test machine deschedules this test too, and
	// a probe must not lose its core to it.
	var ticks atomic.Int64
	real := clock
	ticks.Store(real())
	clock = func() int64 { return ticks.Add(int64(time.Microsecond)) }
	t.Cleanup(func() { clock = real })
	a := NewSite(2*time.Millisecond, true)
	b := NewSite(2*time.Millisecond, true)
	// A condition that stalls its poller once, as a descheduled thread is.
	stall := func() func() bool {
		var n atomic.Int64
		return func() bool {
			if n.Add(1) == 10 {
				ticks.Add(int64(2 * lostCore))
			}
			return false
		}
	}
	before := Stats()
	ok, _ := a.Until(stall())
	require.False(t, ok)
	require.Equal(t, uint64(1), Stats().Sub(before).Lost)
	require.True(t, Busy())
	require.Zero(t, b.Budget(), "every site stops spinning")
	require.Equal(t, int64(backoffMin), backoff.Load())

	// While off, a wait polls once and once a yield, without the clock.
	var polls atomic.Int64
	b.Until(func() bool { polls.Add(1); return false })
	require.Equal(t, int64(1+yields), polls.Load())

	// Lost again after the back-off: it doubles.
	offUntil.Store(0)
	a.Until(stall())
	require.Equal(t, int64(2*backoffMin), backoff.Load())

	// A probe that keeps its core halves it.
	offUntil.Store(0)
	var n atomic.Int64
	ok, _ = a.Until(func() bool { return n.Add(1) > 1000 })
	require.True(t, ok)
	require.Equal(t, int64(backoffMin), backoff.Load())
	require.False(t, Busy())

	// Where no more threads are runnable than there are CPUs, a jump is
	// the hypervisor's or an interrupt's: spinning goes on.
	isCrowded = func(bool) bool { return false }
	before = Stats()
	ok, _ = a.Until(stall())
	require.False(t, ok)
	require.Zero(t, Stats().Sub(before).Lost)
	require.Equal(t, uint64(1), Stats().Sub(before).Expired)
	require.False(t, Busy())
}

// A spin that runs out of budget while the machine is crowded turns
// spinning off too (the spinner held a core someone else wanted).
func TestExpiredSpinOnACrowdedMachine(t *testing.T) {
	reset(t, true)
	s := NewSite(100*time.Microsecond, true)
	ok, _ := s.Until(func() bool { return false })
	require.False(t, ok)
	require.True(t, Busy())
	require.Zero(t, NewSite(time.Millisecond, true).Budget())
}

// The budget follows the waits: a short spun wait leaves it, a parked wait
// within half the cap raises it to twice its length, a longer one halves
// it, never below minBudget.
func TestBudgetFollowsTheWaits(t *testing.T) {
	reset(t, false)
	s := NewSite(time.Millisecond, true)
	require.Equal(t, time.Millisecond, s.Budget(), "a new site spins its cap")
	long := now() - int64(10*time.Millisecond)
	s.Woke(long)
	require.Equal(t, 500*time.Microsecond, s.Budget())
	s.Woke(long)
	require.Equal(t, 250*time.Microsecond, s.Budget())
	for range 20 {
		s.Woke(long)
	}
	require.Equal(t, minBudget, s.Budget())
	s.Woke(now() - int64(200*time.Microsecond))
	b := s.Budget()
	require.GreaterOrEqual(t, b, 400*time.Microsecond)
	require.LessOrEqual(t, b, time.Millisecond)
	s.Woke(now() - int64(450*time.Microsecond))
	require.GreaterOrEqual(t, s.Budget(), 900*time.Microsecond)
	require.LessOrEqual(t, s.Budget(), time.Millisecond, "never past the cap")
}

// The running count of /proc/loadavg.
func TestRunnable(t *testing.T) {
	n, ok := runnable([]byte("1.18 1.75 1.53 3/84 13935\n"))
	require.True(t, ok)
	require.Equal(t, 3, n)
	for _, bad := range []string{"", "1.0 2.0 3.0", "1.0 2.0 3.0 x/84 1", "1.0 2.0 3.0 384 1"} {
		_, ok := runnable([]byte(bad))
		require.False(t, ok, bad)
	}
}

// A wait measured elsewhere (the MPI shim's poll, in C) counts and moves
// the budget as a wait of this package would.
func TestLearnFromAWaitMeasuredElsewhere(t *testing.T) {
	reset(t, false)
	s := NewSite(time.Millisecond, true)
	before := Stats()
	s.Learn(20*time.Millisecond, true) // slept through a long wait
	require.Equal(t, 500*time.Microsecond, s.Budget())
	s.Learn(300*time.Microsecond, false) // a spun one twice within the budget
	require.Equal(t, 600*time.Microsecond, s.Budget())
	s.Learn(100*time.Microsecond, false) // a short one leaves it
	require.Equal(t, 600*time.Microsecond, s.Budget())
	d := Stats().Sub(before)
	require.Equal(t, uint64(1), d.Parked)
	require.Equal(t, uint64(2), d.Spun)

	// A site that may not spin only counts.
	n := NewSite(time.Millisecond, false)
	n.Learn(time.Microsecond, false)
	require.Zero(t, n.Budget())
}
