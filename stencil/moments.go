package stencil

import "math"

// Moments accumulate a field's extremes and sums for diagnostics, in eight
// lanes: cell j of every row added goes to lane j mod 8, each lane's sums
// in the order of the rows. The vector kernels keep the same lanes (one
// AVX-512 vector, or two AVX2 ones, per group of eight cells), so every
// set gives the same bits; a serial sum had run at 1.4 ns a cell, and
// diagnostics every 10 steps (the default) cost a 2048² run a quarter of
// its wall time.
//
// The comparisons are plain: a NaN is never a minimum or a maximum (Go's
// NaN-aware min and max cost ~6 ns a value), but it shows in the sums.
type Moments struct {
	Min, Max, Sum, SumSq [8]float64
	N                    int
}

// NewMoments are empty moments: extremes ±Inf, sums zero.
func NewMoments() Moments {
	var m Moments
	for l := range 8 {
		m.Min[l], m.Max[l] = math.Inf(1), math.Inf(-1)
	}
	return m
}

// Add takes in the cells of one row.
func (m *Moments) Add(x []float64) {
	Active.moments(m, x)
	m.N += len(x)
}

// Reduce is the minimum, maximum, sum and sum of squares over the lanes:
// the sums in a fixed tree, ((0+1)+(2+3))+((4+5)+(6+7)).
func (m *Moments) Reduce() (lo, hi, sum, sumSq float64) {
	lo, hi = m.Min[0], m.Max[0]
	for l := 1; l < 8; l++ {
		lo, hi = plainMin(lo, m.Min[l]), plainMax(hi, m.Max[l])
	}
	tree := func(s *[8]float64) float64 { return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) }
	return lo, hi, tree(&m.Sum), tree(&m.SumSq)
}

// plainMin and plainMax keep a unless b is smaller or larger: a NaN b is
// never taken (and neither kernel takes one).
func plainMin(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

func plainMax(a, b float64) float64 {
	if b > a {
		return b
	}
	return a
}

// momentsGeneric adds cells [from, len(x)) of a row, cell j into lane j mod 8.
func momentsGeneric(m *Moments, x []float64, from int) {
	for j := from; j < len(x); j++ {
		v, l := x[j], j&7
		m.Min[l], m.Max[l] = plainMin(m.Min[l], v), plainMax(m.Max[l], v)
		m.Sum[l] += v
		m.SumSq[l] += float64(v * v)
	}
}
