package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/io/config"
	"heat/io/report"
)

// fakeDeadliner records the timeouts it is given.
type fakeDeadliner struct{ timeout time.Duration }

func (f *fakeDeadliner) SetTimeout(d time.Duration) { f.timeout = d }
func (f *fakeDeadliner) SetStep(func() int)         {}
func (f *fakeDeadliner) Fault() *comm.TimeoutError  { return nil }

// stretch runs one stretch of n steps that took d, after a gap of gap
// since the last one; it returns where the stretch paused and the timeout
// in the steps.
func stretch(t *timeouts, step *int, target, n int, gap, d time.Duration, stopped bool) (pause int, inSteps time.Duration) {
	now := t.mark.Add(gap)
	t.clock = func() time.Time { return now }
	pause = t.begin(target)
	inSteps = t.d.(*fakeDeadliner).timeout
	*step += n
	now = now.Add(d)
	t.end(stopped)
	return pause, inSteps
}

// The automatic timeout: 60 s in the steps and 5 min outside them until
// 100 steps (an output or a checkpoint counting as one) take longer.
func TestAutomaticTimeout(t *testing.T) {
	d := &fakeDeadliner{}
	step := 0
	tm := &timeouts{d: d, step: func() int { return step }, every: 10, mark: time.Now()}
	pause, in := stretch(tm, &step, 1000, 10, 0, 10*time.Millisecond, false)
	require.Equal(t, 10, pause, "a stretch pauses at the next check")
	require.Equal(t, time.Minute, in)
	require.Equal(t, 5*time.Minute, d.timeout, "outside the steps")

	// Steps of 2 s: 200 s.
	pause, _ = stretch(tm, &step, 25, 10, 0, 20*time.Second, false)
	require.Equal(t, 20, pause)
	_, in = stretch(tm, &step, 1000, 10, 0, time.Second, false)
	require.Equal(t, 200*time.Second, in)
	require.Equal(t, 5*time.Minute, d.timeout)
	// A checkpoint of 10 s between stretches: 1000 s, in the steps and out.
	_, in = stretch(tm, &step, 1000, 10, 10*time.Second, time.Second, false)
	require.Equal(t, 1000*time.Second, in)
	require.Equal(t, 1000*time.Second, d.timeout)

	// A stop request: the steps' waits get 10 × the slowest step (2 s)
	// until the stop is agreed; then the checkpoint's are ordinary.
	tm.stopRequested()
	require.Equal(t, 1000*time.Second, d.timeout, "outside the steps a stop changes nothing")
	_, in = stretch(tm, &step, 1000, 10, 0, time.Second, true)
	require.Equal(t, 20*time.Second, in)
	require.Equal(t, 1000*time.Second, d.timeout)
	_, in = stretch(tm, &step, 1000, 10, 0, time.Second, false)
	require.Equal(t, 1000*time.Second, in)
}

// A positive parallel.timeout holds every wait to it, and a stop request
// shortens the steps' to 10 × the slowest step, at least 0.75 s.
func TestFixedTimeout(t *testing.T) {
	d := &fakeDeadliner{}
	step := 0
	tm := &timeouts{d: d, fixed: 3 * time.Second, step: func() int { return step }, every: 1, mark: time.Now()}
	pause, in := stretch(tm, &step, 1000, 1, 0, time.Millisecond, false)
	require.Equal(t, 1, pause)
	require.Equal(t, 3*time.Second, in)
	require.Equal(t, 3*time.Second, d.timeout)
	tm.stopRequested()
	_, in = stretch(tm, &step, 1000, 1, time.Minute, time.Millisecond, false)
	require.Equal(t, 750*time.Millisecond, in)
	_, in = stretch(tm, &step, 1000, 1, 0, 200*time.Millisecond, false)
	require.Equal(t, 750*time.Millisecond, in)
	_, in = stretch(tm, &step, 1000, 1, 0, time.Millisecond, false)
	require.Equal(t, 2*time.Second, in, "10 × the slowest step")
	require.Equal(t, 3*time.Second, d.timeout)

	// In-process ranks have no timeouts: nothing to pause for.
	var none *timeouts
	require.Equal(t, 1000, none.begin(1000))
	none.end(false)
	none.close()
	require.Nil(t, watch(context.Background(), nil, &config.Config{}, nil, 10))
}

