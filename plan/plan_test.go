package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Decide picks the method each equation, scheme, solver and medium runs
// with, and the ghost width it allows.
func TestDecideMethods(t *testing.T) {
	for _, c := range []struct {
		c     Case
		want  Method
		ghost int
	}{
		{Case{Scheme: "explicit", Ghost: 3}, Explicit, 0},
		{Case{Scheme: "explicit", Solver: "multigrid", Ghost: 1, Media: true}, Explicit, 1},
		{Case{Scheme: "explicit", Ghost: 1, PerCellFaces: true}, Explicit, 1},
		{Case{Scheme: "explicit", Ghost: 1, SourceInTime: true}, Explicit, 1},
		{Case{Scheme: "backward-euler", Ghost: 1}, Multigrid, 1},
		{Case{Scheme: "crank-nicolson", Solver: "mgcg", Ghost: 1}, MGCG, 1},
		{Case{Scheme: "backward-euler", Ghost: 1, Media: true}, Multigrid, 1},
		{Case{Scheme: "backward-euler", Solver: "mgcg", Ghost: 1, Media: true}, MGCG, 1},
		{Case{Poisson: true, Solver: "multigrid", Ghost: 1}, Multigrid, 1},
		{Case{Poisson: true, Solver: "multigrid", Ghost: 1, Media: true}, Multigrid, 1},
		{Case{Poisson: true, Solver: "multigrid", Ghost: 1, Media: true, FMG: true}, MGCG, 1},
		{Case{Poisson: true, Solver: "mgcg", Ghost: 1, Media: true}, MGCG, 1},
		{Case{Poisson: true, Solver: "mgcg", Ghost: 1}, MGCG, 1},
		{Case{Poisson: true, Solver: "jacobi", Ghost: 1}, Jacobi, 0},
		{Case{Poisson: true, Solver: "jacobi", Ghost: 1, Media: true}, Jacobi, 1},
	} {
		p, r := Decide(c.c)
		require.Nil(t, r, "%+v", c.c)
		require.Equal(t, c.want, p.Method, "%+v", c.c)
		require.Equal(t, c.ghost, p.MaxGhost, "%+v", c.c)
		require.Equal(t, c.want == Explicit, p.StabilityLimit, "%+v", c.c)
		require.Equal(t, c.c.Media && c.want == Multigrid, p.KrylovOnStall, "%+v", c.c)
	}
}

// Every combination nothing is built for is refused naming the key to
// change.
func TestDecideRefusals(t *testing.T) {
	for _, c := range []struct {
		c   Case
		key string
	}{
		{Case{Scheme: "backward-euler", Solver: "jacobi", Ghost: 1}, "equation.solver"},
		{Case{Scheme: "explicit", Solver: "mgcg", Ghost: 1}, "equation.solver"},
		{Case{Poisson: true, Solver: "multigrid", Ghost: 1, Media: true, Smoother: "rbgs"}, "multigrid.smoother"},
		{Case{Scheme: "backward-euler", Ghost: 1, Media: true, Smoother: "rbgs"}, "multigrid.smoother"},
		{Case{Scheme: "explicit", Ghost: 2, Media: true}, "grid.ghost"},
		{Case{Scheme: "backward-euler", Ghost: 2}, "grid.ghost"},
		{Case{Poisson: true, Solver: "mgcg", Ghost: 2}, "grid.ghost"},
		{Case{Scheme: "explicit", Ghost: 2, PerCellFaces: true}, "grid.ghost"},
		{Case{Scheme: "explicit", Ghost: 3, SourceInTime: true}, "grid.ghost"},
	} {
		_, r := Decide(c.c)
		require.NotNil(t, r, "%+v", c.c)
		require.Equal(t, c.key, r.Key, "%+v: %s", c.c, r.Reason)
	}
	// Uniform red-black smoothing and full multigrid are built, and full
	// multigrid in media (its cycle then mgcg's first guess).
	_, r := Decide(Case{Poisson: true, Solver: "multigrid", Ghost: 1, Smoother: "rbgs", FMG: true})
	require.Nil(t, r)
	p, r := Decide(Case{Poisson: true, Solver: "multigrid", Ghost: 1, Media: true, FMG: true})
	require.Nil(t, r)
	require.Equal(t, MGCG, p.Method)
}

// StepsTo counts the last, shortened step, and a step within rounding of
// the end as reaching it.
func TestStepsTo(t *testing.T) {
	require.Equal(t, 10, StepsTo(1, 0.1))
	require.Equal(t, 4, StepsTo(1, 0.3))
	require.Equal(t, 3, StepsTo(0.3, 0.1)) // 0.3/0.1 = 2.9999999999999996
}

// Hierarchy halves the even axes of at least 8 cells whose cells are the
// finest, until none can be.
func TestHierarchy(t *testing.T) {
	require.Equal(t, [][]int{{64, 64}, {32, 32}, {16, 16}, {8, 8}, {4, 4}}, Hierarchy([]int{64, 64}, []float64{1, 1}, 0))
	require.Equal(t, [][]int{{75, 100}, {75, 50}}, Hierarchy([]int{75, 100}, []float64{1, 1}, 0))
	require.Len(t, Hierarchy([]int{64, 64}, []float64{1, 1}, 2), 2)
	// Cells twice as long along x: x waits until y's are as coarse.
	require.Equal(t, [][]int{{64, 32}, {32, 32}, {16, 16}}, Hierarchy([]int{64, 32}, []float64{1, 1}, 3))
	// In media the coarser axes go on where the finest can no more: an
	// odd axis, a thin stack.
	require.Equal(t, [][]int{{75, 100}, {75, 50}, {75, 25}}, HierarchyOf([]int{75, 100}, []float64{1, 1}, 0, true))
	stack := []float64{0.004, 0.032, 0.032}
	require.Equal(t, [][]int{{16, 64, 64}, {8, 64, 64}, {4, 32, 32}, {4, 16, 16}}, Hierarchy([]int{16, 64, 64}, stack, 0))
	require.Equal(t, [][]int{{16, 64, 64}, {8, 64, 64}, {4, 32, 32}, {4, 16, 16}, {4, 8, 8}, {4, 4, 4}},
		HierarchyOf([]int{16, 64, 64}, stack, 0, true))
	require.Equal(t, Hierarchy([]int{64, 64}, []float64{1, 1}, 0), HierarchyOf([]int{64, 64}, []float64{1, 1}, 0, true))
}
