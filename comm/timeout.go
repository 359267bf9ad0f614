package comm

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Deadliner is a Comm whose waits give up: comm/mpi's, where a rank that
// stops (SIGSTOP, a hung filesystem, a bug that spins outside MPI) would
// otherwise leave every other rank waiting for it for ever. In-process
// ranks (comm/local) cannot stop one by one and do not implement it.
//
// Once a wait (a Waitall or a collective) has lasted the timeout, or this
// rank hears that another rank's did, the rank takes a roll call of the
// world (see TimeoutError) and every operation from then on returns the
// same *TimeoutError at once: the job is over, and its ranks only decide
// who reports it.
type Deadliner interface {
	// SetTimeout bounds every wait from now on, and the one in progress,
	// to d from its start; 0 waits for ever. Safe from any goroutine.
	SetTimeout(d time.Duration)
	// SetStep gives the waits the caller's step counter, which a roll call
	// reports (TimeoutError.Step). It is called from the goroutine that
	// uses the Comm, inside the wait that gives up.
	SetStep(step func() int)
	// Fault is the error that ended this rank's communication, or nil.
	Fault() *TimeoutError
}

// Wait is what one rank was waiting for when a job's communication
// stalled, as a roll call reports it.
type Wait struct {
	Rank int
	// Op is the operation: "Waitall", "Allreduce", "Bcast", "Barrier",
	// "Gatherv".
	Op string
	// Peers are the ranks whose messages a Waitall still lacked (sends
	// not taken or receives not arrived), sorted; nil for a collective,
	// where MPI does not say which ranks have not joined.
	Peers []int
	// Tag is the tag of the first missing message, -1 for a collective.
	Tag int
	// Waited is how long the rank had waited.
	Waited time.Duration
	// TimedOut is whether the rank's own timeout ran out; false when
	// another rank's notice ended its wait.
	TimedOut bool
	// Step is the rank's step (Deadliner.SetStep), -1 if unknown.
	Step int
}

// TimeoutError is the end of a job's communication: a wait on some rank
// outlasted the timeout. The rank whose wait ran out tells every other rank
// (a small message each), and every rank that is itself waiting answers
// with what it waits for; for a grace of a twentieth of the timeout (at
// least 0.1 s, at most 10 s) each rank collects the answers. The ranks that
// do not answer are Silent: stopped, dead, or busy outside MPI for the
// whole grace. The lowest rank that answered (Reporter) reports the fault
// for the job; every rank gets the roll call it saw.
type TimeoutError struct {
	Wait                   // this rank's own
	Size     int           // ranks in the world
	Timeout  time.Duration // the timeout in force on this rank
	Others   []Wait        // the other ranks that answered, by rank
	Silent   []int         // the ranks that did not answer, sorted
	Reporter int           // the rank that reports the fault
}

// Error names this rank, its wait and the silent ranks.
func (e *TimeoutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "comm: rank %d of %d: ", e.Rank, e.Size)
	if e.TimedOut {
		fmt.Fprintf(&b, "no progress for %v", e.Waited.Round(time.Millisecond))
	} else {
		fmt.Fprintf(&b, "stopped after %v by another rank's timeout", e.Waited.Round(time.Millisecond))
	}
	fmt.Fprintf(&b, " in %s", e.Wait.What())
	if e.Step >= 0 {
		fmt.Fprintf(&b, " at step %d", e.Step)
	}
	if len(e.Silent) > 0 {
		fmt.Fprintf(&b, "; %s did not answer", RankList(e.Silent))
	}
	return b.String()
}

// What is the operation and what it lacked: "Waitall for rank 2 (halo,
// tag 4)", "Allreduce".
func (w Wait) What() string {
	if len(w.Peers) == 0 {
		return w.Op
	}
	s := fmt.Sprintf("%s for %s", w.Op, RankList(w.Peers))
	if w.Tag >= 0 {
		s += fmt.Sprintf(" (%s, tag %d)", TagName(w.Tag), w.Tag)
	}
	return s
}

// Waits are every rank's wait that the roll call saw, this rank's among
// them, by rank.
func (e *TimeoutError) Waits() []Wait {
	all := append(slices.Clone(e.Others), e.Wait)
	slices.SortFunc(all, func(a, b Wait) int { return a.Rank - b.Rank })
	return all
}

// RankList is "rank 3" or "ranks 1, 4, 7" (the first 8, then how many
// more).
func RankList(ranks []int) string {
	if len(ranks) == 1 {
		return fmt.Sprintf("rank %d", ranks[0])
	}
	const shown = 8
	parts := make([]string, 0, shown+1)
	for i, r := range ranks {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(ranks)-shown))
			break
		}
		parts = append(parts, fmt.Sprint(r))
	}
	return "ranks " + strings.Join(parts, ", ")
}

// DeadlinerOf is c as a Deadliner, if it is one.
func DeadlinerOf(c Comm) (Deadliner, bool) {
	d, ok := c.(Deadliner)
	return d, ok
}
