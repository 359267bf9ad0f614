package exactsum

import "math"

// Binned is a faster front for an Acc when many values are added at once,
// as in a dot product: each value's 53-bit integer mantissa is added into an
// int64 bin of its binade (two sets of bins, taking the values in turn, so
// that neighbours of one magnitude do not wait on each other), and the bins
// are added into the Acc every binFlush values and when the sum is read.
// The bins hold their sums exactly, so the result has the bits of Adding
// every value to an Acc, in any order and any split.
type Binned struct {
	bins   [2][nBins]int64 // bins[s][e]: Σ ±m of the values of (scale-adjusted) biased exponent e
	lo, hi int             // the range of e touched since the last flush (lo > hi: none)
	n      int             // values since the last flush
	acc    Acc             // the flushed sum
}

const (
	// nBins is one bin for every biased exponent (0x7ff, the non-finite
	// values, goes to the Acc's flags instead).
	nBins = 1 << 11
	// binFlush values of magnitude below 2^53 sum to below 2^63 in any one
	// bin: no int64 overflows between flushes.
	binFlush = 1 << 10
)

// Reset empties b.
func (b *Binned) Reset() {
	b.flush()
	b.acc.Reset()
}

// AddProducts adds x[i]·y[i] (each product rounded once, as Go's x*y) for
// every i exactly; x and y have the same length.
func (b *Binned) AddProducts(x, y []float64) {
	y = y[:len(x)]
	for len(x) > 0 {
		n := min(len(x), binFlush-b.n)
		lo, hi := b.lo, b.hi
		b0, b1 := &b.bins[0], &b.bins[1]
		j := 0
		for ; j+1 < n; j += 2 {
			e0, m0, ok0 := binOf(x[j] * y[j])
			e1, m1, ok1 := binOf(x[j+1] * y[j+1])
			if !ok0 || !ok1 {
				b.nonFinite(x[j]*y[j], x[j+1]*y[j+1])
			}
			b0[e0] += m0
			b1[e1] += m1
			lo, hi = min(lo, e0, e1), max(hi, e0, e1)
		}
		if j < n {
			e0, m0, ok0 := binOf(x[j] * y[j])
			if !ok0 {
				b.nonFinite(x[j] * y[j])
			}
			b0[e0] += m0
			lo, hi = min(lo, e0), max(hi, e0)
		}
		b.lo, b.hi, b.n = lo, hi, b.n+n
		if b.n == binFlush {
			b.flush()
		}
		x, y = x[n:], y[n:]
	}
}

// Sum flushes the bins and returns the exact sum so far, to be read or
// merged; it stays b's until the next Add or Reset.
func (b *Binned) Sum() *Acc {
	b.flush()
	return &b.acc
}

// binOf is x's bin (its biased exponent, subnormals and zeros at 1, the
// scale they share with the smallest normals) and its signed integer
// mantissa; ok is false for NaN and ±Inf, whose mantissa is then 0.
func binOf(x float64) (e int, m int64, ok bool) {
	bits := math.Float64bits(x)
	e = int(bits>>52) & 0x7ff
	normal := (e + 0x7ff) >> 11 // 1 for e >= 1, else 0
	m = int64(bits&(1<<52-1) | uint64(normal)<<52)
	ok = e != 0x7ff
	if !ok {
		m = 0
	}
	neg := -int64(bits >> 63)
	return (e | (1 - normal)) & 0x7ff, (m ^ neg) - neg, ok
}

// nonFinite records the NaN and infinities among xs in the Acc's flags.
func (b *Binned) nonFinite(xs ...float64) {
	for _, x := range xs {
		if bits := math.Float64bits(x); bits>>52&0x7ff == 0x7ff {
			b.acc.addNonFinite(bits)
		}
	}
}

// flush adds every touched bin into the Acc and clears it.
func (b *Binned) flush() {
	for e := max(b.lo, 0); e <= b.hi; e++ {
		for s := range b.bins {
			if v := b.bins[s][e]; v != 0 {
				b.acc.addInt(v, uint(e))
				b.bins[s][e] = 0
			}
		}
	}
	b.lo, b.hi, b.n = nBins, -1, 0
}
