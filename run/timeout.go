package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"heat/comm"
	"heat/io/config"
	"heat/io/report"
	"heat/solver"
)

// Under MPI a rank that stops (SIGSTOP, a hung filesystem, a bug that
// spins) or dies would leave every other rank waiting for it at its next
// halo exchange or collective. The ranks' waits are held to
// parallel.timeout instead (comm.Deadliner): the wait that outlasts it
// gives up, the ranks take a roll call (comm.TimeoutError), and the lowest
// rank that answered writes the report and ends the job (abandon).
//
// parallel.timeout = 0 (the default) is automatic and generous: inside the
// steps, 100 times the slowest step seen and at least a minute; outside
// them (start-up and restore, outputs, checkpoints, the end's report), at
// least 5 minutes. What passes between two stretches of steps (an output,
// a checkpoint) counts as one step. A positive parallel.timeout holds
// every wait to it. After a stop request (SIGINT, SIGTERM) the waits of
// the steps before the stop is agreed are held to 10 times the slowest
// step, at least 0.75 s: a rank that died makes mpirun send the others
// SIGTERM and kill them a second later (Open MPI's
// odls_base_sigkill_timeout), and the lowest of them can still report it.
const (
	minTimeout   = time.Minute
	timeoutSteps = 100
	// OutsideTimeout is the automatic timeout's floor outside the steps,
	// and what cmd/heat holds MPI's waits to from MPI_Init until the run
	// has read its config.
	OutsideTimeout = 5 * time.Minute
	stopFloor      = 750 * time.Millisecond
	stopSteps      = 10
	// reporterWait is how long a rank that does not report a fault waits
	// for the one that does to end the job, before it ends it itself.
	reporterWait = 10 * time.Second
)

// timeouts hold one rank's waits to parallel.timeout as its run goes on;
// nil (in-process ranks) does nothing.
type timeouts struct {
	d       comm.Deadliner
	fixed   time.Duration // parallel.timeout when > 0
	step    func() int    // the solver's step
	every   int           // the solver's check interval
	clock   func() time.Time
	release func() bool

	mu       sync.Mutex
	stepping bool // inside RunTo
	stopping bool // a stop was requested
	slowStep time.Duration
	slowGap  time.Duration // the slowest stretch between two stretches of steps
	mark     time.Time     // when the current stretch (of steps, or between) began
	from     int           // the step the current stretch of steps began at
	begun    bool
}

// fixedTimeout is cfg's parallel.timeout, 0 for automatic; a value past
// what a Duration holds (292 years) is the longest Duration.
func fixedTimeout(cfg *config.Config) time.Duration {
	if ns := cfg.Parallel.Timeout * float64(time.Second); ns < math.MaxInt64 {
		return time.Duration(ns)
	}
	return math.MaxInt64
}

// holdStart holds c's waits to the timeout outside the steps until the
// steps begin (a no-op for in-process ranks).
func holdStart(c comm.Comm, cfg *config.Config) {
	if d, ok := comm.DeadlinerOf(c); ok {
		t := &timeouts{d: d, fixed: fixedTimeout(cfg)}
		d.SetTimeout(t.outside())
	}
}

// watch holds the waits of c, whose rank runs s, from the first step to
// the end; nil for in-process ranks. A request to stop (ctx done) shortens
// the waits of the steps until the stop is agreed.
func watch(ctx context.Context, c comm.Comm, cfg *config.Config, s *solver.Solver, every int) *timeouts {
	d, ok := comm.DeadlinerOf(c)
	if !ok {
		return nil
	}
	t := &timeouts{d: d, fixed: fixedTimeout(cfg), step: s.Step, every: max(every, 1), clock: time.Now, mark: time.Now()}
	d.SetStep(s.Step)
	t.release = context.AfterFunc(ctx, t.stopRequested)
	return t
}

// stopRequested shortens the waits of the steps until the stop is agreed.
func (t *timeouts) stopRequested() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopping = true
	t.apply()
}

// inside is the timeout of a wait in the steps.
func (t *timeouts) inside() time.Duration {
	if t.fixed > 0 {
		return t.fixed
	}
	return max(minTimeout, timeoutSteps*max(t.slowStep, t.slowGap))
}

// outside is the timeout of a wait outside the steps.
func (t *timeouts) outside() time.Duration {
	if t.fixed > 0 {
		return t.fixed
	}
	return max(OutsideTimeout, t.inside())
}

// stop is the timeout of a wait in the steps once a stop is requested.
func (t *timeouts) stop() time.Duration {
	return min(t.inside(), max(stopFloor, stopSteps*t.slowStep))
}

// apply sets the timeout of where the rank is; call it with mu held.
func (t *timeouts) apply() {
	switch {
	case t.stepping && t.stopping:
		t.d.SetTimeout(t.stop())
	case t.stepping:
		t.d.SetTimeout(t.inside())
	default:
		t.d.SetTimeout(t.outside())
	}
}

