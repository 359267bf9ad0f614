package solver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"heat/comm"
	"heat/internal/exactsum"
	"heat/operator"
)

// Faces that need ghost coefficients per cell (Robin, Neumann fluxes,
// values varying in space or time; operator/faces.go has the formulas):
// the solver sets them at the start and, where they depend on t, at the
// times each step's terms belong to.

// perCellFaces reports whether any face needs coefficients per cell.
func (s *Solver) perCellFaces() bool {
	for _, f := range s.spec.Faces {
		if f[0].PerCell() || f[1].PerCell() {
			return true
		}
	}
	return false
}

// faceK is the conductivity a ghost sees in the uniform medium: the heat
// equation's α, Poisson's 1 (∇²u = f).
func (s *Solver) faceK() float64 {
	if s.spec.Equation == Heat {
		return s.spec.Alpha
	}
	return 1
}

// newBoundary sets up and sets (at the current time) the coefficients of
// the explicit and Jacobi paths' ghosts: the full layers and every run's.
// Collective where a face varies.
func (s *Solver) newBoundary() error {
	if !s.perCellFaces() {
		return nil
	}
	k0 := s.faceK()
	k := func(mirror, axis, side int) float64 { return k0 }
	if s.media != nil {
		k = s.media.Conductivity
	}
	s.bound = &operator.Boundary{Lay: s.lay, H: s.spec.Spacing(), Length: s.spec.Length, K: k, At: s.spec.FaceAt}
	return s.setFaces(s.simTime)
}

// setFaces sets the explicit and Jacobi paths' ghost coefficients at t.
// Collective where a face varies: a value that is not finite stops every
// rank (FaceValueError).
func (s *Solver) setFaces(t float64) error {
	if s.bound == nil {
		return nil
	}
	s.bound.Bad = nil
	s.bound.Set(s.faces, s.inner.ghosts, t)
	s.bound.Set(nil, s.rim.ghosts, t)
	return s.faceCheck(s.bound.Bad)
}

// setMGFaces is setFaces for the multigrid's levels.
func (s *Solver) setMGFaces(t float64) error { return s.faceCheck(s.mg.SetFaces(t)) }

// varies reports whether any face's value varies (and may not be finite).
func (s *Solver) varies() bool {
	for _, f := range s.spec.Faces {
		if f[0].Varies || f[1].Varies {
			return true
		}
	}
	return false
}

// faceCheck agrees over the ranks on whether a face value met on one was
// not finite: every rank then fails with the lowest such rank's
// FaceValueError. Collective where a face varies.
func (s *Solver) faceCheck(bad *operator.FaceError) error {
	if !s.varies() {
		return nil
	}
	r, err := s.lowestFailing(bad != nil)
	if err != nil || r < 0 {
		return err
	}
	// Rank r's error to every rank: axis, side, h, value, t, then x.
	nd := len(s.spec.Shape)
	vals := make([]float64, 5+nd)
	if r == s.c.Rank() {
		h := 0.0
		if bad.H {
			h = 1
		}
		copy(vals, []float64{float64(bad.Axis), float64(bad.Side), h, bad.Value, bad.T})
		copy(vals[5:], bad.X)
	}
	buf := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
	}
	if err := s.c.Bcast(buf, r); err != nil {
		return err
	}
	for i := range vals {
		vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	return &FaceValueError{Step: s.step + 1, FaceError: operator.FaceError{Axis: int(vals[0]), Side: int(vals[1]), H: vals[2] != 0,
		Value: vals[3], T: vals[4], X: vals[5:]}}
}

// FaceValueError is a face value that is not finite at a face centre and
// time, in the step that needed it.
type FaceValueError struct {
	Step int
	operator.FaceError
}

func (e *FaceValueError) Error() string {
	return fmt.Sprintf("%v (step %d)", e.FaceError.Error(), e.Step)
}

// agree makes every rank fail where one did (err not nil on some rank):
// the lowest such rank with its error, the others naming it. Collective.
func (s *Solver) agree(err error) error {
	r, e := s.lowestFailing(err != nil)
	switch {
	case e != nil:
		return e
	case r < 0:
		return nil
	case r == s.c.Rank():
		return err
	}
	return fmt.Errorf("rank %d: %w", r, ErrElsewhere)
}

// lowestFailing is the lowest rank on which failed is true, −1 for none.
// Collective.
func (s *Solver) lowestFailing(failed bool) (int, error) {
	flag := 0.0
	if failed {
		flag = float64(s.c.Size() - s.c.Rank())
	}
	out := []float64{0}
	if err := s.c.Allreduce(comm.Max, []float64{flag}, out); err != nil {
		return 0, err
	}
	if out[0] == 0 {
		return -1, nil
	}
	return s.c.Size() - int(out[0]), nil
}

// ErrElsewhere is what the other ranks fail with when one met a value that
// is not finite.
var ErrElsewhere = errors.New("a value there is not finite")

// SourceError is a source that is not finite at a cell and time.
type SourceError struct {
	Step  int
	T     float64
	X     []float64 // the cell centre, C order
	Value float64
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("the source is %v at x = %v, t = %g (step %d)", e.Value, e.X, e.T, e.Step)
}

