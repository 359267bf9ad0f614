package operator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/decomp"
	"heat/internal/team"
	"heat/stencil"
)

// assembled is an operator written out here from the contract alone, as a
// sparse row per box cell over the flat layout (ghost cells are known
// values): L u = σ·ρc_i·u_i − Σ_faces β·k_f/h_a²·(u_j − u_i), k_f the
// harmonic mean (0 at a hole), k_i at a physical face; no row on a hole,
// a held cell or a cell whose faces are all 0.
type assembled struct {
	rows map[int]map[int]float64 // cell ⇒ column ⇒ coefficient
	rhoC map[int]float64
}

func assemble(lay decomp.Layout, h, k, rhoC, held []float64, sigma, beta float64) assembled {
	nd := len(lay.N)
	shape := lay.N
	as := assembled{rows: map[int]map[int]float64{}, rhoC: map[int]float64{}}
	idx := make([]int, nd)
	for c := range lay.Box.Size() {
		rest := c
		for a := nd - 1; a >= 0; a-- {
			idx[a] = rest % shape[a]
			rest /= shape[a]
		}
		i := lay.Index(idx...)
		as.rhoC[i] = rhoC[c]
		if k[c] == 0 || held[c] == held[c] {
			continue
		}
		row := map[int]float64{i: sigma * rhoC[c]}
		faces := 0
		for a := range nd {
			for _, d := range []int{-1, 1} {
				j := i + d*lay.Stride[a]
				kj := k[c]
				if nb := idx[a] + d; nb >= 0 && nb < shape[a] {
					kj = k[c+d*cStride(shape, a)]
				}
				kf := 0.0
				if kj != 0 {
					kf = 2 * k[c] * kj / (k[c] + kj)
				}
				if kf != 0 {
					faces++
				}
				b := beta * kf / (h[a] * h[a])
				row[i] += b
				row[j] -= b
			}
		}
		if faces > 0 {
			as.rows[i] = row
		}
	}
	return as
}

func (as assembled) apply(u []float64, i int) float64 {
	s := 0.0
	for j, a := range as.rows[i] {
		s += a * u[j]
	}
	return s
}

// close requires got within a rounding of want.
func close(t *testing.T, want, got float64, scale float64, msg string, args ...any) {
	t.Helper()
	require.InDelta(t, want, got, 1e-12*max(1, math.Abs(want), scale), append([]any{msg}, args...)...)
}

// Each Op — the uniform operator and the media's, 2D and 3D, every kernel
// set, one and two workers — against the operator assembled here: Apply,
// Residual, ResidualMax, a Jacobi sweep with the assembled diagonal, a
// red–black Gauss–Seidel colour (uniform), an implicit step's right side,
// ‖L‖∞ and the componentwise backward error. The media have holes, held
// cells and jumps of 10⁴; the cells that are not free are left alone.
func TestOpAgainstAssembled(t *testing.T) {
	for _, shape := range [][]int{{7, 9}, {4, 5, 6}} {
		for _, media := range []bool{false, true} {
			for _, threads := range []int{1, 2} {
				for _, ks := range stencil.Available() {
					name := fmt.Sprintf("%v/media=%v/threads=%d/%s", shape, media, threads, ks.Name)
					t.Run(name, func(t *testing.T) {
						restore := stencil.Use(ks)
						defer restore()
						checkOp(t, shape, media, threads)
					})
				}
			}
		}
	}
}

