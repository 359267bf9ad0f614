package heatmap

import (
	"math"
	"strconv"
	"strings"
)

// niceSteps are the mantissas of a tick step: a step is one of them times a
// power of ten, so ticks read as round numbers.
var niceSteps = [...]float64{1, 2, 2.5, 5}

// niceTicks returns round values inside [lo, hi] to label an axis with: the
// multiples of the smallest step m × 10^k (m one of 1, 2, 2.5, 5) that
// gives at most n of them, or of the next smaller step where that leaves
// fewer than two. step is the step chosen (0 when there is none).
//
// lo == hi gives that one value; a range that is empty, not finite, or too
// narrow for float64 to hold distinct multiples gives its ends (or nil).
func niceTicks(lo, hi float64, n int) (ticks []float64, step float64) {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi:
		return nil, 0
	case lo == hi:
		return []float64{lo}, 0
	}
	n = max(n, 2)
	span := hi - lo
	if math.IsInf(span, 0) { // finite ends whose difference overflows
		return []float64{lo, hi}, 0
	}
	// k starts a decade below the step that would give exactly n ticks.
	k := int(math.Floor(math.Log10(span/float64(n-1)))) - 1
	var prev []float64
	var prevStep float64
	for range 12 { // 3 decades of candidates: enough, since k starts one below
		for _, m := range niceSteps {
			t, s, ok := multiples(lo, hi, m, k)
			if !ok {
				continue
			}
			if len(t) <= n {
				if len(t) < 2 && len(prev) >= 2 {
					return prev, prevStep
				}
				return t, s
			}
			prev, prevStep = t, s
		}
		k++
	}
	return []float64{lo, hi}, 0
}

// multiples lists the multiples of m × 10^k inside [lo, hi], each the
// float64 nearest its decimal value (so 0.3 prints as 0.3). ok is false when
// there would be too many to list or float64 cannot tell them apart.
func multiples(lo, hi, m float64, k int) (t []float64, step float64, ok bool) {
	pow := math.Pow10(k)
	step = m * pow
	if step == 0 || math.IsInf(step, 0) {
		return nil, 0, false
	}
	// A rounding error in the division must not lose a tick at an end: take
	// one more each side, and keep what lies inside.
	i0, i1 := math.Ceil(lo/step)-1, math.Floor(hi/step)+1
	if i1-i0 > 1000 || math.Abs(i0) > 1<<52 || math.Abs(i1) > 1<<52 {
		return nil, 0, false
	}
	for i := i0; i <= i1; i++ {
		var v float64
		if k < 0 && k >= -22 { // 10^-k is exact: one correctly rounded division
			v = i * m / math.Pow10(-k)
		} else {
			v = i * m * pow
		}
		if v < lo || v > hi {
			continue
		}
		if len(t) > 0 && v == t[len(t)-1] {
			return nil, 0, false
		}
		t = append(t, v)
	}
	return t, step, true
}

// tickLabels formats ticks that step apart (from niceTicks) with as many
// digits as the step needs, all alike: plain decimals from 0.001 to below
// 10^6, otherwise scientific notation ("2.5e-27", "1.5e6"). Zero is "0".
func tickLabels(ticks []float64, step float64) []string {
	s := make([]string, len(ticks))
	if len(ticks) == 0 {
		return s
	}
	big := 0.0
	for _, v := range ticks {
		big = max(big, math.Abs(v))
	}
	if step <= 0 || math.IsNaN(step) { // one value, or no round step
		for i, v := range ticks {
			s[i] = Shortest(v)
		}
		return s
	}
	// step = m × 10^k; a step of 2.5 needs one digit more than its decade.
	k := int(math.Floor(math.Log10(step) + 1e-9))
	extra := 0
	if m := step / math.Pow10(k); math.Abs(m-2.5) < 1e-6 {
		extra = 1
	}
	e := 0
	if big > 0 {
		e = int(math.Floor(math.Log10(big)))
	}
	scientific := e >= 6 || (big > 0 && e < -3)
	for i, v := range ticks {
		switch {
		case v == 0:
			s[i] = "0"
		case scientific:
			s[i] = tidyExponent(strconv.FormatFloat(v, 'e', max(0, e-k+extra), 64))
		default:
			s[i] = strconv.FormatFloat(v, 'f', max(0, extra-k), 64)
		}
	}
	return s
}

// Shortest formats v in the fewest digits that read back as v, scientific
// outside [0.001, 10^6).
func Shortest(v float64) string {
	a := math.Abs(v)
	if v == 0 || (a >= 1e-3 && a < 1e6) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return tidyExponent(strconv.FormatFloat(v, 'e', -1, 64))
}

// tidyExponent drops the plus sign and leading zeros of an exponent:
// "1.5e+06" becomes "1.5e6", "2e-07" becomes "2e-7".
func tidyExponent(s string) string {
	mant, exp, ok := strings.Cut(s, "e")
	if !ok {
		return s
	}
	sign := ""
	switch exp[0] {
	case '-':
		sign, exp = "-", exp[1:]
	case '+':
		exp = exp[1:]
	}
	exp = strings.TrimLeft(exp, "0")
	if exp == "" {
		exp = "0"
	}
	return mant + "e" + sign + exp
}
