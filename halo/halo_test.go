package halo

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
)

// Rank r fills its box with r*big + (index of the cell in its box), so every
// ghost value names the rank and cell it came from. After one exchange every
// face ghost (and, with Corners, every edge/corner ghost) equals the owning
// neighbour's cell; ghosts past a non-periodic edge stay untouched.
func TestGhostsEqualNeighbourCells(t *testing.T) {
	const big = 1 << 20
	shapes := [][]int{{13, 11}, {9, 7, 8}}
	for _, shape := range shapes {
		nd := len(shape)
		for _, ranks := range []int{1, 2, 3, 4, 6, 8} {
			for _, periodic := range []bool{false, true} {
				for _, ghost := range []int{1, 2} {
					for _, mode := range []Options{{}, {Corners: true}, {Phased: true}} {
						per := make([]bool, nd)
						for a := range per {
							per[a] = periodic
						}
						g, err := decomp.New(shape, ranks, nil, per)
						require.NoError(t, err)
						name := fmt.Sprintf("shape=%v/ranks=%d/periodic=%v/ghost=%d/mode=%+v", shape, ranks, periodic, ghost, mode)
						err = local.Run(ranks, func(c comm.Comm) error {
							return checkExchange(c, g, ghost, mode, big)
						})
						require.NoError(t, err, name)
					}
				}
			}
		}
	}
}

func checkExchange(c comm.Comm, g *decomp.Grid, ghost int, mode Options, big int) error {
	corners := mode.Corners || mode.Phased
	nd := g.NDim()
	box := g.Box(c.Rank())
	lay := decomp.NewLayout(box, ghost)
	field := make([]float64, lay.Len())
	for i := range field {
		field[i] = math.NaN()
	}
	value := func(rank int, global []int) float64 {
		b := g.Box(rank)
		idx := 0
		for a := range global {
			idx = idx*(b.Hi[a]-b.Lo[a]) + global[a] - b.Lo[a]
		}
		return float64(rank*big + idx)
	}
	all := decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
	for a := range nd {
		all.Lo[a], all.Hi[a] = -ghost, lay.N[a]+ghost
	}
	forCells(all, func(lc []int) {
		if inside(lc, lay.N) {
			field[lay.Index(lc...)] = value(c.Rank(), add(lc, box.Lo))
		}
	})
	mode.Tag = 100
	p, err := NewPlan(c, g, lay, mode)
	if err != nil {
		return err
	}
	// Two rounds: buffers are reused and the second must give the same ghosts.
	for range 2 {
		if err := p.Start(field); err != nil {
			return err
		}
		if err := p.Finish(field); err != nil {
			return err
		}
	}
	var bad error
	forCells(all, func(lc []int) {
		if bad != nil || inside(lc, lay.N) {
			return
		}
		outside := 0
		gc := add(lc, box.Lo)
		exists := true
		for a := range nd {
			if lc[a] < 0 || lc[a] >= lay.N[a] {
				outside++
			}
			if gc[a] < 0 || gc[a] >= g.Shape[a] {
				if !g.Periodic[a] {
					exists = false
				}
				gc[a] = (gc[a] + g.Shape[a]) % g.Shape[a]
			}
		}
		got := field[lay.Index(lc...)]
		if !exists || (outside > 1 && !corners) {
			if !math.IsNaN(got) {
				bad = fmt.Errorf("rank %d: ghost %v should be untouched, got %v", c.Rank(), lc, got)
			}
			return
		}
		want := value(g.Owner(gc), gc)
		if got != want {
			bad = fmt.Errorf("rank %d: ghost %v = %v, want %v (rank %d's cell %v)", c.Rank(), lc, got, want, g.Owner(gc), gc)
		}
	})
	if bad != nil {
		return bad
	}
	st := p.Stats()
	if mode.Phased && p.MessagesPerExchange() > 2*nd {
		return fmt.Errorf("rank %d: a phased plan sends %d messages, more than 2·%d", c.Rank(), p.MessagesPerExchange(), nd)
	}
	if st.Exchanges != 2 || st.Messages != int64(2*p.MessagesPerExchange()) {
		return fmt.Errorf("rank %d: stats %+v after 2 exchanges of %d messages", c.Rank(), st, p.MessagesPerExchange())
	}
	return nil
}

func inside(lc, n []int) bool {
	for a := range lc {
		if lc[a] < 0 || lc[a] >= n[a] {
			return false
		}
	}
	return true
}

func add(a, b []int) []int {
	s := make([]int, len(a))
	for i := range a {
		s[i] = a[i] + b[i]
	}
	return s
}

func forCells(b decomp.Box, f func(c []int)) {
	c := append([]int(nil), b.Lo...)
	if b.Empty() {
		return
	}
	for {
		f(c)
		a := len(c) - 1
		for ; a >= 0; a-- {
			c[a]++
			if c[a] < b.Hi[a] {
				break
			}
			c[a] = b.Lo[a]
		}
		if a < 0 {
			return
		}
	}
}

func TestOffsetsAndTags(t *testing.T) {
	for nd := 1; nd <= 3; nd++ {
		offs := Offsets(nd)
		require.Len(t, offs, pow3(nd)-1)
		for k, o := range offs {
			require.Equal(t, k, offsetIndex(o))
		}
	}
}

func pow3(n int) int {
	p := 1
	for range n {
		p *= 3
	}
	return p
}

func TestPlanRejectsThinBoxes(t *testing.T) {
	g, err := decomp.New([]int{8, 3}, 2, []int{1, 2}, nil)
	require.NoError(t, err)
	err = local.Run(2, func(c comm.Comm) error {
		_, err := NewPlan(c, g, decomp.NewLayout(g.Box(c.Rank()), 2), Options{})
		return err
	})
	require.ErrorContains(t, err, "fewer than the ghost width 2")
}
