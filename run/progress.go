package run

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress reports a run's advance on stderr: a line redrawn in place when
// stderr is a terminal, otherwise a log line every tenth of the run.
type progress struct {
	w       io.Writer
	tty     bool
	quiet   bool
	poisson bool
	from    int // step the run started at
	total   int
	start   time.Time
	last    time.Time
	tenth   int
}

func newProgress(w io.Writer, quiet, poisson bool, from, total int) *progress {
	return &progress{w: w, tty: isTerminal(w), quiet: quiet, poisson: poisson, from: from, total: total, start: time.Now()}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) check(step int, residual float64) {
	if p.quiet || p.total <= 0 {
		return
	}
	now := time.Now()
	tenth := 10 * step / p.total
	if p.tty {
		if now.Sub(p.last) < 200*time.Millisecond && step < p.total {
			return
		}
	} else if tenth == p.tenth && step < p.total {
		return
	}
	p.last, p.tenth = now, tenth
	el := now.Sub(p.start).Seconds()
	rate := float64(step-p.from) / el
	line := fmt.Sprintf("step %d/%d (%3.0f%%)  %.0f steps/s", step, p.total, 100*float64(step)/float64(p.total), rate)
	if rate > 0 && step < p.total {
		line += fmt.Sprintf("  ETA %s", (time.Duration(float64(p.total-step) / rate * 1e9)).Round(100*time.Millisecond))
	}
	if p.poisson {
		line += fmt.Sprintf("  residual %.3e", residual)
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// done ends the redrawn line.
func (p *progress) done() {
	if p.tty && !p.quiet && !p.last.IsZero() {
		fmt.Fprintln(p.w)
	}
}

// log prints a line of its own (not redrawn), unless quiet.
func (p *progress) log(format string, args ...any) {
	if p.quiet {
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// warn prints a line of its own even when quiet.
func (p *progress) warn(format string, args ...any) {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "heat: warning: "+format+"\n", args...)
}
