package decomp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Runs joins rows one stride apart and of one length, in order, and
// nothing else; Shares gives every worker a contiguous slice of rows whose
// cells come within a row of an equal share.
func TestRunsAndShares(t *testing.T) {
	rows := []Span{{Start: 10, N: 4}, {Start: 20, N: 4}, {Start: 30, N: 4}, {Start: 40, N: 3}, {Start: 50, N: 3}, {Start: 70, N: 3}}
	require.Equal(t, []Run{{Start: 10, N: 4, Count: 3}, {Start: 40, N: 3, Count: 2}, {Start: 70, N: 3, Count: 1}}, Runs(rows, 10))
	for _, workers := range []int{1, 2, 3, 4, 7} {
		share := Shares(rows, workers)
		require.Len(t, share, workers+1)
		require.Equal(t, 0, share[0])
		require.Equal(t, len(rows), share[workers])
		for w := range workers {
			require.LessOrEqual(t, share[w], share[w+1])
			cells := 0
			for _, r := range rows[share[w]:share[w+1]] {
				cells += r.N
			}
			// 20 cells: each worker within one row (4 cells) of 20/workers.
			require.InDelta(t, 20.0/float64(workers), float64(cells), 4, "workers %d, worker %d", workers, w)
		}
	}
}
