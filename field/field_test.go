package field

import (
	"math"
	"slices"
	"testing"

	"heat/decomp"
)

// layouts are boxes of 2D and 3D grids, away from the origin, with 0 to 2
// ghost layers and uneven sides, so a stride or offset mixed up shows.
func layouts() []decomp.Layout {
	var out []decomp.Layout
	for _, b := range []decomp.Box{
		{Lo: []int{3, 5}, Hi: []int{7, 12}},
		{Lo: []int{0, 0}, Hi: []int{1, 9}},
		{Lo: []int{2, 4, 1}, Hi: []int{5, 6, 8}},
		{Lo: []int{10, 0, 7}, Hi: []int{11, 3, 9}},
	} {
		for ghost := range 3 {
			out = append(out, decomp.NewLayout(b, ghost))
		}
	}
	return out
}

func TestIndexRoundTrip(t *testing.T) {
	for _, lay := range layouts() {
		f := New(lay)
		nd := len(lay.N)
		seen := make([]bool, lay.Len())
		g, c := make([]int, nd), make([]int, nd)
		// Every flat index, ghosts included, is one cell, and back.
		for i := range lay.Len() {
			f.Cell(i, g)
			f.LocalCell(i, c)
			for a := range nd {
				if c[a] < -lay.Ghost || c[a] >= lay.N[a]+lay.Ghost || g[a] != c[a]+lay.Box.Lo[a] {
					t.Fatalf("box %v ghost %d: flat %d is local %v global %v", lay.Box, lay.Ghost, i, c, g)
				}
			}
			if j := f.Index(g...); j != i {
				t.Fatalf("box %v ghost %d: Index(Cell(%d) = %v) = %d", lay.Box, lay.Ghost, i, g, j)
			}
			if j := f.LocalIndex(c...); j != i {
				t.Fatalf("box %v ghost %d: LocalIndex(LocalCell(%d) = %v) = %d", lay.Box, lay.Ghost, i, c, j)
			}
			if j := Index(lay, g); j != i {
				t.Fatalf("box %v ghost %d: Index(lay, %v) = %d, want %d", lay.Box, lay.Ghost, g, j, i)
			}
			seen[i] = true
		}
		if slices.Contains(seen, false) {
			t.Fatalf("box %v ghost %d: a flat index is no cell's", lay.Box, lay.Ghost)
		}
	}
}

func TestIndexByHand(t *testing.T) {
	// Box [3,7)×[5,12) with 2 ghosts: padded 8×11, so global (3, 5) — local
	// (0, 0) — is at 2·11 + 2, and each step along y moves 11.
	f := New(decomp.NewLayout(decomp.Box{Lo: []int{3, 5}, Hi: []int{7, 12}}, 2))
	for _, tc := range []struct{ g, c []int }{{[]int{3, 5}, []int{0, 0}}, {[]int{1, 3}, []int{-2, -2}}, {[]int{6, 11}, []int{3, 6}}} {
		want := (tc.c[0]+2)*11 + tc.c[1] + 2
		if got := f.Index(tc.g...); got != want {
			t.Errorf("Index%v = %d, want %d", tc.g, got, want)
		}
		if got := f.LocalIndex(tc.c...); got != want {
			t.Errorf("LocalIndex%v = %d, want %d", tc.c, got, want)
		}
	}
}

func TestRowsAndOwned(t *testing.T) {
	for _, lay := range layouts() {
		f := New(lay)
		nd := len(lay.N)
		g := make([]int, nd)
		for i := range f.Data {
			f.Cell(i, g)
			if lay.Box.Contains(g) {
				f.Data[i] = float64(Linear(g, []int{20, 20, 20}[:nd]))
			} else {
				f.Data[i] = math.NaN() // a ghost: must not be walked
			}
		}
		var want []float64
		for i := range lay.Box.Size() {
			Unravel(i, lay.N, g)
			for a := range nd {
				g[a] += lay.Box.Lo[a]
			}
			want = append(want, float64(Linear(g, []int{20, 20, 20}[:nd])))
		}
		if got := f.Owned(); !slices.Equal(got, want) {
			t.Fatalf("box %v ghost %d: Owned = %v, want %v", lay.Box, lay.Ghost, got, want)
		}
		rows := 0
		f.Rows(func(start, n int) {
			if n != lay.N[nd-1] {
				t.Fatalf("box %v ghost %d: row of %d cells", lay.Box, lay.Ghost, n)
			}
			rows++
		})
		if rows*lay.N[nd-1] != lay.Box.Size() {
			t.Fatalf("box %v ghost %d: %d rows", lay.Box, lay.Ghost, rows)
		}
	}
}

