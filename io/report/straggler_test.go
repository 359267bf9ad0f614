package report

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func ranksOf(compute, wait []float64) []Rank {
	r := make([]Rank, len(compute))
	for i := range r {
		r[i] = Rank{Rank: i, ComputeS: compute[i], HaloWaitS: wait[i] / 2, ReduceS: wait[i] / 2}
	}
	return r
}

func TestSlowestByCompute(t *testing.T) {
	// Rank 2 computes 1.5 s where the median rank computes 1.0 s; the
	// others wait for it.
	s := Slowest(ranksOf([]float64{1.0, 1.0, 1.5, 0.9}, []float64{0.5, 0.5, 0.0, 0.6}), 2)
	require.Equal(t, 2, s.Rank)
	require.Equal(t, "compute", s.Cause)
	require.InDelta(t, 0.5, s.ExcessS, 1e-12)
	require.InDelta(t, 25, s.ExcessPct, 1e-9, "0.5 s of a 2 s run")
	require.InDelta(t, 1.5, s.BusyS, 1e-12)
	require.InDelta(t, 1.5, s.MedianS, 1e-12) // busy: 1.5 1.5 1.5 1.5
}

func TestSlowestByWaiting(t *testing.T) {
	// Equal work, but rank 1 waits 0.8 s more than the others for its
	// messages: a slow link, not a slow core.
	s := Slowest(ranksOf([]float64{1.0, 1.02, 1.0}, []float64{0.1, 0.9, 0.1}), 1.1)
	require.Equal(t, 1, s.Rank)
	require.Equal(t, "waiting", s.Cause)
	require.InDelta(t, 100*0.8/1.1, s.ExcessPct, 1e-9)
}

// Thousands of ranks with boxes so small that the median computes next to
// nothing: the excess is still a share of the wall time, at most 100%.
func TestSlowestManyTinyRanks(t *testing.T) {
	compute, wait := make([]float64, 5000), make([]float64, 5000)
	for i := range compute {
		compute[i], wait[i] = 1e-6, 0.5
	}
	compute[17] = 0.1
	s := Slowest(ranksOf(compute, wait), 0.6)
	require.Equal(t, 17, s.Rank)
	require.InDelta(t, 100*(0.1-1e-6)/0.6, s.ExcessPct, 1e-9)
	require.LessOrEqual(t, Slowest(ranksOf(compute, wait), 0.01).ExcessPct, 100.0)
}

func TestSlowestNeedsTwoRanks(t *testing.T) {
	require.Nil(t, Slowest(ranksOf([]float64{1}, []float64{0}), 1))
	s := Slowest(ranksOf([]float64{2, 2}, []float64{0, 0}), 2)
	require.Zero(t, s.ExcessPct)
}
