package comm

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// No two subsystems share a tag, and every tag fits the least upper bound
// MPI guarantees (MPI_TAG_UB ≥ 32767).
func TestTagBlocksAreDisjoint(t *testing.T) {
	blocks := slices.Clone(TagBlocks)
	slices.SortFunc(blocks, func(a, b TagBlock) int { return a.First - b.First })
	for i, b := range blocks {
		require.GreaterOrEqual(t, b.First, 0, b.Name)
		require.LessOrEqual(t, b.First+b.Count-1, 32767, b.Name)
		if i > 0 {
			prev := blocks[i-1]
			require.LessOrEqual(t, prev.First+prev.Count, b.First, "%s overlaps %s", prev.Name, b.Name)
		}
	}
	// A level's two plans fit its stride.
	require.LessOrEqual(t, 2*27, TagMultigridStride)
}

// Every tag names its subsystem.
func TestTagName(t *testing.T) {
	require.Equal(t, "halo", TagName(TagHalo+4))
	require.Equal(t, "multigrid levels", TagName(TagMultigrid+3*TagMultigridStride+1))
	require.Equal(t, "checkpoint", TagName(TagCheckpoint))
	require.Equal(t, "fault notice", TagName(TagFault))
	require.Equal(t, "tag outside heat's blocks", TagName(29000))
}
