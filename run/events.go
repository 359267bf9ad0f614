package run

import (
	"fmt"
	"math"
	"slices"

	"heat/io/config"
	"heat/io/expr"
	"heat/solver"
)

// maxTableKnots bounds the knots of one time table that steps land on: a
// table of measured data with more rows inside the run is followed by the
// error control alone (its knots are kinks, not jumps).
const maxTableKnots = 10_000

// adaptiveOf is the solver's steps that choose themselves of cfg (nil with
// fixed steps): its tolerances and bounds, and the events steps land on —
// run.events, the switches of the source's and the faces' expressions and
// the knots of their time tables, output.probe_dt's times (also where
// RunTo pauses), and run.t_end last. notes say which keys' switches could
// not be found (they must be declared in run.events) and which tables'
// knots are left to the error control.
func adaptiveOf(cfg *config.Config) (a *solver.Adaptive, notes []string, err error) {
	if !cfg.Adaptive() {
		return nil, nil, nil
	}
	e, tEnd := cfg.Equation, cfg.Run.TEnd
	events := slices.Clone(cfg.Run.Events)
	// The times the forcing may jump: run.events and the expressions'
	// switches (a table is linear between its knots: continuous there).
	switches := slices.Clone(cfg.Run.Events)
	add := func(key string, v config.Value) error {
		switch {
		case v.Expr != "":
			ex, err := expr.Compile(key, v.Expr)
			if err != nil {
				return err
			}
			times, ok := ex.Switches()
			if !ok {
				notes = append(notes, fmt.Sprintf("%s = %q reads t in a way whose switches heat cannot find (t compared after arithmetic, floor, ceil, round, a let): steps that choose themselves land only on those listed in run.events", key, v.Expr))
			}
			events = append(events, times...)
			switches = append(switches, times...)
		case v.Table != "":
			tab, err := expr.LoadTable(key, v.Table)
			if err != nil {
				return err
			}
			knots := tab.Knots()
			inside := 0
			for _, t := range knots {
				if t > 0 && t < tEnd {
					inside++
				}
			}
			if inside > maxTableKnots {
				notes = append(notes, fmt.Sprintf("%s: the table %s has %d rows inside the run, more than the %d steps land on; its knots are left to the error control", key, v.Table, inside, maxTableKnots))
				return nil
			}
			events = append(events, knots...)
		}
		return nil
	}
	for a := range cfg.NDim() {
		for side := range 2 {
			name := cfg.FaceName(a, side)
			_, value := cfg.FaceKind(a, side)
			if err := add("boundary."+name+".value", value); err != nil {
				return nil, nil, err
			}
			if h := cfg.FaceH(a, side); h != nil {
				if err := add("boundary."+name+".h", *h); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	if src := cfg.Source; src.Kind == "expr" {
		if err := add("source.expr", config.Value{Expr: src.Expr}); err != nil {
			return nil, nil, err
		}
	}
	if amp := cfg.Source.Amplitude; amp != nil && cfg.Source.Kind != "none" {
		if err := add("source.amplitude", *amp); err != nil {
			return nil, nil, err
		}
	}
	var pauses []float64
	for _, dt := range []float64{probeDT(cfg), snapshotDT(cfg), cfg.Checkpoint.EveryTime} {
		for k := 1; dt > 0 && float64(k)*dt < tEnd; k++ {
			pauses = append(pauses, float64(k)*dt)
		}
	}
	slices.Sort(pauses)
	pauses = slices.Compact(pauses)
	events = append(events, pauses...)
	events = slices.DeleteFunc(events, func(t float64) bool { return !(t > 0 && t < tEnd) })
	events = append(events, tEnd)
	slices.Sort(events)
	// One event for times closer than a millionth of dt_min (0.3 and
	// 3 × 0.1 = 0.30000000000000004): no step of a few ulps between them.
	events = slices.CompactFunc(events, func(a, b float64) bool { return math.Abs(b-a) < 1e-6*e.DTMin })
	events[len(events)-1] = tEnd // the last run of close times holds t_end: it stays
	// The events a switch of the forcing became (a close time merged into
	// one event keeps the event's value).
	var jumps []float64
	for _, t := range events[:len(events)-1] {
		if slices.ContainsFunc(switches, func(s float64) bool { return math.Abs(s-t) < 1e-6*e.DTMin }) {
			jumps = append(jumps, t)
		}
	}
	return &solver.Adaptive{RTol: e.RTol, ATol: e.ATol, DTMin: e.DTMin, DTMax: e.DTMax, DTInitial: e.DTInitial,
		Events: events, Pauses: pauses, Switches: jumps}, notes, nil
}

// probeDT and snapshotDT are the intervals of the probes' and snapshots'
// schedules by simulated time, 0 where there is none (no probes, no
// formats).
func probeDT(cfg *config.Config) float64 {
	if !probesOn(cfg) {
		return 0
	}
	return cfg.Output.ProbeDT
}

func snapshotDT(cfg *config.Config) float64 {
	if len(cfg.Output.Formats) == 0 {
		return 0
	}
	return cfg.Output.SnapshotDT
}

// onSchedule reports whether a step that paused at time t (solver.Paused)
// is one of the times k × dt (k ≥ 1) of a schedule by simulated time: the
// times the steps landed on, as adaptiveOf made them.
func onSchedule(paused bool, t, dt float64) bool {
	if !paused || !(dt > 0) {
		return false
	}
	k := math.Round(t / dt)
	return k >= 1 && float64(k)*dt == t
}
