package amg

import (
	"fmt"
	"math"
)

// Options tune the hierarchy; the zero value is the default.
type Options struct {
	// Theta is the strength threshold: j strongly influences i when
	// −a_ij ≥ Theta·max_k(−a_ik); 0: 0.25 (Ruge–Stüben's, hypre's 2D).
	Theta float64
	// Dominance: a row whose sum is above this share of its diagonal (an
	// implicit step's ρc/dt) depends strongly on nothing — the smoother
	// alone solves it; 0: 0.9 (hypre's max_row_sum).
	Dominance float64
	// Bottom is the largest level solved by its dense factor; 0: 200.
	Bottom int
	// Parallel splits the setup's row-by-row passes (the strong
	// couplings, the interpolation, the Galerkin products, then SetMass's
	// and Scale's) over goroutines; nil: one. Each row is built alone in
	// a fixed order: the same hierarchy, bit for bit, however it splits.
	Parallel Parallel
}

// MaxLevels bounds the hierarchy's depth.
const MaxLevels = 40

// Level is one grid of the hierarchy.
type Level struct {
	A    *Matrix
	P, R *Matrix   // interpolation from the next coarser level and its transpose (nil on the last)
	inv  []float64 // 1/a_ii (0 where a_ii is 0)
	x, b []float64 // the cycle's iterate and right side
	r    []float64 // the residual
	// parts are A's conduction and mass, where SetMass gave one.
	parts *scaled
}

// Hierarchy is the levels of one matrix, the first the matrix itself.
type Hierarchy struct {
	Levels []*Level
	bottom *dense
	par    Parallel // Options.Parallel
}

// Setup builds the hierarchy of a, a symmetric matrix with positive
// diagonal and off-diagonal entries that are not positive (the operators
// of diffusion: a positive off-diagonal is lumped into the diagonal by the
// interpolation).
func Setup(a *Matrix, opt Options) (*Hierarchy, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	if a.Rows != a.Cols {
		return nil, fmt.Errorf("amg: the matrix is %d×%d, not square", a.Rows, a.Cols)
	}
	if opt.Theta == 0 {
		opt.Theta = 0.25
	}
	if opt.Dominance == 0 {
		opt.Dominance = 0.9
	}
	if opt.Bottom == 0 {
		opt.Bottom = 200
	}
	h := &Hierarchy{par: opt.Parallel}
	for {
		l := &Level{A: a, inv: make([]float64, a.Rows), x: make([]float64, a.Rows), b: make([]float64, a.Rows), r: make([]float64, a.Rows)}
		if err := l.invert(len(h.Levels)); err != nil {
			return nil, err
		}
		h.Levels = append(h.Levels, l)
		if a.Rows <= opt.Bottom || len(h.Levels) == MaxLevels {
			break
		}
		s := strength(opt.Parallel, a, opt.Theta, opt.Dominance)
		cf, nc := coarsen(s)
		if nc == 0 || nc == a.Rows || float64(nc) > 0.9*float64(a.Rows) && a.Rows <= 4*opt.Bottom {
			break // nothing left to coarsen (a level of held-off rows)
		}
		l.P = interpolation(opt.Parallel, a, s, cf, nc)
		l.R = l.P.transpose()
		a = mul(opt.Parallel, l.R, mul(opt.Parallel, a, l.P))
	}
	last := h.Levels[len(h.Levels)-1]
	if last.A.Rows > maxDense {
		return nil, fmt.Errorf("amg: coarsening stopped at %d rows after %d levels", last.A.Rows, len(h.Levels))
	}
	h.bottom = factor(last.A)
	return h, nil
}

// invert sets l.inv to the reciprocals of A's diagonal (0 where it is 0),
// refusing a negative one or NaN (level i, for the message).
func (l *Level) invert(i int) error {
	for r := range l.A.Rows {
		d := l.A.diag(r)
		if d < 0 || math.IsNaN(d) {
			return fmt.Errorf("amg: row %d of level %d has diagonal %g", r, i, d)
		}
		l.inv[r] = 0
		if d > 0 {
			l.inv[r] = 1 / d
		}
	}
	return nil
}

// diag is a_ii (0 if not stored).
func (a *Matrix) diag(i int) float64 {
	for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
		if int(a.Col[k]) == i {
			return a.Val[k]
		}
	}
	return 0
}

