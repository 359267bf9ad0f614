package run

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"time"
)

// logger prints a run's log lines on stderr: events (a checkpoint written,
// a restart), warnings, and progress. On a terminal the lines are plain
// ("heat: …") and progress is one line redrawn in place; off a terminal (a
// batch job's log) every line is a log/slog text record with a timestamp
// (time=… level=… msg=…), easy to grep and to parse. TERM=dumb or NO_COLOR
// redraw with a carriage return only, without escape codes.
type logger struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	plain bool // no escape codes
	quiet bool
	sl    *slog.Logger
	drawn int // length of the progress line on screen, 0 if none
}

func newLogger(w io.Writer, quiet bool) *logger {
	l := &logger{w: w, tty: isTerminal(w), quiet: quiet,
		plain: os.Getenv("TERM") == "dumb" || os.Getenv("NO_COLOR") != ""}
	if l.tty {
		l.sl = terminalLogger(l)
	} else {
		l.sl = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				a.Value = slog.StringValue(a.Value.Time().UTC().Format("2006-01-02T15:04:05.000Z"))
			}
			return a
		}}))
	}
	return l
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// log prints an event, unless quiet.
func (l *logger) log(format string, args ...any) {
	if !l.quiet {
		l.sl.Info(fmt.Sprintf(format, args...))
	}
}

// warn prints a warning even when quiet.
func (l *logger) warn(format string, args ...any) { l.sl.Warn(fmt.Sprintf(format, args...)) }

// progress prints a progress record: redrawn in place on a terminal.
func (l *logger) progress(line string, attrs ...any) {
	if l.tty {
		l.mu.Lock()
		defer l.mu.Unlock()
		pad := ""
		if l.plain && l.drawn > len(line) {
			pad = strings.Repeat(" ", l.drawn-len(line))
		}
		fmt.Fprintf(l.w, "\r%s%s%s", l.erase(), line, pad)
		l.drawn = max(1, len(line))
		return
	}
	l.sl.Info("progress", attrs...)
}

// done ends a redrawn progress line.
func (l *logger) done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn > 0 {
		fmt.Fprintln(l.w)
		l.drawn = 0
	}
}

func (l *logger) erase() string {
	if l.plain {
		return ""
	}
	return "\033[K"
}

func terminalLogger(l *logger) *slog.Logger { return slog.New(&plainHandler{l: l}) }

// plainHandler writes "heat: msg" (warnings "heat: warning: msg") on a
// terminal, below a redrawn progress line.
type plainHandler struct{ l *logger }

func (h *plainHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *plainHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *plainHandler) WithGroup(string) slog.Handler            { return h }
func (h *plainHandler) Handle(_ context.Context, r slog.Record) error {
	l := h.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn > 0 {
		fmt.Fprint(l.w, "\r", l.erase())
		if l.plain {
			fmt.Fprint(l.w, strings.Repeat(" ", l.drawn), "\r")
		}
		l.drawn = 0
	}
	prefix := "heat: "
	if r.Level >= slog.LevelWarn {
		prefix = "heat: warning: "
	}
	_, err := fmt.Fprintln(l.w, prefix+r.Message)
	return err
}

// progress follows a run's checks: a line redrawn every 200 ms on a
// terminal; off a terminal a line every `every` (output.progress_every)
// and at every tenth of the run. The rate is measured over the recent
// checks (rateWindow), and a Poisson run's ETA comes from its convergence
// rate, not its cap.
type progress struct {
	log       *logger
	now       func() time.Time // the clock (time.Now; a test's own)
	poisson   bool
	tolerance float64
	from      int
	total     int
	every     time.Duration
	// timeOf, with tEnd, measures a run whose steps choose themselves by
	// its simulated time (the steps to come are not known): the share of
	// tEnd done, and the ETA from simulated time over wall time.
	timeOf func() float64
	tEnd   float64

	start, lastLine time.Time
	lastStep        int
	tenth           int
	marks           []mark  // the recent checks, oldest first (record)
	rate            float64 // steps (iterations) a second over the marks
	tRate           float64 // simulated time a second over the marks (timeOf)
	samples         int     // checks that advanced
	lastRes         float64
	logFactor       float64 // log of the residual's factor an iteration, smoothed
}

// mark is a check: when, at which step.
type mark struct {
	at   time.Time
	step int
	t    float64 // simulated time (timeOf's)
}

// The rate is the steps done since the oldest mark over the time since it,
// with the marks older than rateWindow dropped but the newest always kept:
// the rate of the last two seconds, or of the last interval when checks
// are further apart. Steps over time, not a mean of the intervals' rates:
// a mean of rates counts a fast interval as much as a slow one however
// short it was, so beside another process (fast and slow stretches
// alternating) it showed hundreds of steps a second where twenty were
// done, and an ETA under a second for two minutes. Two seconds is long
// enough to even out checks that come in bursts (a multigrid cycle, a
// checkpoint's pause) and short enough that a slowdown shows within it; a
// mark every rateWindow/rateMarks at most keeps the marks few however
// often the checks come.
const (
	rateWindow = 2 * time.Second
	rateMarks  = 32
)