// refreshSource sets f to the source of the step starting at t: explicit
// (theta 0) f(t); implicit (1−θ)·f(t) + θ·f(t + dt), backward Euler f(t + dt)
// alone; scaled as the setup scaled it. With a weight in time
// (Spec.SourceWeight) f holds the field alone and srcW the step's weight
// (the implicit steps' (1−θ)·w(t) + θ·w(t + dt)), but on an implicit step
// whose field itself changes: that f holds both terms whole, srcW 1. A
// value that is not finite is a SourceError. The energy account takes the
// explicit step's power here.
func (s *Solver) refreshSource(t, theta float64) error {
	at, weight := s.spec.SourceAt, s.spec.SourceWeight
	next := s.stepEnd()
	var key string
	whole := false // an implicit step's f holds both weighted terms
	if k := s.spec.SourceKey; k != nil {
		key = k(t)
		if s.mg != nil {
			kn := k(next)
			whole = weight != nil && kn != key
			key += "\x00" + kn
			if whole {
				key += "\x01" // no later step's key: the next one fills again
			}
		}
	}
	w := 1.0
	if weight != nil {
		w = weight(t)
		if s.mg != nil {
			w = weight(next)
			if theta != 1 {
				w = float64((1-theta)*weight(t)) + float64(theta*w)
			}
		}
		if w-w != 0 {
			return s.agree(&SourceError{Step: s.step + 1, T: t, X: s.cellCentre(0), Value: w})
		}
		s.srcW = w
		if whole {
			s.srcW = 1
		}
		if s.mg == nil {
			s.ustep.SetSourceWeight(s.cf * w)
		}
	}
	if s.acct != nil && s.mg == nil {
		s.acct.pw = w
	}
	if s.spec.SourceKey != nil && s.srcKeyed && key == s.srcKey {
		return nil // the field f holds already
	}
	// A profile of its own for each worker (and the energy account): no
	// evaluator shared between cores.
	profile := func() Profile {
		p := at(t)
		if s.mg != nil {
			now, nxt := p, at(next)
			p = nxt
			switch {
			case whole:
				c0, c1 := float64((1-theta)*weight(t)), float64(theta*weight(next))
				p = func(x []float64, idx []int) float64 {
					return float64(c0*now(x, idx)) + float64(c1*nxt(x, idx))
				}
			case theta != 1 && weight == nil:
				p = func(x []float64, idx []int) float64 {
					return float64((1-theta)*now(x, idx)) + float64(theta*nxt(x, idx))
				}
			}
		}
		return p
	}
	var power []*exactsum.Binned
	if s.acct != nil && s.mg == nil {
		power = s.acct.powerBins(s.parts)
	}
	badAt := s.fillBox(s.f, profile, s.srcScale, power)
	s.srcKey, s.srcKeyed = key, s.spec.SourceKey != nil
	var bad error
	if badAt >= 0 {
		g := make([]int, len(s.spec.Shape))
		s.lay.Global(badAt, g)
		bad = &SourceError{Step: s.step + 1, T: t, X: s.centre(g), Value: s.f[badAt] / s.srcScale}
	}
	// Every rank stops on the same step: the lowest rank that met one
	// names it, the others fail with it too.
	if err := s.agree(bad); err != nil {
		return err
	}
	if power != nil {
		return s.acct.setPowerSum(s, power, key, s.srcKeyed)
	}
	return nil
}

// centre is the physical centre of the cell at global index g, C order.
func (s *Solver) centre(g []int) []float64 {
	h := s.spec.Spacing()
	x := make([]float64, len(g))
	for a := range g {
		x[a] = (float64(g[a]) + 0.5) * h[a]
	}
	return x
}

// cellCentre is the centre of the global grid's cell k (C order).
func (s *Solver) cellCentre(k int) []float64 {
	g := make([]int, len(s.spec.Shape))
	for a := len(g) - 1; a >= 0; a-- {
		g[a] = k % s.spec.Shape[a]
		k /= s.spec.Shape[a]
	}
	return s.centre(g)
}

// fillBox sets every cell of the box to scale·p(cell centre), the workers
// over their rows, each with a profile of its own from profile; with power,
// each worker adds p·V of the cells the steps update into its own. It
// returns a cell whose value is not finite (the first of the lowest worker
// that met one), −1 for none.
func (s *Solver) fillBox(dst []float64, profile func() Profile, scale float64, power []*exactsum.Binned) int {
	nd := len(s.spec.Shape)
	h := s.spec.Spacing()
	ps := make([]Profile, s.parts)
	bad := make([]int, s.parts)
	for w := range ps {
		ps[w], bad[w] = profile(), -1
	}
	s.team.Run(s.parts, func(w int) {
		p := ps[w]
		x, g := make([]float64, nd), make([]int, nd)
		var vals, vols []float64 // a row's values (0 where not updated) and V
		if power != nil {
			vals, vols = make([]float64, s.lay.N[nd-1]), make([]float64, s.lay.N[nd-1])
			for j := range vols {
				vols[j] = s.acct.vol
			}
		}
		for _, r := range [2]*region{&s.inner, &s.rim} {
			for _, rw := range r.rows[r.share[w]:r.share[w+1]] {
				s.lay.Global(rw.Start, g)
				first := g[nd-1]
				for a := range nd {
					x[a] = (float64(g[a]) + 0.5) * h[a]
				}
				for j := range rw.N {
					g[nd-1] = first + j
					x[nd-1] = (float64(g[nd-1]) + 0.5) * h[nd-1]
					v := p(x, g)
					i := rw.Start + j
					dst[i] = scale * v
					if v-v != 0 && bad[w] < 0 {
						bad[w] = i
					}
					if vals != nil {
						vals[j] = 0
						if s.media == nil || s.media.Free[i] != 0 {
							vals[j] = v
						}
					}
				}
				if vals != nil {
					power[w].AddProducts(vals[:rw.N], vols[:rw.N])
				}
			}
		}
	})
	for _, b := range bad {
		if b >= 0 {
			return b
		}
	}
	return -1
}
