package report

import (
	"slices"
)

// Straggler names the rank a synchronised run waited for. Every step ends
// when the slowest rank is done, so one slow rank slows all of them; the
// average hides it, the per-rank times show it.
type Straggler struct {
	Rank int `json:"rank"`
	// BusyS is the rank's compute + halo wait + reduction time, and MedianS
	// the median of that over all ranks.
	BusyS   float64 `json:"busy_s"`
	MedianS float64 `json:"median_s"`
	// ExcessS is how much longer than the median rank it computed (or
	// waited): the time the others waited for it; ExcessPct is that in
	// percent of the run's wall time (at most 100, however many ranks: a
	// median near zero, as with thousands of tiny boxes, cannot inflate it).
	ExcessS   float64 `json:"excess_s"`
	ExcessPct float64 `json:"excess_pct"`
	// Cause is "compute" when the rank's own work made it slow (more cells,
	// a slower core, a noisy neighbour) and "waiting" when it waited longer
	// than the others for messages (a slow link or a slow peer).
	Cause string `json:"cause"`
}

// StragglerWarnPct is the excess (percent of the wall time) above which
// heat run warns about its slowest rank.
const StragglerWarnPct = 10

// Slowest finds the straggler of a run from its per-rank times: the rank
// with the most compute time, its excess over the median, and whether its
// compute or its waiting (halo and reductions) stands out more against the
// median rank; wall is the run's wall time. Nil for fewer than two ranks.
func Slowest(ranks []Rank, wall float64) *Straggler {
	if len(ranks) < 2 {
		return nil
	}
	compute := make([]float64, len(ranks))
	wait := make([]float64, len(ranks))
	busy := make([]float64, len(ranks))
	slow := 0
	for i, r := range ranks {
		compute[i], wait[i] = r.ComputeS, r.HaloWaitS+r.ReduceS
		busy[i] = compute[i] + wait[i]
		if compute[i] > compute[slow] {
			slow = i
		}
	}
	mc, mw, mb := median(compute), median(wait), median(busy)
	s := &Straggler{Rank: ranks[slow].Rank, BusyS: busy[slow], MedianS: mb, Cause: "compute", ExcessS: compute[slow] - mc}
	// The rank that waited longest beyond the median, if that beats the
	// compute excess, is what held the run up.
	w := 0
	for i := range wait {
		if wait[i] > wait[w] {
			w = i
		}
	}
	if wait[w]-mw > compute[slow]-mc {
		s.Rank, s.BusyS, s.Cause, s.ExcessS = ranks[w].Rank, busy[w], "waiting", wait[w]-mw
	}
	if wall > 0 {
		s.ExcessPct = min(100, 100*s.ExcessS/wall)
	}
	return s
}

// median of v (the mean of the middle two for an even count).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
