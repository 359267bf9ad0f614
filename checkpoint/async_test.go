package checkpoint

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
)

// Begin takes the field as it is when Begin returns: the caller may change
// it at once (the solver steps on) and the checkpoint still holds the
// field of its step, on every rank count; a file error of the background
// writing surfaces at Finish, on every rank, and leaves no checkpoint.
func TestBeginSnapshotsTheField(t *testing.T) {
	shape := []int{23, 17}
	for _, ranks := range []int{1, 3} {
		root := t.TempDir()
		g, err := decomp.New(shape, ranks, nil, nil)
		require.NoError(t, err)
		meta := Meta{Step: 5, Config: []byte(`{"grid":{"shape":[23,17]}}`)}
		err = local.Run(ranks, func(c comm.Comm) error {
			lay, u := rankField(g, c.Rank(), 1, func(idx []int) float64 { return value(shape, idx, 5) })
			p, err := Begin(c, g, lay, u, root, meta, Options{Chunk: []int{6, 5}, Workers: 2})
			if err != nil {
				return err
			}
			for i := range u {
				u[i] = -1 // the next steps
			}
			_, err = p.Finish()
			return err
		})
		require.NoError(t, err)
		errs := readRanks(t, filepath.Join(root, StepName(5)), 2, Options{}, func(idx []int) float64 { return value(shape, idx, 5) })
		for _, e := range errs {
			require.NoError(t, e)
		}

		// A write that fails in the background.
		root = t.TempDir()
		fail := faultFS{fail: func(op, path string) error {
			if op == "WriteFile" && strings.Contains(path, filepath.Join("u", "c")) {
				return errInjected
			}
			return nil
		}}
		errs = make([]error, ranks)
		err = local.Run(ranks, func(c comm.Comm) error {
			lay, u := rankField(g, c.Rank(), 1, func(idx []int) float64 { return value(shape, idx, 6) })
			opt := Options{Chunk: []int{6, 5}}
			if c.Rank() == ranks-1 {
				opt.FS = fail
			}
			p, err := Begin(c, g, lay, u, root, Meta{Step: 6}, opt)
			if err != nil {
				return fmt.Errorf("begin: %w", err)
			}
			_, errs[c.Rank()] = p.Finish()
			return nil
		})
		require.NoError(t, err)
		for r, e := range errs {
			require.Error(t, e, "rank %d", r)
			require.ErrorContains(t, e, StepName(6), "rank %d", r)
		}
		require.True(t, errors.Is(errs[ranks-1], errInjected))
		_, err = Resolve(root)
		require.Error(t, err, "no checkpoint committed")
	}
}

// The spare buffers: a buffer given back is taken again (the smallest that
// fits), never more is kept than was ever taken at once, and a checkpoint
// written with reused buffers holds its own values, not the last one's.
func TestSpareBuffers(t *testing.T) {
	var p bufferPool
	a, b := p.take(100), p.take(50)
	p.give(a)
	p.give(b)
	require.Equal(t, 150, p.held)
	c := p.take(40)
	require.Equal(t, 50, cap(c), "the smallest buffer that fits")
	require.Len(t, c, 40)
	p.give(c)
	p.give(make([]byte, 1000)) // more than was ever taken at once: dropped
	require.Equal(t, 150, p.held)

	root := t.TempDir()
	for step := 1; step <= 3; step++ {
		writeField(t, root, []int{37, 29}, 3, step, Options{Chunk: []int{8, 8}, Workers: 2})
		path := filepath.Join(root, StepName(step))
		requireAll(t, readRanks(t, path, 2, Options{}, func(idx []int) float64 { return value([]int{37, 29}, idx, step) }))
	}
}

// A commit through Begin and Finish leaves the pruned checkpoints' removal
// to the background: after Settle only the newest Keep remain, every one
// reads back, and the next commit under the root waits for the removal
// before it lists the root. Write removes them before it returns.
func TestPrunedInTheBackground(t *testing.T) {
	shape := []int{40, 30}
	root := t.TempDir()
	for step := 1; step <= 4; step++ {
		_, errs := writeRanksAs(root, shape, 2, step, func(int) Options { return Options{Keep: 2} }, true)
		for r, err := range errs {
			require.NoError(t, err, "step %d, rank %d", step, r)
		}
	}
	require.NoError(t, Settle(root))
	require.NoError(t, Settle(root), "a second Settle has nothing to wait for")
	entries, err := filepath.Glob(filepath.Join(root, "step-*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(root, StepName(3)), filepath.Join(root, StepName(4))}, entries)
	for _, step := range []int{3, 4} {
		requireAll(t, readRanks(t, filepath.Join(root, StepName(step)), 3, Options{}, func(idx []int) float64 { return value(shape, idx, step) }))
	}
	writeField(t, root, shape, 1, 5, Options{Keep: 1})
	entries, err = filepath.Glob(filepath.Join(root, "step-*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(root, StepName(5))}, entries, "Write prunes before it returns")
}
