package benchmarks

import (
	"fmt"
	"math"
	"strings"
)

// NoisySpread is the most that a point's repetitions may spread, as
// (max − min) / median of their times per step, for the point to count as
// a measurement: past 10% the point is marked noisy in summary.md,
// points.csv and the plots, since a difference between two points smaller
// than their spread says nothing.
const NoisySpread = 0.10

// ModelMissError is the most that the α–β model may be off a point's
// median time per step, as |model − measured| / measured, for the two to
// agree: past 25% the point is marked a model miss in summary.md,
// points.csv and the plots, and the model's extrapolation beyond the
// measured ranks deserves less trust.
const ModelMissError = 0.25

// Markers of the summary's flagged points.
const (
	noisyMark = "⚠ noisy"
	missMark  = "✗ model miss"
)

// PointCheck is how far one point can be trusted. NaN stands for "cannot
// tell": a spread of a single repetition, a model's figures for a point the
// model does not cover.
type PointCheck struct {
	// Spread is (max − min) / median of the repetitions' times per step.
	Spread float64
	Noisy  bool // Spread > NoisySpread
	// ModelS is the α–β model's time per step at the point's ranks, on its
	// grid; the model covers the points with its threads per rank.
	ModelS float64
	// ModelErr is (ModelS − measured median) / measured median: negative
	// when the point ran slower than predicted.
	ModelErr  float64
	ModelMiss bool // |ModelErr| > ModelMissError
}

// Checks are the study's PointChecks, one for each of st.Points.
func (st *Study) Checks() []PointCheck {
	out := make([]PointCheck, len(st.Points))
	for i, p := range st.Points {
		c := PointCheck{Spread: math.NaN(), ModelS: math.NaN(), ModelErr: math.NaN()}
		if p.Reps > 1 && p.StepMedianS > 0 {
			c.Spread = (p.StepMaxS - p.StepMinS) / p.StepMedianS
			c.Noisy = c.Spread > NoisySpread
		}
		if st.Model != nil && p.Threads == st.Model.Threads && p.StepMedianS > 0 {
			if pr, err := st.Model.Predict(p.Rep.Shape, p.Ranks); err == nil {
				c.ModelS = pr.StepS
				c.ModelErr = (pr.StepS - p.StepMedianS) / p.StepMedianS
				c.ModelMiss = math.Abs(c.ModelErr) > ModelMissError
			}
		}
		out[i] = c
	}
	return out
}

// measuredRanks is the most ranks of a point the model covers (the model's
// threads per rank): its predictions past that are extrapolations. 0
// without a model.
func (st *Study) measuredRanks() int {
	most := 0
	for _, p := range st.Points {
		if st.Model != nil && p.Threads == st.Model.Threads {
			most = max(most, p.Ranks)
		}
	}
	return most
}

// writeChecks explains the summary's markers: one line for each flagged
// point, or one line that says that none is flagged.
func writeChecks(b *strings.Builder, st *Study, checks []PointCheck) {
	flagged := false
	for i, c := range checks {
		p := st.Points[i]
		if c.Noisy {
			flagged = true
			fmt.Fprintf(b, "\n%s: point %d (%s): repetitions spread %s (min–max over median of the times per step) > %s; "+
				"differences smaller than that are noise.  ", noisyMark, p.Point, p.Resources, pct(c.Spread), pct(NoisySpread))
		}
		if c.ModelMiss {
			flagged = true
			fmt.Fprintf(b, "\n%s: point %d (%s): the α–β model predicts %.4g ms per step, the median is %.4g ms: off by %s "+
				"(|model − measured| / measured > %s).  ", missMark, p.Point, p.Resources, c.ModelS*1e3, p.StepMedianS*1e3,
				signedPct(c.ModelErr), pct(ModelMissError))
		}
	}
	if !flagged {
		fmt.Fprintf(b, "\nNo point is noisy (repetitions spread ≤ %s, min–max over median of the times per step)", pct(NoisySpread))
		if st.Model != nil {
			fmt.Fprintf(b, " or missed by the model (|model − measured| / measured ≤ %s)", pct(ModelMissError))
		}
		b.WriteString(".  ")
	}
	var single, unmodelled bool
	for i, c := range checks {
		single = single || math.IsNaN(c.Spread)
		unmodelled = unmodelled || st.Model != nil && st.Points[i].Threads != st.Model.Threads
	}
	if single {
		b.WriteString("\nPoints of one repetition have no spread to judge noise by.  ")
	}
	if unmodelled {
		fmt.Fprintf(b, "\nThe model predicts only the points with its %d thread(s) per rank (– elsewhere).  ", st.Model.Threads)
	}
	b.WriteString("\n")
}

// pct writes a fraction as a whole percentage: "23%".
func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// signedPct writes a fraction as a signed whole percentage: "+12%",
// "−50%", and "0%" for what rounds to zero.
func signedPct(x float64) string {
	switch v := math.Round(100 * x); {
	case v < 0:
		return fmt.Sprintf("−%.0f%%", -v)
	case v > 0:
		return fmt.Sprintf("+%.0f%%", v)
	}
	return "0%"
}

// flagged writes a table cell: x formatted, or "–" for NaN, then the
// marker when flag is set.
func flagged(x float64, format func(float64) string, flag bool, marker string) string {
	if math.IsNaN(x) {
		return "–"
	}
	if flag {
		return format(x) + " " + marker
	}
	return format(x)
}
