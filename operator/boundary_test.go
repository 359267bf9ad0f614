package operator

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/decomp"
)

// testCoef is a ghost's a·mirror + b for the tests, different for every
// face and mirror cell.
func testCoef(f Face, axis, side, mirror int) (float64, float64) {
	return 0.5 + f.H + float64(mirror)/64, f.Value + float64(10*axis+side)
}

// randomBox is a box of 1 to most cells per axis, 2D on even trials and 3D
// on odd ones, laid out with one ghost layer, with faces and neighbour
// flags to fill.
func randomBox(rng *rand.Rand, trial, most int) (nd int, n []int, lay decomp.Layout, faces [][2]Face, nb [][2]bool) {
	nd = 2 + trial%2
	n = make([]int, nd)
	for a := range n {
		n[a] = 1 + rng.IntN(most)
	}
	lay = decomp.NewLayout(decomp.Box{Lo: make([]int, nd), Hi: n}, 1)
	return nd, n, lay, make([][2]Face, nd), make([][2]bool, nd)
}

// The ghosts RunGhosts gives the runs of a sweep are exactly the face
// ghosts of the physical faces that the box's cells read — each once, none
// in an edge or corner, none on a face with a neighbour or a periodic one —
// however the rows are cut into runs and spans, and ApplyGhostRuns sets
// each to its face's value from the cell across the face (coefficients per
// cell where the face needs them: Robin, a flux).
func TestRunGhostsCoverEachFaceGhostOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		nd, n, lay, faces, nb := randomBox(rng, trial, 6)
		for a := range nd {
			if rng.IntN(4) == 0 {
				faces[a] = [2]Face{{Kind: Periodic}, {Kind: Periodic}}
			} else {
				for side := range 2 {
					switch rng.IntN(4) {
					case 0:
						faces[a][side] = Face{Kind: Dirichlet, Value: rng.Float64()}
					case 1:
						faces[a][side] = Face{Kind: Neumann}
					case 2: // a flux: coefficients per cell
						faces[a][side] = Face{Kind: Neumann, Value: rng.Float64()}
					default:
						faces[a][side] = Face{Kind: Robin, Value: rng.Float64(), H: rng.Float64()}
					}
					nb[a][side] = rng.IntN(3) == 0
				}
			}
		}
		// What each face ghost must become: for every cell next to a
		// physical face, the ghost across it.
		u := make([]float64, lay.Len())
		for i := range u {
			u[i] = rng.Float64()
		}
		want := map[int]float64{}
		whole := decomp.Box{Lo: make([]int, nd), Hi: n}
		c := make([]int, nd)
		var visit func(a int)
		visit = func(a int) {
			if a == nd {
				cell := lay.Index(c...)
				for ax := range nd {
					for side := range 2 {
						f := faces[ax][side]
						if f.Kind == Periodic || nb[ax][side] {
							continue
						}
						if (side == 0 && c[ax] != 0) || (side == 1 && c[ax] != n[ax]-1) {
							continue
						}
						g := cell - lay.Stride[ax]
						if side == 1 {
							g = cell + lay.Stride[ax]
						}
						_, seen := want[g]
						require.False(t, seen, "ghost %d read by two cells", g)
						want[g] = f.Ghost(u[cell])
						if f.PerCell() {
							a, b := testCoef(f, ax, side, cell)
							want[g] = a*u[cell] + b
						}
					}
				}
				return
			}
			for c[a] = 0; c[a] < n[a]; c[a]++ {
				visit(a + 1)
			}
		}
		visit(0)
		// The rows cut at random along x (interior and rim spans) and
		// grouped into runs, some cut again.
		var spans []decomp.Span
		lay.ForRows(whole, func(start, cnt int) {
			if cnt > 1 && rng.IntN(2) == 0 {
				k := 1 + rng.IntN(cnt-1)
				spans = append(spans, decomp.Span{Start: start, N: k}, decomp.Span{Start: start + k, N: cnt - k})
				return
			}
			spans = append(spans, decomp.Span{Start: start, N: cnt})
		})
		sy := lay.Stride[nd-2]
		var runs []decomp.Run
		for _, r := range decomp.Runs(spans, sy) {
			for r.Count > 1 && rng.IntN(2) == 0 {
				k := 1 + rng.IntN(r.Count-1)
				runs = append(runs, decomp.Run{Start: r.Start, N: r.N, Count: k})
				r.Start, r.Count = r.Start+k*sy, r.Count-k
			}
			runs = append(runs, r)
		}
		got := slices.Clone(u)
		set := map[int]int{}
		for _, r := range runs {
			gs := RunGhosts(lay, faces, nb, r)
			SetAffineRuns([][]RunFaces{{{Ghosts: gs}}}, func(g *GhostRun, mirror int) (float64, float64) {
				return testCoef(g.Face, g.Axis, g.Side, mirror)
			})
			for _, g := range gs {
				for k := range g.Count {
					for j := range g.N {
						set[g.Start+k*g.Stride+j]++
					}
				}
			}
			ApplyGhostRuns(gs, got)
		}
		require.Len(t, set, len(want), "trial %d: n %v faces %v neighbours %v", trial, n, faces, nb)
		for g, times := range set {
			require.Equal(t, 1, times, "trial %d: ghost %d set %d times", trial, g, times)
			w, ok := want[g]
			require.True(t, ok, "trial %d: cell %d is no face ghost read by the box", trial, g)
			require.Equal(t, w, got[g], "trial %d: ghost %d", trial, g)
		}
		// Nothing else changed.
		for i := range u {
			if _, ok := want[i]; !ok {
				require.Equal(t, u[i], got[i], "trial %d: cell %d", trial, i)
			}
		}
	}
}

// ApplyFaces sets a per-cell face's ghosts to a·mirror + b with the
// coefficients SetAffine gave each, and the other faces as before.
func TestApplyFacesPerCell(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 100 {
		nd, n, lay, faces, nb := randomBox(rng, trial, 5)
		for a := range nd {
			faces[a] = [2]Face{{Kind: Robin, Value: rng.Float64(), H: rng.Float64()}, {Kind: Neumann, Value: 1 + rng.Float64()}}
			if rng.IntN(2) == 0 {
				faces[a][0] = Face{Kind: Dirichlet, Value: 2}
			}
		}
		u := make([]float64, lay.Len())
		for i := range u {
			u[i] = rng.Float64()
		}
		gf := GhostFaces(lay, faces, nb)
		SetAffine(gf, func(f *GhostFace, mirror int) (float64, float64) {
			return testCoef(f.Face, f.Axis, f.Side, mirror)
		})
		got := slices.Clone(u)
		ApplyFaces(gf, got)
		c := make([]int, nd)
		for i := range u {
			lay.Coords(i, c)
			inside := true
			for a := range nd {
				inside = inside && c[a] >= 0 && c[a] < n[a]
			}
			if !inside {
				continue
			}
			for a := range nd {
				for side := range 2 {
					if (side == 0 && c[a] != 0) || (side == 1 && c[a] != n[a]-1) {
						continue
					}
					g := i - lay.Stride[a]
					if side == 1 {
						g = i + lay.Stride[a]
					}
					f := faces[a][side]
					want := f.Ghost(u[i])
					if f.PerCell() {
						ca, cb := testCoef(f, a, side, i)
						want = ca*u[i] + cb
					}
					require.Equal(t, want, got[g], "trial %d: axis %d side %d cell %d", trial, a, side, i)
				}
			}
		}
	}
}