// strength is the strong couplings: row i lists the j ≠ i with
// −a_ij ≥ θ·max_k(−a_ik) > 0, none for a row whose sum exceeds dominance
// times its diagonal.
func strength(par Parallel, a *Matrix, theta, dominance float64) *Matrix {
	return buildRows(par, a.Rows, a.Cols, false, func(s *Matrix, lo, hi int) {
		for i := lo; i < hi; i++ {
			most, sum, d := 0.0, 0.0, 0.0
			for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
				v := a.Val[k]
				sum += v
				if int(a.Col[k]) == i {
					d = v
				} else {
					most = max(most, -v)
				}
			}
			if most > 0 && sum <= dominance*d {
				for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
					if j := a.Col[k]; int(j) != i && -a.Val[k] >= theta*most {
						s.Col = append(s.Col, j)
					}
				}
			}
			s.Ptr = append(s.Ptr, len(s.Col))
		}
	})
}

// Kinds of a point in the coarsening.
const (
	undecided int8 = iota
	coarse
	fine
)

// coarsen is Ruge–Stüben's first pass over the strong couplings s: the
// undecided point that most others depend on becomes coarse, the points
// that depend on it fine, and the points those depend on gain weight;
// then every fine point that depends on others but on no coarse point
// becomes coarse (so each has one to interpolate from). Ties go to the
// point first in the order of the rows. It returns each point's kind and
// the number of coarse points.
func coarsen(s *Matrix) (cf []int8, nc int) {
	n := s.Rows
	st := s.transpose() // st's row i: the points that depend on i
	cf = make([]int8, n)
	weight := make([]int, n)
	for i := range n {
		weight[i] = st.Ptr[i+1] - st.Ptr[i]
	}
	// Buckets of undecided points by weight: doubly linked lists, each
	// kept in the order of the rows so that ties break alike every time.
	q := newBuckets(n, weight)
	for i := range n {
		if weight[i] == 0 && s.Ptr[i+1] == s.Ptr[i] {
			cf[i] = fine // joined strongly to nothing: the smoother's
			q.remove(i)
		}
	}
	for {
		i := q.top()
		if i < 0 {
			break
		}
		q.remove(i)
		cf[i] = coarse
		nc++
		for _, j := range st.Col[st.Ptr[i]:st.Ptr[i+1]] {
			if cf[j] != undecided {
				continue
			}
			cf[j] = fine
			q.remove(int(j))
			for _, k := range s.Col[s.Ptr[j]:s.Ptr[j+1]] {
				if cf[k] == undecided {
					q.raise(int(k))
				}
			}
		}
		for _, k := range s.Col[s.Ptr[i]:s.Ptr[i+1]] {
			if cf[k] == undecided {
				q.lower(int(k))
			}
		}
	}
	// The second pass: a fine point and each fine point it depends on
	// strongly share a coarse point they both depend on, or one of them
	// becomes coarse (the first such neighbour, or at the second the point
	// itself).
	mark := make([]int, n) // i+1 where a point is a coarse point of i's
	for i := range n {
		if cf[i] != fine {
			continue
		}
		for _, j := range s.Col[s.Ptr[i]:s.Ptr[i+1]] {
			if cf[j] == coarse {
				mark[j] = i + 1
			}
		}
		tentative := -1
		for _, k := range s.Col[s.Ptr[i]:s.Ptr[i+1]] {
			if cf[k] != fine {
				continue
			}
			shared := false
			for _, m := range s.Col[s.Ptr[k]:s.Ptr[k+1]] {
				if mark[m] == i+1 {
					shared = true
					break
				}
			}
			if shared {
				continue
			}
			if tentative < 0 {
				tentative = int(k)
				cf[k] = coarse
				mark[k] = i + 1
				nc++
				continue
			}
			cf[tentative] = fine
			mark[tentative] = 0
			cf[i] = coarse
			break
		}
	}
	for i := range n {
		if cf[i] != fine || s.Ptr[i+1] == s.Ptr[i] {
			continue
		}
		has := false
		for _, j := range s.Col[s.Ptr[i]:s.Ptr[i+1]] {
			if cf[j] == coarse {
				has = true
				break
			}
		}
		if !has {
			cf[i] = coarse
			nc++
		}
	}
	return cf, nc
}

// interpolation is classical (Ruge–Stüben) interpolation: a coarse point
// takes its own coarse value; a fine point i the values of C_i, the coarse
// points it depends on strongly,
//
//	w_ij = −(a_ij + Σ_{k∈F_i} a_ik·a_kj / Σ_{m∈C_i} a_km) / (a_ii + Σ_weak a_ik)
//
// with F_i its strong fine neighbours, each of whose couplings is spread
// over C_i in the share of its own couplings to them (one that has none is
// counted weak), and the weak couplings (and any positive one) lumped into
// the diagonal: a row that sums to zero interpolates a constant exactly.
func interpolation(par Parallel, a, s *Matrix, cf []int8, nc int) *Matrix {
	index := make([]int32, a.Rows) // a coarse point's column
	c := int32(0)
	for i, k := range cf {
		if k == coarse {
			index[i] = c
			c++
		}
	}
	return buildRows(par, a.Rows, nc, true, func(p *Matrix, lo, hi int) {
		strong := make([]bool, a.Cols) // s's row i, as flags
		at := make([]int, a.Cols)      // 1 + the place of a point of C_i in the row being built
		interpolate(p, lo, hi, a, s, cf, index, strong, at)
	})
}