// The one message names the reporting rank, the silent ranks, every wait
// heard and the step.
func TestFaultText(t *testing.T) {
	f := &comm.TimeoutError{
		Wait: comm.Wait{Rank: 0, Op: "Waitall", Peers: []int{1}, Tag: 3, Waited: 3 * time.Second, TimedOut: true, Step: 57},
		Size: 4, Timeout: 3 * time.Second, Silent: []int{2, 3}, Reporter: 0,
		Others: []comm.Wait{{Rank: 1, Op: "Allreduce", Tag: -1, Waited: 2900 * time.Millisecond, Step: 58}},
	}
	cfg := &config.Config{}
	cfg.Parallel.Timeout = 3
	msg := faultText(context.Background(), f, cfg)
	require.Regexp(t, `^rank 0 of 4 \(.*\): communication stalled at step 57 \(parallel.timeout = 3 s\): ranks 2, 3 did not answer \(stopped, dead, or busy outside MPI\); `+
		`rank 0 waited 3.0 s in Waitall for rank 1 \(halo, tag 3\); rank 1 had waited 2.9 s in Allreduce at step 58; the job is aborted$`, msg)

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(SignalError{Sig: syscall.SIGTERM})
	cfg.Parallel.Timeout = 0
	f.Silent, f.Step = nil, -1
	msg = faultText(ctx, f, cfg)
	require.Contains(t, msg, "communication stalled while stopping on SIGTERM before the first step (parallel.timeout automatic: 3.0 s here): every rank answered, each waiting for another; ")
}

// faultComm is a rank whose waits gave up: a Deadliner with a fault.
type faultComm struct {
	comm.Comm
	f *comm.TimeoutError
}

func (c faultComm) SetTimeout(time.Duration)  {}
func (c faultComm) SetStep(func() int)        {}
func (c faultComm) Fault() *comm.TimeoutError { return c.f }

// A wait that gave up at an agreement (a rank frozen at the start or the
// end) ends the job with the fault's one message and a failed report, not
// a bare "cannot agree".
func TestStalledAgreementReports(t *testing.T) {
	out := t.TempDir()
	f := &comm.TimeoutError{Wait: comm.Wait{Rank: 0, Op: "Allreduce", Tag: -1, Waited: 3 * time.Second, TimedOut: true, Step: 40},
		Size: 3, Timeout: 3 * time.Second, Silent: []int{2}, Reporter: 0}
	var aborts []int
	var stderr strings.Builder
	opt := Options{Stderr: &stderr, World: &World{Comm: faultComm{f: f}, Abort: func(code int) { aborts = append(aborts, code) }}}
	cfg := &config.Config{}
	cfg.Output.Dir = out
	j := &job{cfg: cfg, rep: &report.Report{Status: "completed"}}

	stalled(context.Background(), opt, j, errors.New("some other error"))
	require.Empty(t, aborts, "only a fault ends the job here")
	stalled(context.Background(), opt, j, fmt.Errorf("agreeing: %w", f))
	require.NotEmpty(t, aborts)
	require.Equal(t, 1, aborts[0])
	require.Contains(t, stderr.String(), "communication stalled at step 40")
	require.Contains(t, stderr.String(), "rank 2 did not answer")
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	var r report.Report
	require.NoError(t, json.Unmarshal(data, &r))
	require.Equal(t, "failed", r.Status)
	require.Equal(t, 1, r.ExitCode)
	require.Equal(t, 40, r.Steps)
}
