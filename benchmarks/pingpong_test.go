package benchmarks

import (
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
)

// PingPong runs over comm/local, small and large, with idle ranks too, and
// every rank gets the same positive time.
func TestPingPongLocal(t *testing.T) {
	for _, ranks := range []int{2, 3} {
		for _, bytes := range []int{0, 8, 1 << 16} {
			got := make([]float64, ranks)
			require.NoError(t, local.Run(ranks, func(c comm.Comm) error {
				var err error
				got[c.Rank()], err = PingPong(c, bytes, 50)
				return err
			}))
			require.Greater(t, got[0], 0.0, "ranks=%d bytes=%d", ranks, bytes)
			for r := range got {
				require.Equal(t, got[0], got[r], "rank %d", r)
			}
		}
	}
}

func TestPingPongRejects(t *testing.T) {
	_, err := PingPong(local.NewWorld(1).Comm(0), 8, 10)
	require.EqualError(t, err, "benchmarks: PingPong needs 2 ranks, the world has 1")
	for _, tc := range []struct {
		bytes, iters int
		want         string
	}{
		{12, 10, "benchmarks: PingPong of 12 bytes: messages carry float64 values, so bytes must be a multiple of 8"},
		{8, 0, "benchmarks: PingPong of 0 round trips: need at least 1"},
	} {
		err := local.Run(2, func(c comm.Comm) error {
			_, err := PingPong(c, tc.bytes, tc.iters)
			return err
		})
		require.EqualError(t, err, tc.want)
	}
}