// interpolate appends rows [lo, hi) of the interpolation to p.
func interpolate(p *Matrix, lo, hi int, a, s *Matrix, cf []int8, index []int32, strong []bool, at []int) {
	for i := lo; i < hi; i++ {
		start := len(p.Col)
		switch {
		case cf[i] == coarse:
			p.Col = append(p.Col, index[i])
			p.Val = append(p.Val, 1)
		case s.Ptr[i+1] > s.Ptr[i]:
			for _, j := range s.Col[s.Ptr[i]:s.Ptr[i+1]] {
				strong[j] = true
			}
			// C_i, with a_ij, in the order of the row.
			for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
				if j := a.Col[k]; int(j) != i && strong[j] && cf[j] == coarse && a.Val[k] < 0 {
					p.Col = append(p.Col, j) // the point for now; its column below
					p.Val = append(p.Val, a.Val[k])
					at[j] = len(p.Col) - start
				}
			}
			d := 0.0
			for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
				j, v := a.Col[k], a.Val[k]
				switch {
				case int(j) == i || v > 0:
					d += v
				case strong[j] && cf[j] == coarse:
				case strong[j] && cf[j] == fine:
					// Spread a_ij over C_i by row j's couplings to it.
					sum := 0.0
					for l := a.Ptr[j]; l < a.Ptr[j+1]; l++ {
						if m := a.Col[l]; at[m] > 0 && a.Val[l] < 0 {
							sum += a.Val[l]
						}
					}
					if sum >= 0 {
						d += v
						continue
					}
					for l := a.Ptr[j]; l < a.Ptr[j+1]; l++ {
						if m := a.Col[l]; at[m] > 0 && a.Val[l] < 0 {
							p.Val[start+at[m]-1] += v * a.Val[l] / sum
						}
					}
				default:
					d += v
				}
			}
			for q := start; q < len(p.Col); q++ {
				j := p.Col[q]
				at[j] = 0
				p.Col[q] = index[j]
				if d > 0 {
					p.Val[q] = -p.Val[q] / d
				} else {
					p.Val[q] = 0
				}
			}
			for _, j := range s.Col[s.Ptr[i]:s.Ptr[i+1]] {
				strong[j] = false
			}
		}
		p.Ptr = append(p.Ptr, len(p.Col))
	}
}

// buckets hold the undecided points by weight, the highest first; a point
// joins its bucket at the head, so ties go to the point moved last (the
// same every time: the order of the work is fixed).
type buckets struct {
	weight     []int
	head       []int // per weight: the first point, −1 if none
	next, prev []int
	in         []bool
	top_       int
}

func newBuckets(n int, weight []int) *buckets {
	b := &buckets{weight: weight, next: make([]int, n), prev: make([]int, n), in: make([]bool, n), top_: -1}
	for i := range n {
		b.push(i)
	}
	return b
}

func (b *buckets) push(i int) {
	w := b.weight[i]
	for len(b.head) <= w {
		b.head = append(b.head, -1)
	}
	b.prev[i], b.next[i] = -1, b.head[w]
	if b.head[w] >= 0 {
		b.prev[b.head[w]] = i
	}
	b.head[w] = i
	b.in[i] = true
	b.top_ = max(b.top_, w)
}

func (b *buckets) remove(i int) {
	if !b.in[i] {
		return
	}
	if b.prev[i] >= 0 {
		b.next[b.prev[i]] = b.next[i]
	} else {
		b.head[b.weight[i]] = b.next[i]
	}
	if b.next[i] >= 0 {
		b.prev[b.next[i]] = b.prev[i]
	}
	b.in[i] = false
}

func (b *buckets) raise(i int) {
	b.remove(i)
	b.weight[i]++
	b.push(i)
}

func (b *buckets) lower(i int) {
	if b.weight[i] == 0 {
		return
	}
	b.remove(i)
	b.weight[i]--
	b.push(i)
}

// top is the first point of the highest weight, −1 when none is left.
func (b *buckets) top() int {
	for b.top_ >= 0 {
		if b.head[b.top_] >= 0 {
			return b.head[b.top_]
		}
		b.top_--
	}
	return -1
}
