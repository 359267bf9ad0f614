package exactsum

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
)

// exact is the oracle: the exact sum of xs with big.Rat (every float64 is
// a rational), rounded once to float64 by big.Rat's own algorithm, which
// shares no code with Acc's.
func exact(t testing.TB, xs []float64) float64 {
	t.Helper()
	var sum, r big.Rat
	for _, x := range xs {
		require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "oracle takes finite values only, got %v", x)
		sum.Add(&sum, r.SetFloat64(x))
	}
	f, _ := sum.Float64()
	if f == 0 {
		return 0 // Acc gives +0 for an exact zero; big.Rat has no -0 anyway
	}
	return f
}

// sumOf adds xs one by one into a fresh Acc and returns its Float64.
func sumOf(xs []float64) float64 {
	var a Acc
	for _, x := range xs {
		a.Add(x)
	}
	return a.Float64()
}

// requireBits fails unless got and want are the same float64 bits.
func requireBits(t testing.TB, want, got float64, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, math.Float64bits(want), math.Float64bits(got),
		append([]any{fmt.Sprintf("want %v (%#016x), got %v (%#016x)", want, math.Float64bits(want), got, math.Float64bits(got))}, msgAndArgs...)...)
}

// randomValue draws finite float64 values of every scale: normal values
// with exponents over most of the range, subnormals, arbitrary bit
// patterns, and special constants.
func randomValue(rng *rand.Rand) float64 {
	sign := 1.0
	if rng.IntN(2) == 0 {
		sign = -1
	}
	switch rng.IntN(10) {
	case 0, 1, 2, 3:
		// ±(1..2)·2^k, k in [-1074, 1000]; Ldexp rounds the small ones to
		// subnormals, which is fine: the value is whatever float64 results.
		return sign * math.Ldexp(1+rng.Float64(), -1074+rng.IntN(2075))
	case 4:
		// A subnormal.
		return sign * math.Float64frombits(rng.Uint64N(1<<52))
	case 5:
		// Any finite bit pattern up to about 2^1000.
		for {
			f := math.Float64frombits(rng.Uint64())
			if !math.IsNaN(f) && math.Abs(f) < 0x1p1000 {
				return f
			}
		}
	case 6:
		// Values near 1, where most fields live.
		return sign * rng.Float64()
	case 7:
		return sign * float64(rng.IntN(1000))
	default:
		consts := []float64{1, 0.1, 1e300, 1e-300, 0x1p-1074, 0x1p-1022, 0x1p52, 0x1p53, 3, math.Copysign(0, -1), 0}
		return sign * consts[rng.IntN(len(consts))]
	}
}

// randomValues returns a slice of n values of every scale, with cancelling
// pairs of huge values (up to MaxFloat64) mixed in, so that the exact sum
// is far smaller than its largest terms.
func randomValues(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, 0, n+n/4)
	for range n {
		xs = append(xs, randomValue(rng))
		if rng.IntN(8) == 0 {
			var big float64
			switch rng.IntN(3) {
			case 0:
				big = 1e300
			case 1:
				big = math.MaxFloat64
			default:
				big = math.Ldexp(1+rng.Float64(), 900+rng.IntN(124))
			}
			xs = append(xs, big, -big)
		}
	}
	return xs
}

// cancelToResidual appends to xs the negations of the successive roundings
// of its exact sum, so that the new exact sum is a tiny residual that only
// an exact accumulator gets right.
func cancelToResidual(t testing.TB, xs []float64) []float64 {
	t.Helper()
	var rest, r big.Rat
	for _, x := range xs {
		rest.Add(&rest, r.SetFloat64(x))
	}
	for range 3 {
		f, _ := rest.Float64()
		if f == 0 || math.IsInf(f, 0) {
			break
		}
		xs = append(xs, -f)
		rest.Sub(&rest, r.SetFloat64(f))
	}
	return xs
}

