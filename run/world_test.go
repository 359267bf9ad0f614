package run

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A rank's default threads never oversubscribe its host: bound ranks use
// their own cores, ranks that share a mask split it.
func TestThreadsPerRank(t *testing.T) {
	require.Equal(t, 1, threadsPerRank(1, 2, 2), "mpirun -np 2 --bind-to core on 2 CPUs")
	require.Equal(t, 4, threadsPerRank(4, 16, 4), "srun -c 4, four ranks on 16 CPUs")
	require.Equal(t, 4, threadsPerRank(16, 16, 4), "four unbound ranks share 16 CPUs")
	require.Equal(t, 1, threadsPerRank(2, 2, 4), "oversubscribed already: one each")
	require.Equal(t, 2, threadsPerRank(8, 0, 4), "host size unknown: share the mask")
}
