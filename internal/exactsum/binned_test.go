package exactsum

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// productsOf is the Acc's own sum of x[i]·y[i], the reference Binned must
// match bit for bit.
func productsOf(x, y []float64) *Acc {
	var a Acc
	for i := range x {
		a.Add(x[i] * y[i])
	}
	return &a
}

// requireSameAcc fails unless a and b hold the same sum (same encoding:
// limbs in normal form and flags).
func requireSameAcc(t *testing.T, want, got *Acc, msgAndArgs ...any) {
	t.Helper()
	w, err := want.MarshalBinary()
	require.NoError(t, err)
	g, err := got.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, w, g, msgAndArgs...)
}

// TestBinnedMatchesAcc: products of every scale (subnormal, huge,
// cancelling, zeros), in slices of every length and many calls, give the
// exact sum Add gives, and the oracle's rounding.
func TestBinnedMatchesAcc(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 2, 3, 7, binFlush - 1, binFlush, binFlush + 1, 3*binFlush + 5, 10000} {
		x := randomValues(rng, n)
		y := make([]float64, len(x))
		for i := range y {
			switch rng.IntN(4) {
			case 0:
				y[i] = 1 // the value itself: the cancelling pairs stay
			case 1:
				y[i] = rng.Float64() * 1e-200
			default:
				y[i] = rng.NormFloat64()
			}
		}
		for i := range x { // no overflow to Inf in the products
			if math.IsInf(x[i]*y[i], 0) {
				y[i] = 1
			}
		}
		var b Binned
		// In pieces of random lengths, as the rows of a split field come.
		for lo := 0; lo < len(x); {
			hi := min(len(x), lo+rng.IntN(1500))
			b.AddProducts(x[lo:hi], y[lo:hi])
			lo = hi
		}
		want := productsOf(x, y)
		requireSameAcc(t, want, b.Sum(), "n = %d", n)
		ps := make([]float64, len(x))
		for i := range x {
			ps[i] = x[i] * y[i]
		}
		requireBits(t, exact(t, ps), b.Sum().Float64(), "n = %d", n)

		// Reused after Reset, and after a read: the same sum again.
		b.Reset()
		b.AddProducts(x, y)
		requireSameAcc(t, want, b.Sum(), "n = %d after Reset", n)
	}
}

// TestBinnedFullBins: the largest mantissas of one sign and binade, more of
// them than a flush holds, neither overflow a bin nor lose a bit.
func TestBinnedFullBins(t *testing.T) {
	for _, v := range []float64{math.Nextafter(2, 0), -math.Nextafter(2, 0), math.MaxFloat64, 0x1p-1074, math.Float64frombits(1<<52 - 1)} {
		n := 5*binFlush + 3
		x := make([]float64, n)
		y := make([]float64, n)
		for i := range x {
			x[i], y[i] = v, 1
		}
		if v == math.MaxFloat64 {
			for i := 1; i < n; i += 2 { // alternate, so that the sum stays finite
				x[i] = -v
			}
		}
		var b Binned
		b.AddProducts(x, y)
		requireSameAcc(t, productsOf(x, y), b.Sum(), "%v", v)
	}
}

// TestBinnedNonFinite: a NaN or an infinity among the products is
// remembered as Add remembers it.
func TestBinnedNonFinite(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
	}{
		{"NaN first of a pair", []float64{math.NaN(), 1, 2}, []float64{1, 1, 1}},
		{"NaN second of a pair", []float64{1, math.NaN(), 2}, []float64{1, 1, 1}},
		{"NaN last, odd", []float64{1, 2, math.NaN()}, []float64{1, 1, 1}},
		{"+Inf by overflow", []float64{1, math.MaxFloat64}, []float64{1, 2}},
		{"+Inf and -Inf", []float64{math.Inf(1), 3, math.Inf(-1)}, []float64{1, 1, 1}},
		{"0·Inf", []float64{0, 5}, []float64{math.Inf(1), 1}},
	} {
		var b Binned
		b.AddProducts(c.x, c.y)
		want, got := productsOf(c.x, c.y).Float64(), b.Sum().Float64()
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(got), "%s: want NaN, got %v", c.name, got)
			continue
		}
		requireBits(t, want, got, c.name)
	}
}

// BenchmarkAddProducts measures Binned against one Add a product, per
// product, on the products a CG iteration sums (values of a few binades).
func BenchmarkAddProducts(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	x, y := make([]float64, 1<<16), make([]float64, 1<<16)
	for i := range x {
		x[i], y[i] = rng.Float64()-0.5, rng.Float64()*1e-3
	}
	b.Run("kind=binned", func(b *testing.B) {
		var s Binned
		for b.Loop() {
			s.AddProducts(x, y)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/product")
	})
	b.Run("kind=acc", func(b *testing.B) {
		var a Acc
		for b.Loop() {
			for i := range x {
				a.Add(x[i] * y[i])
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/product")
	})
}
