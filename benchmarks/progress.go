package benchmarks

import (
	"fmt"
	"io"
	"time"
)

// progress prints a line before each run of a study: which point and
// repetition, how many runs are done, and the time left, estimated from
// each point's last run (points not yet run count as the mean of those
// that have).
type progress struct {
	w        io.Writer
	kind     Kind
	points   []Resources
	reps     int
	last     []time.Duration // per point; 0 = not run yet
	finished int             // runs done
}

func newProgress(w io.Writer, kind Kind, points []Resources, reps int) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, kind: kind, points: points, reps: reps, last: make([]time.Duration, len(points))}
}

// start announces repetition rep (1-based) of point i (0-based).
func (p *progress) start(i, rep int) {
	line := fmt.Sprintf("bench %s: point %d/%d (%s) rep %d/%d, run %d/%d", p.kind, i+1, len(p.points),
		p.points[i], rep, p.reps, p.finished+1, len(p.points)*p.reps)
	if eta, ok := p.eta(i, rep); ok {
		line += ", ETA " + eta.Round(time.Second).String()
	}
	fmt.Fprintln(p.w, line)
}

// done records that a run of point i took d.
func (p *progress) done(i int, d time.Duration) {
	p.last[i] = d
	p.finished++
}

// eta is the estimated time to finish every run from repetition rep of
// point i on (the study runs rounds: every point once per repetition).
func (p *progress) eta(i, rep int) (time.Duration, bool) {
	var sum time.Duration
	n := 0
	for _, d := range p.last {
		if d > 0 {
			sum += d
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	mean := sum / time.Duration(n)
	var left time.Duration
	for r := rep; r <= p.reps; r++ {
		for j := range len(p.points) {
			if r == rep && j < i {
				continue
			}
			if p.last[j] > 0 {
				left += p.last[j]
			} else {
				left += mean
			}
		}
	}
	return left, true
}