// splitSum sums xs in k random contiguous chunks of a random permutation,
// merging the chunk accumulators in a random order, sometimes into a fresh
// Acc and sometimes pairwise into each other.
func splitSum(rng *rand.Rand, xs []float64) float64 {
	ys := append([]float64(nil), xs...)
	rng.Shuffle(len(ys), func(i, j int) { ys[i], ys[j] = ys[j], ys[i] })
	k := 1 + rng.IntN(8)
	cuts := []int{0, len(ys)}
	for range k - 1 {
		cuts = append(cuts, rng.IntN(len(ys)+1))
	}
	sortInts(cuts)
	parts := make([]*Acc, 0, k)
	for i := 0; i+1 < len(cuts); i++ {
		p := new(Acc)
		p.AddSlice(ys[cuts[i]:cuts[i+1]])
		parts = append(parts, p)
	}
	rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	if rng.IntN(2) == 0 {
		var total Acc
		for _, p := range parts {
			total.Merge(p)
		}
		return total.Float64()
	}
	// A random binary tree of merges.
	for len(parts) > 1 {
		i := rng.IntN(len(parts) - 1)
		parts[i].Merge(parts[i+1])
		parts = append(parts[:i+1], parts[i+2:]...)
	}
	return parts[0].Float64()
}

func sortInts(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestRandomOrderIndependent sums random values of huge dynamic range in
// many orders and splits: every way gives the bits of the exact sum, and
// the same encoding.
func TestRandomOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		n := 1 + rng.IntN(600)
		xs := randomValues(rng, n)
		if trial%2 == 1 {
			xs = cancelToResidual(t, xs)
		}
		want := exact(t, xs)
		var first Acc
		first.AddSlice(xs)
		requireBits(t, want, first.Float64(), "trial %d: in order", trial)
		enc, err := first.MarshalBinary()
		require.NoError(t, err)

		for perm := range 6 {
			ys := append([]float64(nil), xs...)
			rng.Shuffle(len(ys), func(i, j int) { ys[i], ys[j] = ys[j], ys[i] })
			var a Acc
			for _, y := range ys {
				a.Add(y)
			}
			requireBits(t, want, a.Float64(), "trial %d, permutation %d", trial, perm)
			got, err := a.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, enc, got, "trial %d, permutation %d: encodings differ", trial, perm)
		}
		for split := range 6 {
			requireBits(t, want, splitSum(rng, xs), "trial %d, split %d", trial, split)
		}
	}
}

// TestResidualIsExact checks a case naive summation gets badly wrong: the
// sum of values minus their rounded sum is the tiny rounding error.
func TestResidualIsExact(t *testing.T) {
	xs := []float64{1e16, 1, 1, 1, -1e16} // exact sum 3; naive gives 2 or 4
	requireBits(t, 3, sumOf(xs))
	// 2^-1074 is far below half an ulp of 2^-1000, so it rounds away.
	xs = []float64{0x1p1000, 0x1p-1000, 0x1p-1074, -0x1p1000}
	requireBits(t, 0x1p-1000, sumOf(xs))
	requireBits(t, exact(t, xs), sumOf(xs))
}

