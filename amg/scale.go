package amg

import (
	"fmt"
	"math"
	"slices"
)

// An implicit step's matrix is σ·M + β·L: M the diagonal of the cells'
// heat capacities, L the conduction, σ and β fixed by the step's length.
// Its hierarchy is built once, from L, and each step length takes only
// the Galerkin sums σ·PᵀMP + β·PᵀLP, level by level — no strength,
// coarsening or interpolation again (a whole setup took 0.06 s at 256²;
// a run that chooses its steps asks for a new length at every solve). The
// coarse grids are those of L whatever the step: a restart that starts
// from another step length builds the same ones, and the same bits follow.

// scaled is a level's two parts, in the pattern of its A.
type scaled struct {
	stiff, mass []float64
}

// SetMass makes h, built by Setup from L, the hierarchy of σ·M + β·L for
// the diagonal M = diag(m) (m ≥ 0, one value a row), σ and β as Scale
// sets them; it starts as L itself (σ = 0, β = 1).
func (h *Hierarchy) SetMass(m []float64) error {
	fine := h.Levels[0].A
	if len(m) != fine.Rows {
		return fmt.Errorf("amg: %d masses for %d rows", len(m), fine.Rows)
	}
	mm := &Matrix{Rows: fine.Rows, Cols: fine.Cols, Ptr: make([]int, fine.Rows+1), Col: make([]int32, fine.Rows), Val: make([]float64, fine.Rows)}
	for i, v := range m {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("amg: row %d has mass %g", i, v)
		}
		mm.Ptr[i+1], mm.Col[i], mm.Val[i] = i+1, int32(i), v
	}
	for i, l := range h.Levels {
		mass, err := alignTo(l.A, mm)
		if err != nil {
			return fmt.Errorf("level %d: %w", i, err)
		}
		l.parts = &scaled{stiff: slices.Clone(l.A.Val), mass: mass}
		if l.P != nil {
			mm = mul(h.par, l.R, mul(h.par, mm, l.P))
		}
	}
	return nil
}

// alignTo is m's values placed in a's pattern (m's entries must all be
// among a's).
func alignTo(a, m *Matrix) ([]float64, error) {
	out := make([]float64, len(a.Val))
	where := make([]int, a.Cols)
	for i := range a.Rows {
		for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
			where[a.Col[k]] = k + 1
		}
		for k := m.Ptr[i]; k < m.Ptr[i+1]; k++ {
			p := where[m.Col[k]]
			if p == 0 || p-1 < a.Ptr[i] || p-1 >= a.Ptr[i+1] || a.Col[p-1] != m.Col[k] {
				return nil, fmt.Errorf("amg: the mass couples rows %d and %d, which the conduction does not", i, m.Col[k])
			}
			out[p-1] += m.Val[k]
		}
	}
	return out, nil
}

// Scale sets every level's matrix to σ·PᵀMP + β·PᵀLP (SetMass first) and
// factors the bottom anew.
func (h *Hierarchy) Scale(sigma, beta float64) error {
	for i, l := range h.Levels {
		if l.parts == nil {
			return fmt.Errorf("amg: level %d has no mass (SetMass first)", i)
		}
		for k, s := range l.parts.stiff {
			l.A.Val[k] = float64(sigma*l.parts.mass[k]) + float64(beta*s)
		}
		if err := l.invert(i); err != nil {
			return err
		}
	}
	h.bottom = factor(h.Levels[len(h.Levels)-1].A)
	return nil
}