func checkOp(t *testing.T, shape []int, media bool, threads int) {
	nd := len(shape)
	lay := decomp.NewLayout(decomp.Box{Lo: make([]int, nd), Hi: shape}, 1)
	h := []float64{0.3, 0.2, 0.1}[:nd]
	r := rand.New(rand.NewPCG(uint64(nd), 3))
	n := lay.Box.Size()
	k, rhoC, held := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		k[i], rhoC[i], held[i] = 1, 1, math.NaN()
		if media {
			k[i], rhoC[i] = []float64{1, 1e4, 0.5}[r.IntN(3)], 1+r.Float64()
			switch x := r.Float64(); {
			case x < 0.08:
				k[i] = 0
			case x < 0.15:
				held[i] = 2
			}
		}
	}
	tm := team.New(threads, false)
	defer tm.Close()
	wk := NewWork(lay, tm)
	const sigma, beta = 0.7, 0.003
	var op Op
	if media {
		m, err := NewMedia(lay, h, k, rhoC, held, make([][2]bool, nd), func([]float64) error { return nil })
		require.NoError(t, err)
		op = NewMediaOp(m, wk)
	} else {
		op = NewUniformOp(h, wk)
	}
	op.Scale(sigma, beta)
	as := assemble(lay, h, k, rhoC, held, sigma, beta)
	rnd := func() []float64 {
		x := make([]float64, lay.Len())
		for i := range x {
			x[i] = r.Float64()*2 - 1 // ghosts too: known values
		}
		return x
	}
	u, b, src := rnd(), rnd(), rnd()
	// Every neighbour is a rank (no physical face): the ghosts are u's.
	allNeighbours := make([][2]bool, nd)
	for a := range allNeighbours {
		allNeighbours[a] = [2]bool{true, true}
	}
	faces := RunsFaces(lay, make([][2]Face, nd), allNeighbours, wk.Runs)
	free := func(i int) bool { _, ok := as.rows[i]; return ok }
	cells := func(f func(i int)) {
		lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: lay.N}, func(start, cnt int) {
			for i := start; i < start+cnt; i++ {
				f(i)
			}
		})
	}

	got := make([]float64, lay.Len())
	op.Apply(got, u)
	cells(func(i int) {
		if free(i) {
			close(t, as.apply(u, i), got[i], 0, "Apply, cell %d", i)
		} else if media {
			require.Zero(t, got[i], "Apply, cell %d not free", i)
		}
	})
	op.Residual(got, u, b)
	worst := 0.0
	cells(func(i int) {
		if free(i) {
			close(t, b[i]-as.apply(u, i), got[i], 0, "Residual, cell %d", i)
			worst = max(worst, math.Abs(b[i]-as.apply(u, i)))
		} else if media {
			require.Zero(t, got[i], "Residual, cell %d not free", i)
		}
	})
	close(t, worst, op.ResidualMax(u, b), 0, "ResidualMax")
	// The componentwise backward error, |r_i|/((|L||u|)_i + |b_i|).
	cw := 0.0
	big := 0.0
	cells(func(i int) {
		big = max(big, math.Abs(u[i]))
		if !free(i) {
			return
		}
		den := math.Abs(b[i])
		for j, a := range as.rows[i] {
			if j == i {
				den += math.Abs(sigma * as.rhoC[i] * u[i])
				den += (a - sigma*as.rhoC[i]) * math.Abs(u[i])
				continue
			}
			den += math.Abs(a) * math.Abs(u[j])
		}
		cw = max(cw, math.Abs(b[i]-as.apply(u, i))/den)
	})
	gw, gr, gb := op.Backward(u, b, 0)
	require.InEpsilon(t, cw, gw, 1e-9, "Backward")
	require.Equal(t, op.ResidualMax(u, b), gr, "Backward's max |r|: ResidualMax's bits")
	require.Equal(t, big, gb, "Backward's ‖u‖∞")
	// ‖L‖∞: the largest absolute row sum, ghost couplings included.
	norm := 0.0
	for _, row := range as.rows {
		s := 0.0
		for _, a := range row {
			s += math.Abs(a)
		}
		norm = max(norm, s)
	}
	close(t, norm, op.NormInf(), norm, "NormInf")

	const omega = 0.8
	uu := append([]float64(nil), u...)
	op.Jacobi(got, uu, b, omega, faces)
	cells(func(i int) {
		if free(i) {
			want := u[i] + omega*(b[i]-as.apply(u, i))/as.rows[i][i]
			close(t, want, got[i], 0, "Jacobi, cell %d", i)
		} else if media {
			require.Equal(t, u[i], got[i], "Jacobi keeps cell %d", i)
		}
	})
	require.Equal(t, u, uu, "Jacobi leaves its source alone")

	if !media {
		g := lay.Global
		for colour := range 2 {
			x := append([]float64(nil), u...)
			op.GaussSeidel(x, b, colour)
			gi := make([]int, nd)
			cells(func(i int) {
				g(i, gi)
				p := 0
				for _, v := range gi {
					p += v
				}
				if p%2 != colour {
					require.Equal(t, u[i], x[i], "Gauss–Seidel colour %d keeps cell %d", colour, i)
					return
				}
				d := as.rows[i][i]
				want := u[i] + (b[i]-as.apply(u, i))/d // neighbours are the other colour: unchanged
				close(t, want, x[i], 0, "Gauss–Seidel colour %d, cell %d", colour, i)
			})
		}
	}

	// An implicit step's right side: ρc·u − c·L₀u + scale·src.
	const c, scale = 0.002, 0.5
	l0 := assemble(lay, h, k, rhoC, held, 0, 1)
	op.StepRHS(got, u, src, c, scale)
	cells(func(i int) {
		if media && !free(i) {
			return // left to the caller: not part of the step
		}
		want := as.rhoC[i]*u[i] - c*l0.apply(u, i) + scale*src[i]
		close(t, want, got[i], 0, "StepRHS, cell %d", i)
	})
}
