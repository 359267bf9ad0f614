package benchmarks

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/internal/team"
	"heat/multigrid"
	"heat/operator"
	"heat/plan"
)

// The multigrid model: one rank pays only compute (every level's cells ×
// visits); with a free network the fine level scales as the box shrinks;
// with latency the coarse levels' share grows with the ranks; W-cycles
// visit level l 2^l times; the gather edge appears once there are ranks to
// gather from.
func TestMGModel(t *testing.T) {
	shapes := plan.Hierarchy([]int{1024, 1024}, []float64{1, 1}, 0)
	m := MGModel{TCell: 1e-9, Passes: 10, Exchanges: 9, Cycle: multigrid.V, GatherBelow: 32, GatherCells: 1 << 14}
	one, err := m.Predict(shapes, 1)
	require.NoError(t, err)
	want := 0.0
	for _, s := range shapes {
		want += 10 * float64(s[0]*s[1]) * 1e-9
	}
	require.InDelta(t, want, one.CycleS, 1e-15)
	for _, lv := range one.Levels {
		require.Zero(t, lv.HaloS)
		require.Zero(t, lv.GatherS)
	}

	free, err := m.Predict(shapes, 16)
	require.NoError(t, err)
	require.InDelta(t, one.Levels[0].ComputeS/16, free.Levels[0].ComputeS, 1e-15)

	m.Network = Network{Alpha: 2e-6, Beta: 1e-10}
	var last float64
	for _, p := range []int{2, 16, 256} {
		pr, err := m.Predict(shapes, p)
		require.NoError(t, err)
		require.Greater(t, pr.CoarseShare, last, "coarse share grows with the ranks")
		last = pr.CoarseShare
		edge := 0.0
		for _, lv := range pr.Levels {
			edge += lv.GatherS
		}
		require.Greater(t, edge, 0.0, "%d ranks gather", p)
	}

	m.Cycle = multigrid.W
	w, err := m.Predict(shapes, 1)
	require.NoError(t, err)
	m.Cycle = multigrid.F
	f, err := m.Predict(shapes, 1)
	require.NoError(t, err)
	for l := range w.Levels {
		require.Equal(t, 1<<l, w.Levels[l].Visits)
		require.Equal(t, l+1, f.Levels[l].Visits)
	}
	require.NoError(t, m.FitPasses(shapes, 0.02))
	fit, err := m.Predict(shapes, 1)
	require.NoError(t, err)
	require.InDelta(t, 0.02, fit.CycleS, 1e-12)
}

// The model hands boxes on as multigrid does: its ranks per level are
// those the solver's own hierarchy reports, agglomeration stages included,
// on square, uneven and 3D process grids.
func TestMGModelAgglomeratesAsTheSolver(t *testing.T) {
	for _, c := range []struct {
		shape       []int
		ranks       int
		gatherCells int
	}{{[]int{256, 256}, 16, 256}, {[]int{256, 256}, 12, 256}, {[]int{256, 256}, 16, 0}, {[]int{64, 64, 64}, 8, 64}} {
		length := make([]float64, len(c.shape))
		for a := range length {
			length[a] = 1
		}
		shapes := plan.Hierarchy(c.shape, length, 0)
		opt := multigrid.Options{GatherCells: c.gatherCells}
		m := MGModel{TCell: 1e-9, Passes: 10, Exchanges: 7, GatherBelow: 32, GatherCells: c.gatherCells}
		if m.GatherCells == 0 {
			m.GatherCells = 1 << 14
		}
		pr, err := m.Predict(shapes, c.ranks)
		require.NoError(t, err)
		var model []int
		for _, lv := range pr.Levels {
			model = append(model, lv.Ranks)
		}
		dims, err := decomp.AutoDims(c.shape, c.ranks, nil)
		require.NoError(t, err)
		var solver []int
		require.NoError(t, local.Run(c.ranks, func(cm comm.Comm) error {
			topo, err := decomp.New(c.shape, c.ranks, dims, nil)
			if err != nil {
				return err
			}
			faces := make([][2]operator.Face, len(c.shape))
			mg, err := multigrid.New(cm, topo, multigrid.Problem{Shape: c.shape, Length: length, Faces: faces, Op: multigrid.Operator{Beta: 1}}, opt, team.New(1, false))
			if err != nil {
				return err
			}
			if cm.Rank() == 0 {
				solver = mg.Stats().Ranks
			}
			return nil
		}))
		t.Logf("%v on %d ranks (%v), GatherCells %d: levels on %v ranks", c.shape, c.ranks, dims, c.gatherCells, solver)
		require.Equal(t, solver, model, "%v on %d ranks", c.shape, c.ranks)
		require.Less(t, slices.Min(solver), c.ranks)
	}
}

// The step search for Crank–Nicolson's accuracy stops where the error
// meets the target, and where halving the step stops reducing it (a
// floor) instead of halving on towards the explicit step.
func TestMatchAccuracyStopsAtTheFloor(t *testing.T) {
	tries := 0
	run := func(floor float64) func(dt float64) (solveRun, error) {
		tries = 0
		return func(dt float64) (solveRun, error) {
			tries++
			return solveRun{err: max(dt*dt, floor)}, nil
		}
	}
	r, met, err := matchAccuracy(0.01, 1e-9, 1e-6, run(0))
	require.NoError(t, err)
	require.True(t, met)
	require.LessOrEqual(t, r.err, 1e-6)
	require.Equal(t, 5, tries, "0.01 … 0.000625: the first dt with dt² ≤ 1e-6")
	r, met, err = matchAccuracy(0.01, 1e-9, 1e-10, run(1e-7))
	require.NoError(t, err)
	require.False(t, met)
	require.Equal(t, 1e-7, r.err)
	require.Less(t, tries, 10, "stops at the floor, not after %d halvings", tries)
}
