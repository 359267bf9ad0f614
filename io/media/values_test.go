package media

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// doneAfter is a context that turns done at the n-th time it is asked.
type doneAfter struct {
	n, asked atomic.Int64
}

func (c *doneAfter) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *doneAfter) Done() <-chan struct{}       { return nil }
func (c *doneAfter) Value(any) any               { return nil }
func (c *doneAfter) Err() error {
	if c.asked.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

// CheckHeaders reads no value; CheckValues reads them all, a block at a
// time, and stops at the next block once its context is done: a bad value
// in the map's second block is never reached.
func TestCheckValuesStopsWithinABlock(t *testing.T) {
	grid := []int{2 * maxBlock / 1024, 1024} // two blocks of a scan
	vals := make([]float64, grid[0]*grid[1]) // k = 0: a hole, a valid value
	vals[len(vals)-1] = -1
	path := writeNPY(t, t.TempDir(), "k.npy", "<f8", grid, vals)
	s := &Spec{Shape: grid, K: 1, KMap: path}
	require.NoError(t, s.CheckHeaders())
	var me *MapError
	require.ErrorAs(t, s.CheckValues(context.Background()), &me)
	require.Equal(t, []int{grid[0] - 1, grid[1] - 1}, me.Cell)
	require.ErrorAs(t, s.Check(), &me, "Check is both")

	ctx := &doneAfter{}
	ctx.n.Store(2) // done once the first block is read
	err := s.CheckValues(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, errors.As(err, &me), "the stop, not the value in the block it never read")
}
