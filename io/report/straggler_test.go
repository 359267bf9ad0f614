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
	s := Slowest(ranksOf([]float64{1.0, 1.0, 1.5, 0.9}, []float64{0.5, 0.5, 0.0, 0.6}))
	require.Equal(t, 2, s.Rank)
	require.Equal(t, "compute", s.Cause)
	require.InDelta(t, 50, s.ExcessPct, 1e-9)
	require.InDelta(t, 1.5, s.BusyS, 1e-12)
	require.InDelta(t, 1.5, s.MedianS, 1e-12) // busy: 1.5 1.5 1.5 1.5
}

func TestSlowestByWaiting(t *testing.T) {
	// Equal work, but rank 1 waits 0.8 s more than the others for its
	// messages: a slow link, not a slow core.
	s := Slowest(ranksOf([]float64{1.0, 1.02, 1.0}, []float64{0.1, 0.9, 0.1}))
	require.Equal(t, 1, s.Rank)
	require.Equal(t, "waiting", s.Cause)
	require.InDelta(t, 80, s.ExcessPct, 1e-9)
}

func TestSlowestNeedsTwoRanks(t *testing.T) {
	require.Nil(t, Slowest(ranksOf([]float64{1}, []float64{0})))
	s := Slowest(ranksOf([]float64{2, 2}, []float64{0, 0}))
	require.Zero(t, s.ExcessPct)
}
