package heatmap

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireRound checks the contract of niceTicks and tickLabels on one
// range: every tick inside [lo, hi], a multiple of a step of 1, 2, 2.5 or
// 5 × 10^k, at least two of them, labels distinct that read back as the
// ticks.
func requireRound(t *testing.T, lo, hi float64, n int) ([]float64, []string) {
	t.Helper()
	ticks, step := niceTicks(lo, hi, n)
	labels := tickLabels(ticks, step)
	require.GreaterOrEqual(t, len(ticks), 2, "[%g, %g]: %v", lo, hi, ticks)
	require.LessOrEqual(t, len(ticks), 2*n+1, "[%g, %g]", lo, hi)
	k := math.Floor(math.Log10(step) + 1e-9)
	m := step / math.Pow(10, k)
	require.True(t, slicesHasClose([]float64{1, 2, 2.5, 5}, m), "[%g, %g]: step %g is not 1, 2, 2.5 or 5 × 10^k", lo, hi, step)
	for i, v := range ticks {
		require.True(t, v >= lo && v <= hi, "[%g, %g]: tick %g outside", lo, hi, v)
		q := v / step
		require.InDelta(t, math.Round(q), q, 1e-6+1e-12*math.Abs(q), "[%g, %g]: tick %g is not a multiple of %g", lo, hi, v, step)
		if i > 0 {
			require.Less(t, ticks[i-1], v)
			require.NotEqual(t, labels[i-1], labels[i])
		}
		back, err := strconv.ParseFloat(labels[i], 64)
		require.NoError(t, err, labels[i])
		require.InDelta(t, v, back, step*1e-6, "label %q of %g", labels[i], v)
	}
	return ticks, labels
}

func slicesHasClose(s []float64, v float64) bool {
	for _, x := range s {
		if math.Abs(x-v) < 1e-9 {
			return true
		}
	}
	return false
}

func TestTicksAreRoundNumbersInsideTheRange(t *testing.T) {
	_, labels := requireRound(t, 2.76e-27, 0.766, 6)
	require.Equal(t, []string{"0.2", "0.4", "0.6"}, labels, "0 is below the range")
	ticks, labels := requireRound(t, -3, 7, 6)
	require.Equal(t, []float64{-2, 0, 2, 4, 6}, ticks)
	require.Equal(t, []string{"-2", "0", "2", "4", "6"}, labels)
	_, labels = requireRound(t, 1e5, 1.0003e5, 6)
	require.Equal(t, []string{"100000", "100010", "100020", "100030"}, labels)
	_, labels = requireRound(t, 0, 3e-27, 6)
	require.Equal(t, []string{"0", "1e-27", "2e-27", "3e-27"}, labels, "scientific where the magnitudes need it")
	_, labels = requireRound(t, 0, 1, 6)
	require.Equal(t, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}, labels, "one precision for all labels")
	_, labels = requireRound(t, 0, 1, 5)
	require.Equal(t, []string{"0", "0.25", "0.50", "0.75", "1.00"}, labels, "a step of 2.5 needs a digit more")
	_, labels = requireRound(t, 1e6, 5.5e6, 5)
	require.Equal(t, []string{"1e6", "2e6", "3e6", "4e6", "5e6"}, labels)
	_, labels = requireRound(t, 1.2e6, 1.9e6, 3)
	require.Equal(t, []string{"1.25e6", "1.50e6", "1.75e6"}, labels)
	_, labels = requireRound(t, -4.2e-5, 3.1e-5, 5)
	require.Equal(t, []string{"-4e-5", "-2e-5", "0", "2e-5"}, labels)
	requireRound(t, 299.99, 300.01, 5)
	requireRound(t, 1-1e-12, 1+1e-12, 5)
	for _, n := range []int{2, 3, 5, 8} {
		for _, r := range [][2]float64{{0, 0.1}, {-1, 1}, {0.3, 0.7}, {1e-300, 2e-300}, {-1e300, 1e300}, {17, 17.5}} {
			requireRound(t, r[0], r[1], n)
		}
	}
}

func TestTicksOfDegenerateRanges(t *testing.T) {
	ticks, step := niceTicks(0, 0, 6)
	require.Equal(t, []float64{0}, ticks)
	require.Equal(t, []string{"0"}, tickLabels(ticks, step))
	ticks, step = niceTicks(2.5e-9, 2.5e-9, 6)
	require.Equal(t, []string{"2.5e-9"}, tickLabels(ticks, step))
	for _, r := range [][2]float64{{1, 0}, {math.NaN(), 1}, {0, math.Inf(1)}} {
		ticks, _ := niceTicks(r[0], r[1], 5)
		require.Empty(t, ticks, "%v", r)
	}
	// Too narrow for float64 to hold round multiples: the ends, readable.
	ticks, step = niceTicks(1e5, math.Nextafter(1e5, 2e5), 5)
	require.Len(t, ticks, 2)
	l := tickLabels(ticks, step)
	require.NotEqual(t, l[0], l[1])
	require.Equal(t, "1.5e6", tidyExponent("1.5e+06"))
	require.Equal(t, "2e-7", tidyExponent("2e-07"))
	require.Equal(t, "1e0", tidyExponent("1e+00"))
}