// TestKnownSums checks hand-computed sums, including ties to even, sticky
// bits far below the rounding point, borrows, subnormals and overflow.
func TestKnownSums(t *testing.T) {
	p53 := 0x1p53
	tiny := 0x1p-1074 // the smallest subnormal
	cases := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"cancelling 1e100", []float64{1, 1e100, 1, -1e100}, 2},
		{"0.1 ten times", []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1},
		{"2^53+1 ties down to even", []float64{p53, 1}, p53},
		{"2^53+3 ties up to even", []float64{p53, 3}, p53 + 4},
		{"2^53+1 and a far sticky bit rounds up", []float64{p53, 1, tiny}, p53 + 2},
		{"-(2^53+1) ties to even", []float64{-p53, -1}, -p53},
		{"-(2^53+3) ties to even", []float64{-p53, -3}, -p53 - 4},
		{"-(2^53+1) and a far sticky bit", []float64{-p53, -1, -tiny}, -p53 - 2},
		{"1+2^-53 ties down", []float64{1, 0x1p-53}, 1},
		{"1+2^-53+tiny rounds up", []float64{1, 0x1p-53, tiny}, 1 + 0x1p-52},
		{"1-2^-54 ties up to 1", []float64{1, -0x1p-54}, 1},
		{"1-2^-54-tiny borrows and rounds down", []float64{1, -0x1p-54, -tiny}, 1 - 0x1p-53},
		{"-1+tiny rounds to -1", []float64{-1, tiny}, -1},
		{"-1e300+1e-300", []float64{-1e300, 1e-300}, -1e300},
		{"subnormals add exactly", []float64{tiny, tiny, tiny}, 3 * tiny},
		{"largest subnormal plus tiny is normal", []float64{0x1p-1022 - tiny, tiny}, 0x1p-1022},
		{"subnormal cancellation", []float64{0x1p-1022, -tiny}, 0x1p-1022 - tiny},
		{"1 and -1 give +0", []float64{1, -1}, 0},
		{"-0 alone gives +0", []float64{math.Copysign(0, -1)}, 0},
		{"-0 twice gives +0", []float64{math.Copysign(0, -1), math.Copysign(0, -1)}, 0},
		{"empty gives +0", nil, 0},
		{"overflow", []float64{math.MaxFloat64, math.MaxFloat64}, math.Inf(1)},
		{"negative overflow", []float64{-math.MaxFloat64, -0x1p1023}, math.Inf(-1)},
		{"2^1023 twice overflows", []float64{0x1p1023, 0x1p1023}, math.Inf(1)},
		{"MaxFloat64 plus half an ulp ties up to Inf", []float64{math.MaxFloat64, 0x1p970}, math.Inf(1)},
		{"MaxFloat64 plus just under half an ulp", []float64{math.MaxFloat64, 0x1p970, -tiny}, math.MaxFloat64},
		{"MaxFloat64 plus a quarter ulp", []float64{math.MaxFloat64, 0x1p969}, math.MaxFloat64},
		{"intermediate overflow cancels", []float64{math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64}, math.MaxFloat64},
		{"far apart scales", []float64{math.MaxFloat64, tiny, -math.MaxFloat64}, tiny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !math.IsInf(c.want, 0) {
				requireBits(t, c.want, exact(t, c.xs), "the oracle disagrees with the expected value")
			}
			requireBits(t, c.want, sumOf(c.xs), "in order")
			rev := make([]float64, len(c.xs))
			for i, x := range c.xs {
				rev[len(rev)-1-i] = x
			}
			requireBits(t, c.want, sumOf(rev), "reversed")
			// And each value in its own accumulator, merged.
			var total Acc
			for _, x := range c.xs {
				var one Acc
				one.Add(x)
				total.Merge(&one)
			}
			requireBits(t, c.want, total.Float64(), "merged")
		})
	}
	// Naive summation of 0.1 gets it wrong, which is the point.
	naive := 0.0
	for range 10 {
		naive += 0.1
	}
	require.NotEqual(t, 1.0, naive)
}

// TestNonFinite checks that NaN and infinities are remembered as specified,
// through Add, Merge, Reset and the encoding.
func TestNonFinite(t *testing.T) {
	inf, ninf, nan := math.Inf(1), math.Inf(-1), math.NaN()
	negNaN := math.Float64frombits(0xfff8000000000000)
	sigNaN := math.Float64frombits(0x7ff0000000000001)
	cases := []struct {
		name string
		xs   []float64
		want float64 // NaN means any NaN
	}{
		{"NaN", []float64{nan}, nan},
		{"NaN among finite", []float64{1, nan, 2}, nan},
		{"negative NaN", []float64{negNaN}, nan},
		{"signalling NaN", []float64{sigNaN}, nan},
		{"+Inf", []float64{inf}, inf},
		{"-Inf", []float64{ninf}, ninf},
		{"+Inf twice", []float64{inf, inf}, inf},
		{"+Inf with finite", []float64{-math.MaxFloat64, inf, -math.MaxFloat64}, inf},
		{"-Inf with finite", []float64{math.MaxFloat64, ninf, 5}, ninf},
		{"+Inf and -Inf", []float64{inf, 1, ninf}, nan},
		{"Inf and NaN", []float64{inf, nan}, nan},
	}
	check := func(t *testing.T, want, got float64, msg string) {
		t.Helper()
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(got), "%s: want NaN, got %v", msg, got)
			return
		}
		requireBits(t, want, got, msg)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a Acc
			a.AddSlice(c.xs)
			check(t, c.want, a.Float64(), "added")

			var m Acc
			for _, x := range c.xs {
				var one Acc
				one.Add(x)
				m.Merge(&one)
			}
			check(t, c.want, m.Float64(), "merged")

			enc, err := a.MarshalBinary()
			require.NoError(t, err)
			var b Acc
			require.NoError(t, b.UnmarshalBinary(enc))
			check(t, c.want, b.Float64(), "decoded")

			a.Reset()
			requireBits(t, 0, a.Float64(), "reset")
			a.Add(1.5)
			requireBits(t, 1.5, a.Float64(), "reset then added")
		})
	}
}

