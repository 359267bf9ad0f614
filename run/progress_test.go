package run

import (
	"bytes"
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

// The ETA follows the smoothed rate, and a Poisson run's follows its
// convergence: a residual falling tenfold an iteration toward 1e-10 from
// 1e-4 needs 6 more iterations, not the cap's 994.
func TestProgressETA(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(newLogger(&b, false), true, 1e-10, 0, 1000, time.Hour)
	p.start = p.start.Add(-time.Minute) // past the start-up
	p.last = time.Now().Add(-time.Second)
	p.lastRes, p.lastStep = 1e-3, 5
	p.rate = 1
	p.check(6, 1e-4)
	eta, ok := p.eta(6, 1e-4)
	require.True(t, ok)
	require.InDelta(t, 6, eta.Seconds(), 0.5)
}
