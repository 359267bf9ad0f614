package benchmarks

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A tiny roofline runs every point, fills every figure, and prints a row
// per point after the bandwidth lines.
func TestRooflineTable(t *testing.T) {
	var out bytes.Buffer
	pts, err := Roofline(&out, RooflineOptions{Dims: 2, Sizes: []int{32, 48}, Threads: []int{1, 2}, Ghosts: []int{1, 3},
		Target: 20 * time.Millisecond, CopyMiB: 1})
	require.NoError(t, err)
	require.Len(t, pts, 8)
	for _, p := range pts {
		require.Greater(t, p.MUpdates, 0.0)
		require.Greater(t, p.Ceiling, 0.0)
		require.Greater(t, p.InCache, 0.0)
		require.InDelta(t, p.MUpdates/p.InCache, p.CacheFraction(), 1e-12)
		require.InDelta(t, p.MUpdates*16/1e3, p.GBs, 1e-9)
		require.Zero(t, p.Steps%p.Ghost, "whole temporal blocks")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2+2+1+8+1)
	require.Contains(t, lines[0], "copy bandwidth, 1 thread")
	require.Contains(t, lines[2], "in cache (n=256), 1 thread(s), kernel "+pts[0].Kernel)
	require.Contains(t, lines[4], "in-cache")
	_, err = Roofline(&out, RooflineOptions{Dims: 4, Sizes: []int{4}, Threads: []int{1}, Ghosts: []int{1}, Target: time.Millisecond, CopyMiB: 1})
	require.ErrorContains(t, err, "dims=4", "the failing point is named")
}