// TestEncoding checks the round trip, that a decoded Acc keeps summing
// exactly, and that bad encodings are refused without touching the Acc.
func TestEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 20 {
		xs := randomValues(rng, 1+rng.IntN(200))
		var a Acc
		a.AddSlice(xs)
		enc, err := a.MarshalBinary()
		require.NoError(t, err)
		require.Len(t, enc, encodedLen)
		require.Equal(t, 546, encodedLen)

		var b Acc
		b.Add(42) // overwritten by UnmarshalBinary
		require.NoError(t, b.UnmarshalBinary(enc))
		requireBits(t, a.Float64(), b.Float64(), "trial %d", trial)
		enc2, err := b.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, enc, enc2, "trial %d: re-encoding differs", trial)

		more := randomValues(rng, 50)
		b.AddSlice(more)
		requireBits(t, exact(t, append(append([]float64(nil), xs...), more...)), b.Float64(), "trial %d: adding after decoding", trial)
	}

	var a Acc
	a.Add(-3.25)
	enc, err := a.MarshalBinary()
	require.NoError(t, err)
	bad := map[string][]byte{
		"nil":           nil,
		"one short":     enc[:len(enc)-1],
		"one long":      append(append([]byte(nil), enc...), 0),
		"version 2":     withByte(enc, 0, 2),
		"unknown flag":  withByte(enc, 1, 0x08),
		"limb 3 ≥ 2^32": withByte(enc, 2+8*3+4, 1),
		"limb 0 < 0":    withByte(enc, 2+8*0+7, 0x80),
	}
	for name, b := range bad {
		t.Run(name, func(t *testing.T) {
			var c Acc
			c.Add(7)
			before := c
			err := c.UnmarshalBinary(b)
			require.Error(t, err)
			require.Contains(t, err.Error(), "exactsum: UnmarshalBinary")
			require.Equal(t, before, c, "a refused encoding must leave the Acc alone")
		})
	}
	var c Acc
	err = c.UnmarshalBinary(enc[:100])
	require.ErrorContains(t, err, "100 bytes, want 546")
}

func withByte(b []byte, i int, v byte) []byte {
	c := append([]byte(nil), b...)
	c[i] = v
	return c
}

// limbsRat is the exact value of raw limbs, read without Acc's code.
func limbsRat(l *[nLimbs]int64) *big.Rat {
	var sum big.Int
	for i := top; i >= 0; i-- {
		sum.Lsh(&sum, 32)
		sum.Add(&sum, big.NewInt(l[i]))
	}
	return new(big.Rat).SetFrac(&sum, new(big.Int).Lsh(big.NewInt(1), -limbExp))
}

