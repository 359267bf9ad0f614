package benchmarks

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The base grows like a process grid over it: the long axis first, square
// grids alternately, and the cells per core are exactly the base's, also
// past the base's own cell counts.
func TestWeakShapeGrowsLikeAProcessGrid(t *testing.T) {
	for _, tc := range []struct {
		base     []int
		cores    int
		periodic []bool
		want     []int
	}{
		{[]int{64, 64}, 1, nil, []int{64, 64}},
		{[]int{64, 64}, 2, nil, []int{128, 64}},
		{[]int{64, 64}, 4, nil, []int{128, 128}},
		{[]int{64, 64}, 8, nil, []int{256, 128}},
		{[]int{64, 32}, 2, nil, []int{128, 32}}, // splitting y cuts 32 cells, x would cut 64
		{[]int{32, 64}, 2, nil, []int{32, 128}},
		{[]int{16, 16, 16}, 8, nil, []int{32, 32, 32}},
		{[]int{16, 16}, 1024, nil, []int{512, 512}}, // 32 × 32 > 16 cells per axis
		{[]int{64, 64}, 6, nil, []int{192, 128}},
	} {
		got, err := WeakShape(tc.base, tc.cores, tc.periodic)
		require.NoError(t, err, "%v × %d", tc.base, tc.cores)
		require.Equal(t, tc.want, got, "%v × %d", tc.base, tc.cores)
		require.Equal(t, cellsOf(tc.base)*tc.cores, cellsOf(got))
	}
}

func TestWeakShapeRejectsBadInput(t *testing.T) {
	_, err := WeakShape([]int{64, 0}, 2, nil)
	require.ErrorContains(t, err, "base shape 64x0 has 0 cells along x")
	_, err = WeakShape([]int{64, 64}, 0, nil)
	require.ErrorContains(t, err, "need at least 1 core, got 0")
}