// begin starts a stretch of steps towards target, and returns where it
// pauses: at the next check at the latest, so that the slowest step is
// timed throughout a run without outputs (a pause changes no bit, see
// solver.RunTo, and costs nothing: a stretch of temporal blocks ends at
// a check anyway).
func (t *timeouts) begin(target int) int {
	if t == nil {
		return target
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now, step := t.clock(), t.step()
	if t.begun {
		t.slowGap = max(t.slowGap, now.Sub(t.mark))
	}
	t.begun, t.stepping, t.mark, t.from = true, true, now, step
	t.apply()
	return min(target, (step/t.every+1)*t.every)
}

// end ends the stretch of steps begun last; stopped is whether it ended
// in an agreed stop, after which the checkpoint's waits are ordinary.
func (t *timeouts) end(stopped bool) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock()
	if n := t.step() - t.from; n > 0 {
		t.slowStep = max(t.slowStep, now.Sub(t.mark)/time.Duration(n))
	}
	if stopped {
		t.stopping = false
	}
	t.stepping, t.mark = false, now
	t.apply()
}

// close stops watching for a stop request; the waits keep the timeout
// outside the steps.
func (t *timeouts) close() {
	if t != nil {
		t.release()
	}
}

// abandon ends the MPI job if this rank's communication failed (a wait
// gave up here or elsewhere: comm.Deadliner.Fault). The rank the roll call
// chose prints one message and writes the report (status failed, exit
// code 1), and ends the job with World.Abort(1); another rank waits for
// it to, and after reporterWait ends the job itself. It returns only when
// there was no fault.
func abandon(ctx context.Context, opt Options, j *job) {
	d, ok := comm.DeadlinerOf(opt.World.Comm)
	if !ok || d.Fault() == nil {
		return
	}
	f := d.Fault()
	msg := faultText(ctx, f, j.cfg)
	if f.Reporter != f.Rank {
		time.Sleep(reporterWait)
		fmt.Fprintf(opt.Stderr, "heat: %s\nheat: rank %d of %d: rank %d, which reports it, did not end the job within %v: aborting it\n",
			msg, f.Rank, f.Size, f.Reporter, reporterWait)
		opt.World.Abort(1)
		return
	}
	fmt.Fprintf(opt.Stderr, "heat: %s\n", msg)
	rep := j.rep
	rep.Status, rep.StopReason, rep.ExitCode = "failed", msg, 1
	if f.Step >= 0 {
		rep.Steps = f.Step
	}
	rep.WallS = time.Since(opt.started).Seconds()
	rep.PeakRSS = peakRSS()
	paths := []string{filepath.Join(j.cfg.Output.Dir, "report.json")}
	if j.reportPath != "" {
		paths = append(paths, j.reportPath)
	}
	for _, p := range paths {
		if err := report.Write(p, rep); err != nil {
			fmt.Fprintf(opt.Stderr, "heat: %v\n", err)
		}
	}
	opt.World.Abort(1)
}

// stalled ends the job when err, an agreement's outcome, is a wait that
// gave up there: with the fault's message and report where this rank has
// the job (abandon), else with the fault alone.
func stalled(ctx context.Context, opt Options, j *job, err error) {
	var f *comm.TimeoutError
	if !errors.As(err, &f) {
		return
	}
	if j != nil {
		abandon(ctx, opt, j)
	}
	fmt.Fprintf(opt.Stderr, "heat: %v: aborting the job\n", f)
	opt.World.Abort(1)
}

// faultText is the one message of a fault, from the roll call f of the
// rank that reports it: where the job stood, which ranks did not answer,
// and what each rank that answered was waiting for.
func faultText(ctx context.Context, f *comm.TimeoutError, cfg *config.Config) string {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "rank %d of %d (%s): communication stalled", f.Rank, f.Size, host)
	var se SignalError
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &se) {
		fmt.Fprintf(&b, " while stopping on %s", SignalName(se.Sig))
	}
	if f.Step >= 0 {
		fmt.Fprintf(&b, " at step %d", f.Step)
	} else {
		b.WriteString(" before the first step")
	}
	if cfg.Parallel.Timeout > 0 {
		fmt.Fprintf(&b, " (parallel.timeout = %g s)", cfg.Parallel.Timeout)
	} else {
		fmt.Fprintf(&b, " (parallel.timeout automatic: %s here)", seconds(f.Timeout))
	}
	if len(f.Silent) > 0 {
		fmt.Fprintf(&b, ": %s did not answer (stopped, dead, or busy outside MPI)", comm.RankList(f.Silent))
	} else {
		b.WriteString(": every rank answered, each waiting for another")
	}
	const shown = 6
	waits := f.Waits()
	for i, w := range waits {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more ranks waiting", len(waits)-shown)
			break
		}
		verb := "waited"
		if !w.TimedOut {
			verb = "had waited"
		}
		fmt.Fprintf(&b, "; rank %d %s %s in %s", w.Rank, verb, seconds(w.Waited), w.What())
		if w.Step != f.Step && w.Step >= 0 {
			fmt.Fprintf(&b, " at step %d", w.Step)
		}
	}
	b.WriteString("; the job is aborted")
	return b.String()
}

// seconds is d as "3.0 s".
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