// TestCarryHeadroom drives an Acc to the most unpropagated carries it can
// hold (a normal form of all-ones limbs, then normEvery-1 Adds of a value
// with the largest pieces), then adds and merges, and checks the exact
// value of the limbs and their bound: a limb wraps around, or exceeds the
// bound that the remaining Adds before propagation rely on, if carries are
// propagated too rarely or Merge leaves its result unpropagated.
func TestCarryHeadroom(t *testing.T) {
	// m = 2^53-1 at bit offset 11 of limb 32: its pieces 2^32-2^11 and
	// 2^32-1 are as large as two pieces of one value get.
	x := math.Ldexp(float64(1<<53-1), 11+32*32-1075)
	var one Acc
	one.Add(x)
	require.Equal(t, int64(1<<32-1<<11), one.limbs[32])
	require.Equal(t, int64(mask32), one.limbs[33])

	// A normalised Acc with limbs 0..60 all ones (about 2^877, so that it
	// rounds to a finite float64), plus normEvery-1 Adds of x, none of which
	// propagates.
	var full Acc
	for i := range 61 {
		full.limbs[i] = mask32
	}
	base := limbsRat(&full.limbs)
	for i := range full.limbs {
		full.limbs[i] += one.limbs[i] * (normEvery - 1)
	}
	full.n = normEvery - 1

	xr := new(big.Rat).SetFloat64(x)
	times := func(k int64, r *big.Rat) *big.Rat { return new(big.Rat).Mul(new(big.Rat).SetInt64(k), r) }
	plus := func(rs ...*big.Rat) *big.Rat {
		s := new(big.Rat)
		for _, r := range rs {
			s.Add(s, r)
		}
		return s
	}
	fullR := plus(base, times(normEvery-1, xr))
	require.Zero(t, fullR.Cmp(limbsRat(&full.limbs)))

	check := func(want *big.Rat, a *Acc, msg string) {
		t.Helper()
		require.Zero(t, want.Cmp(limbsRat(&a.limbs)), "%s: limbs have the wrong value", msg)
		// The bound that keeps the next normEvery-n Adds from overflowing.
		for i, v := range a.limbs[:top] {
			require.LessOrEqual(t, max(v, -v), int64(a.n+1)*mask32, "%s: limb %d is %d after %d Adds", msg, i, v, a.n)
		}
		f, _ := want.Float64()
		requireBits(t, f, a.Float64(), msg)
	}
	check(fullR, &full, "at the limit")

	a := full
	a.Add(x)
	require.Zero(t, a.n, "carries must be propagated after normEvery Adds")
	a.Add(x)
	check(plus(fullR, times(2, xr)), &a, "added past the limit")

	b := full
	b.Merge(&full)
	check(times(2, fullR), &b, "merged two at the limit")
	b.Add(x)
	check(plus(times(2, fullR), xr), &b, "merged two at the limit, then added")
	b.Merge(&full)
	check(plus(times(3, fullR), xr), &b, "merged a third")

	c := full
	c.Merge(&c)
	check(times(2, fullR), &c, "merged into itself")
	c.Merge(&c)
	check(times(4, fullR), &c, "merged into itself twice")

	d := full
	d.Merge(&a)
	check(plus(times(2, fullR), times(2, xr)), &d, "merged with a propagated Acc")

	// The same with everything negated.
	neg := full
	for i := range neg.limbs {
		neg.limbs[i] = -neg.limbs[i]
	}
	e := full
	e.Merge(&neg)
	check(new(big.Rat), &e, "cancelled")
	neg.Add(-x)
	check(plus(times(-1, fullR), times(-1, xr)), &neg, "negative, added past the limit")
	neg.Merge(&full)
	check(times(-1, xr), &neg, "negative, merged")
}

// TestReadersDoNotModify checks that Float64 and MarshalBinary only read the
// Acc, so concurrent readers are safe (run with -race).
func TestReadersDoNotModify(t *testing.T) {
	var a Acc
	a.AddSlice([]float64{1e300, -3, 0.5, -1e300, 0x1p-1074})
	before := a
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_ = a.Float64()
			_, _ = a.MarshalBinary()
		})
	}
	wg.Wait()
	require.Equal(t, before, a)
}

// TestSumOverRanks splits one slice over 1, 2, 3 and 5 goroutine ranks in
// several ways: every rank gets the bits of the serial exact sum.
func TestSumOverRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	xs := cancelToResidual(t, randomValues(rng, 2000))
	want := exact(t, xs)
	requireBits(t, want, sumOf(xs))

	splits := map[string]func(i, n int) int{
		"blocks":      func(i, n int) int { return i * n / len(xs) },
		"round robin": func(i, n int) int { return i % n },
		"random":      func(i, n int) int { return int(uint64(i)*0x9e3779b97f4a7c15>>33) % n },
		"all on last": func(i, n int) int { return n - 1 },
	}
	for _, n := range []int{1, 2, 3, 5} {
		for name, owner := range splits {
			t.Run(fmt.Sprintf("%d ranks, %s", n, name), func(t *testing.T) {
				got := make([]float64, n)
				err := local.Run(n, func(c comm.Comm) error {
					var a *Acc // nil on ranks that own nothing
					for i, x := range xs {
						if owner(i, n) == c.Rank() {
							if a == nil {
								a = new(Acc)
							}
							a.Add(x)
						}
					}
					s, err := Sum(c, a)
					got[c.Rank()] = s
					return err
				})
				require.NoError(t, err)
				for r, g := range got {
					requireBits(t, want, g, "rank %d", r)
				}
			})
		}
	}
}

