package run

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Off a terminal every line is a timestamped record; progress comes at
// every tenth of the run (and every `every`), not at every check.
func TestProgressOffTerminal(t *testing.T) {
	var b bytes.Buffer
	l := newLogger(&b, false)
	p := newProgress(l, false, 0, 0, 1000, time.Hour)
	for step := 10; step <= 1000; step += 10 {
		p.check(step, 0)
	}
	l.log("checkpoint step %d", 1000)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 11, "ten tenths and the event:\n%s", b.String())
	stamp := regexp.MustCompile(`^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=INFO msg=`)
	for _, line := range lines {
		require.Regexp(t, stamp, line)
	}
	require.Contains(t, lines[0], "msg=progress step=100 of=1000 pct=10")
	require.Contains(t, lines[10], `msg="checkpoint step 1000"`)
	require.NotContains(t, b.String(), "\033")

	// A short interval adds lines between the tenths.
	b.Reset()
	p = newProgress(l, false, 0, 0, 1000, time.Nanosecond)
	for step := 10; step <= 50; step += 10 {
		p.check(step, 0)
	}
	require.Len(t, strings.Split(strings.TrimSpace(b.String()), "\n"), 5)
}

// On a terminal the line is redrawn in place; TERM=dumb or NO_COLOR use no
// escape codes; warnings interrupt it on a line of their own.
func TestProgressOnTerminal(t *testing.T) {
	for _, plain := range []bool{false, true} {
		var b bytes.Buffer
		l := newLogger(&b, false)
		l.tty, l.plain = true, plain
		l.sl = terminalLogger(l)
		p := newProgress(l, false, 0, 0, 100, time.Hour)
		p.check(50, 0)
		l.warn("disk %s", "full")
		p.check(100, 0)
		l.done()
		out := b.String()
		require.Contains(t, out, "step 50/100")
		require.NotContains(t, out, "ETA", "no ETA before the rate settles")
		if plain {
			require.Contains(t, out, "\rstep 50/100")
		}
		require.Contains(t, out, "heat: warning: disk full\n")
		require.True(t, strings.HasSuffix(out, "\n"))
		require.Equal(t, !plain, strings.Contains(out, "\033[K"), "escape codes unless TERM=dumb/NO_COLOR")
	}
}

// The ETA follows the recent rate, and a Poisson run's follows its
// convergence: a residual falling tenfold an iteration toward 1e-10 from
// 1e-4 needs 6 more iterations, not the cap's 994.
func TestProgressETA(t *testing.T) {
	var b bytes.Buffer
	p, clk := fakeProgress(newLogger(&b, false), true, 1e-10, 1000)
	p.lastRes, p.lastStep = 1e-3, 5
	p.restart()
	clk.advance(time.Second) // one iteration a second, past the start-up
	p.check(6, 1e-4)
	eta, ok := p.eta(6, 1e-4)
	require.True(t, ok)
	require.InDelta(t, 6, eta.Seconds(), 0.5)
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// fakeProgress is a progress of total steps from 0 on a fake clock.
func fakeProgress(l *logger, poisson bool, tolerance float64, total int) (*progress, *fakeClock) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := newProgress(l, poisson, tolerance, 0, total, time.Hour)
	p.now = clk.now
	p.restart()
	return p, clk
}

// stepAt advances p by n checks of `each` steps every dt.
func stepAt(p *progress, clk *fakeClock, n, each int, dt time.Duration) {
	for range n {
		clk.advance(dt)
		p.check(p.lastStep+each, 0)
	}
}

// A run that slows down shows the slow rate, and its ETA, within the
// rate's window; one that speeds up, the fast one.
func TestProgressRateFollowsAChange(t *testing.T) {
	const total = 10_000_000
	fast := func(p *progress, clk *fakeClock, d time.Duration) { // 1000 steps/s
		stepAt(p, clk, int(d/(10*time.Millisecond)), 10, 10*time.Millisecond)
	}
	slow := func(p *progress, clk *fakeClock, d time.Duration) { // 10 steps/s
		stepAt(p, clk, int(d/(100*time.Millisecond)), 1, 100*time.Millisecond)
	}
	etaAt := func(p *progress, rate float64) {
		t.Helper()
		eta, ok := p.eta(p.lastStep, 0)
		require.True(t, ok)
		require.InEpsilon(t, float64(total-p.lastStep)/rate, eta.Seconds(), 0.2)
	}

	p, clk := fakeProgress(newLogger(io.Discard, false), false, 0, total)
	fast(p, clk, 10*time.Second)
	require.InEpsilon(t, 1000, p.rate, 0.01)
	slow(p, clk, 2500*time.Millisecond)
	require.InEpsilon(t, 10, p.rate, 0.2, "2.5 s into the slow stretch")
	etaAt(p, 10)

	p, clk = fakeProgress(newLogger(io.Discard, false), false, 0, total)
	slow(p, clk, 10*time.Second)
	require.InEpsilon(t, 10, p.rate, 0.01)
	fast(p, clk, 2500*time.Millisecond)
	require.InEpsilon(t, 1000, p.rate, 0.2, "2.5 s into the fast stretch")
	etaAt(p, 1000)
}

// Fast and slow intervals alternating (a step in 1 ms, a step in 100 ms:
// two processes on one core) read as the steps done over the time taken,
// 2/0.101 s ≈ 19.8 steps a second. A mean of the intervals' rates, as
// progress kept before, reads several hundred.
func TestProgressRateAlternating(t *testing.T) {
	p, clk := fakeProgress(newLogger(io.Discard, false), false, 0, 1_000_000)
	for range 100 {
		stepAt(p, clk, 1, 1, time.Millisecond)
		stepAt(p, clk, 1, 1, 100*time.Millisecond)
		require.Less(t, p.rate, 40.0, "never the fast intervals' rate")
	}
	require.InEpsilon(t, 2/0.101, p.rate, 0.05)
}

// Checks further apart than the window: the rate is the last interval's,
// and the marks stay few however often the checks come.
func TestProgressRateSparseAndDense(t *testing.T) {
	p, clk := fakeProgress(newLogger(io.Discard, false), false, 0, 1_000_000)
	stepAt(p, clk, 3, 100, 10*time.Second)
	require.InEpsilon(t, 10, p.rate, 1e-9)
	stepAt(p, clk, 1, 50, 10*time.Second)
	require.InEpsilon(t, 5, p.rate, 1e-9)
	stepAt(p, clk, 10_000, 1, 100*time.Microsecond)
	require.InEpsilon(t, 10_000, p.rate, 1e-6)
	require.LessOrEqual(t, len(p.marks), rateMarks)
}