func newProgress(l *logger, poisson bool, tolerance float64, from, total int, every time.Duration) *progress {
	p := &progress{log: l, now: time.Now, poisson: poisson, tolerance: tolerance, from: from, total: total, every: every,
		lastStep: from, tenth: 10 * from / max(1, total)}
	p.restart()
	return p
}

// restart starts the clock and the marks afresh at the current step: when
// the time loop begins (the setup before it is not the rate's), and in a
// test that sets the clock.
func (p *progress) restart() {
	now := p.now()
	p.start, p.lastLine = now, now
	p.marks = append(p.marks[:0], mark{now, p.lastStep, p.simTime()})
}

// simTime is the simulated time now (0 without timeOf).
func (p *progress) simTime() float64 {
	if p.timeOf == nil {
		return 0
	}
	return p.timeOf()
}

// smoothing is the weight of the newest interval in the smoothed
// convergence factor.
const smoothing = 0.3

// record takes the check (now, step) into the rate: the rate since the
// oldest mark, then the marks brought up to date.
func (p *progress) record(now time.Time, step int) {
	for len(p.marks) > 1 && now.Sub(p.marks[0].at) > rateWindow {
		p.marks = p.marks[1:]
	}
	old, t := p.marks[0], p.simTime()
	if dt := now.Sub(old.at).Seconds(); dt > 0 && step >= old.step {
		p.rate = float64(step-old.step) / dt
		p.tRate = (t - old.t) / dt
	}
	if last := p.marks[len(p.marks)-1]; now.Sub(last.at) >= rateWindow/rateMarks {
		if len(p.marks) == rateMarks {
			p.marks = append(p.marks[:0], p.marks[1:]...)
		}
		p.marks = append(p.marks, mark{now, step, t})
	}
}

func (p *progress) check(step int, residual float64) {
	if p.log.quiet || p.total <= 0 {
		return
	}
	now := p.now()
	if step > p.lastStep {
		p.record(now, step)
		p.samples++
	}
	if p.poisson && residual > 0 && p.lastRes > 0 && step > p.lastStep {
		f := math.Log(residual/p.lastRes) / float64(step-p.lastStep)
		if p.logFactor == 0 {
			p.logFactor = f
		} else {
			p.logFactor = smoothing*f + (1-smoothing)*p.logFactor
		}
	}
	p.lastStep, p.lastRes = step, residual
	tenth := 10 * step / p.total
	t := p.simTime()
	if p.timeOf != nil {
		tenth = int(10 * t / p.tEnd)
	}
	due := step >= p.total || tenth > p.tenth
	if p.log.tty {
		due = due || now.Sub(p.lastLine) >= 200*time.Millisecond
	} else {
		due = due || now.Sub(p.lastLine) >= p.every
	}
	if !due {
		return
	}
	p.tenth, p.lastLine = tenth, now
	pct := 100 * float64(step) / float64(p.total)
	line := fmt.Sprintf("step %d/%d (%3.0f%%)  %.0f steps/s", step, p.total, pct, p.rate)
	attrs := []any{"step", step, "of", p.total, "pct", math.Round(pct*10) / 10, "steps_per_s", math.Round(p.rate*10) / 10}
	if p.timeOf != nil {
		pct = 100 * t / p.tEnd
		line = fmt.Sprintf("step %d  t = %.4g of %.4g (%3.0f%%)  %.0f steps/s", step, t, p.tEnd, pct, p.rate)
		attrs = []any{"step", step, "t", t, "t_end", p.tEnd, "pct", math.Round(pct*10) / 10, "steps_per_s", math.Round(p.rate*10) / 10}
	}
	if eta, ok := p.eta(step, residual); ok {
		line += "  ETA " + eta.String()
		attrs = append(attrs, "eta", eta.String())
	}
	if p.poisson {
		line += fmt.Sprintf("  residual %.3e", residual)
		attrs = append(attrs, "residual", residual)
	}
	p.log.progress(line, attrs...)
}

// eta is the time left: the steps left at the recent rate; for Poisson
// the iterations its convergence rate needs to reach the tolerance (at
// most the cap).
func (p *progress) eta(step int, residual float64) (time.Duration, bool) {
	// None until the rate has settled: a second in, or three intervals.
	if p.rate <= 0 || step >= p.total || p.now().Sub(p.start) < time.Second && p.samples < 3 {
		return 0, false
	}
	left := float64(p.total - step)
	if p.timeOf != nil {
		t := p.simTime()
		if !(p.tRate > 0) || t >= p.tEnd {
			return 0, false
		}
		return time.Duration((p.tEnd - t) / p.tRate * float64(time.Second)).Round(100 * time.Millisecond), true
	}
	if p.poisson {
		if !(p.logFactor < 0) || !(residual > p.tolerance) {
			return 0, false
		}
		left = min(left, math.Ceil(math.Log(p.tolerance/residual)/p.logFactor))
	}
	return time.Duration(left / p.rate * float64(time.Second)).Round(100 * time.Millisecond), true
}