// TestSumNonFinite checks that NaN and infinities on one rank reach all.
func TestSumNonFinite(t *testing.T) {
	run := func(vals []float64) []float64 {
		got := make([]float64, len(vals))
		require.NoError(t, local.Run(len(vals), func(c comm.Comm) error {
			var a Acc
			a.Add(vals[c.Rank()])
			s, err := Sum(c, &a)
			got[c.Rank()] = s
			return err
		}))
		return got
	}
	for r, g := range run([]float64{1, math.Inf(1), 2}) {
		requireBits(t, math.Inf(1), g, "rank %d", r)
	}
	for r, g := range run([]float64{math.Inf(-1), 1, math.Inf(1)}) {
		require.True(t, math.IsNaN(g), "rank %d: want NaN, got %v", r, g)
	}
	for r, g := range run([]float64{1, 2, math.NaN()}) {
		require.True(t, math.IsNaN(g), "rank %d: want NaN, got %v", r, g)
	}
}

// corruptGather is a Comm whose Gatherv truncates rank 1's contribution on
// the root, to check that Sum fails on every rank instead of hanging.
type corruptGather struct{ comm.Comm }

func (c corruptGather) Gatherv(send []byte, root int) ([][]byte, error) {
	all, err := c.Comm.Gatherv(send, root)
	if err == nil && all != nil {
		all[1] = all[1][:10]
	}
	return all, err
}

// TestSumBadContribution checks that a contribution rank 0 cannot decode
// makes Sum fail on every rank with a clear error.
func TestSumBadContribution(t *testing.T) {
	errs := make([]error, 3)
	_ = local.Run(3, func(c comm.Comm) error {
		var a Acc
		a.Add(float64(c.Rank()))
		_, errs[c.Rank()] = Sum(corruptGather{c}, &a)
		return nil
	})
	require.ErrorContains(t, errs[0], "accumulator of rank 1")
	require.ErrorContains(t, errs[0], "10 bytes, want 546")
	for r := 1; r < 3; r++ {
		require.True(t, errors.Is(errs[r], errRootFailed), "rank %d: %v", r, errs[r])
	}
}

// benchValues is a mix of magnitudes for the benchmarks.
func benchValues() []float64 {
	rng := rand.New(rand.NewPCG(7, 8))
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = randomValue(rng)
	}
	return xs
}

// BenchmarkAdd measures one Add per iteration (ns/op is ns per Add).
func BenchmarkAdd(b *testing.B) {
	xs := benchValues()
	var a Acc
	i := 0
	for b.Loop() {
		a.Add(xs[i&(len(xs)-1)])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/add")
	_ = a.Float64()
}

// BenchmarkAddSlice measures AddSlice over 4096 values, per value.
func BenchmarkAddSlice(b *testing.B) {
	xs := benchValues()
	var a Acc
	n := 0
	for b.Loop() {
		a.AddSlice(xs)
		n += len(xs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/add")
}

// BenchmarkFloat64 measures reading the rounded sum.
func BenchmarkFloat64(b *testing.B) {
	var a Acc
	a.AddSlice(benchValues())
	for b.Loop() {
		_ = a.Float64()
	}
}

// TestSumAllOverRanks: several sums in one collective equal each summed
// alone, on every rank and split.
func TestSumAllOverRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sets := [][]float64{cancelToResidual(t, randomValues(rng, 900)), randomValues(rng, 700), {}}
	for _, n := range []int{1, 2, 3} {
		got := make([][]float64, n)
		err := local.Run(n, func(c comm.Comm) error {
			accs := make([]*Acc, len(sets))
			for s, xs := range sets {
				accs[s] = new(Acc)
				for i, x := range xs {
					if i%n == c.Rank() {
						accs[s].Add(x)
					}
				}
			}
			sums, err := SumAll(c, accs)
			got[c.Rank()] = sums
			return err
		})
		require.NoError(t, err)
		for r := range got {
			for s, xs := range sets {
				requireBits(t, exact(t, xs), got[r][s], "%d ranks, rank %d, set %d", n, r, s)
			}
		}
	}
}