func TestLinearUnravel(t *testing.T) {
	for _, shape := range [][]int{{7}, {4, 9}, {3, 1, 5}, {2, 3, 4}} {
		idx := make([]int, len(shape))
		for k := range Cells(shape) {
			Unravel(k, shape, idx)
			for a := range shape {
				if idx[a] < 0 || idx[a] >= shape[a] {
					t.Fatalf("shape %v: Unravel(%d) = %v", shape, k, idx)
				}
			}
			if got := Linear(idx, shape); got != k {
				t.Fatalf("shape %v: Linear(Unravel(%d) = %v) = %d", shape, k, idx, got)
			}
		}
	}
	g := Geometry{Shape: []int{2, 3, 4}}
	if got := g.Index([]int{1, 2, 3}); got != 23 {
		t.Errorf("Index [1 2 3] of 2×3×4 = %d, want 23", got)
	}
	out := make([]int, 3)
	if g.Cell(13, out); !slices.Equal(out, []int{1, 0, 1}) {
		t.Errorf("Cell 13 of 2×3×4 = %v, want [1 0 1]", out)
	}
}

func TestH(t *testing.T) {
	// Lengths and shapes whose quotient rounds: H must be the one division.
	for _, tc := range []struct {
		l float64
		n int
	}{{1, 3}, {0.1, 7}, {2.5, 96}, {1e-150, 999}, {math.Pi, 1000}, {3, 3}} {
		g := Geometry{Shape: []int{5, tc.n}, Length: []float64{1, tc.l}}
		if got, want := g.H(1), tc.l/float64(tc.n); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("H(%g/%d) = %v, want %v", tc.l, tc.n, got, want)
		}
		if got := g.Spacing(); got[0] != 0.2 || got[1] != g.H(1) {
			t.Errorf("Spacing = %v", got)
		}
		if got, want := g.CellVolume(), 1.0*(1/5.0)*(tc.l/float64(tc.n)); got != want {
			t.Errorf("CellVolume = %v, want %v", got, want)
		}
	}
	if h := (Geometry{Shape: []int{4, 8}}).H(1); h != 0.125 {
		t.Errorf("H of a grid without lengths = %v, want 1/8", h)
	}
	if g := (Geometry{Shape: []int{4, 8}, Length: []float64{2}}); g.H(0) != 0.5 || g.H(1) != 0.125 {
		t.Errorf("H of a grid with one length = %v, want [0.5 0.125]", g.Spacing())
	}
}

func TestCentre(t *testing.T) {
	g := Geometry{Shape: []int{4, 10}, Length: []float64{2, 1}}
	for _, tc := range []struct {
		a, i int
		want float64
	}{{0, 0, 0.25}, {0, 3, 1.75}, {1, 0, 0.05}, {1, 9, 0.95}} {
		if got := g.Centre(tc.a, tc.i); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Centre(%d, %d) = %v, want %v", tc.a, tc.i, got, tc.want)
		}
	}
	x := make([]float64, 2)
	if g.CentreOf([]int{1, 4}, x); x[0] != 0.75 || x[1] != g.Centre(1, 4) {
		t.Errorf("CentreOf [1 4] = %v", x)
	}
	// The two forms keep their own bits: (i+0.5)·(L/n) and (i+0.5)·L/n.
	// Along 0.1/3 they part at cell 1: 1.5·0.0333… and 0.15/3.
	l, n := 0.1, 3.0 // variables: constant arithmetic would be exact
	g = Geometry{Shape: []int{3}, Length: []float64{l}}
	if got, want := g.Centre(0, 1), 1.5*(l/n); math.Float64bits(got) != math.Float64bits(want) {
		t.Errorf("Centre(0, 1) = %v, want %v", got, want)
	}
	if got, want := g.CentreScaled(0, 1), 1.5*l/n; math.Float64bits(got) != math.Float64bits(want) {
		t.Errorf("CentreScaled(0, 1) = %v, want %v", got, want)
	}
	if g.Centre(0, 1) == g.CentreScaled(0, 1) {
		t.Error("Centre and CentreScaled agree at 0.1/3, cell 1: the test no longer tells them apart")
	}
}

func TestOfRefusesWrongLength(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Of took 3 values for a layout of 4")
		}
	}()
	Of(make([]float64, 3), decomp.NewLayout(decomp.Box{Lo: []int{0, 0}, Hi: []int{2, 2}}, 0))
}
