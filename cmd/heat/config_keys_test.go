package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// run.steps and run.t_end, both given, stop the run at whichever comes
// first, whatever the layers: t_end first ends exactly at t_end (it used
// to run all the steps of a later --set run.steps), steps first ends
// after the steps with a warning saying so.
func TestStepsAndTEndStopAtTheFirst(t *testing.T) {
	// 32²: dt = 0.9/(2·(32²+32²)) = 0.000219726..., t_end 0.019 is 87 steps.
	for _, c := range []struct {
		args  []string
		steps int
		time  float64
		warn  string
	}{
		{[]string{"--set", "run.t_end=0.019", "--set", "run.steps=100000"}, 87, 0.019, ""},
		{[]string{"--set", "run.steps=100000", "--set", "run.t_end=0.019"}, 87, 0.019, ""},
		{[]string{"--set", "run.t_end=0.019", "--steps", "10"}, 10, 10 * 0.9 / 4096, "run.steps = 10 (--steps) comes before run.t_end = 0.019"},
		{[]string{"--steps", "10", "--set", "run.t_end=0.019"}, 10, 10 * 0.9 / 4096, "comes before run.t_end"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"run", "-q", "--out", out, "--set", "grid.shape=[32,32]", "--set", "output.formats=[]"}, c.args...)
		code, _, stderr := heat(t, args...)
		require.Equal(t, 0, code, "%v: %s", c.args, stderr)
		r := readReport(t, filepath.Join(out, "report.json"))
		require.Equal(t, c.steps, r.Steps, "%v", c.args)
		require.InDelta(t, c.time, r.SimTime, 1e-12, "%v", c.args)
		if c.warn == "" {
			require.NotContains(t, stderr, "run.t_end", "%v", c.args)
		} else {
			require.Contains(t, stderr, c.warn, "%v", c.args)
		}
	}
}

// The keys that cannot do what they say exit 2 with a message naming the
// key and the value, and no stack trace.
func TestKeysThatWouldBeIgnoredExitTwo(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--set", "boundary.x_lo.kind=neumann", "--set", "boundary.x_lo.value=5"},
			[]string{"boundary.x_lo.value: a neumann face is insulated (zero flux) in this version; value 5 would be ignored"}},
		{[]string{"--set", "boundary.kind=neumann", "--set", "boundary.value=5"}, []string{"boundary.value: 5 would be ignored"}},
		{[]string{"--set", "equation.dt=1e-300", "--set", "run.t_end=1"}, []string{"run.t_end: 1 takes 1e+300 steps of equation.dt = 1e-300"}},
		{[]string{"--set", "run.t_end=1e-20"}, []string{"run.t_end: 1e-20", "no steps"}},
		{[]string{"--set", "source.radius=nan"}, []string{"source.radius: must be a finite number (got nan)"}},
		{[]string{"--set", "output.label=5"}, []string{"output.label: must be a string (got 5)"}},
	} {
		args := append([]string{"run", "--out", filepath.Join(dir, fmt.Sprint("out", i))}, c.args...)
		code, output := asBinary(t, args...)
		require.Equal(t, 2, code, "%v: %s", c.args, output)
		for _, w := range c.want {
			require.Contains(t, output, w, "%v", c.args)
		}
		require.NotContains(t, output, "goroutine ", "no stack trace")
		require.NoDirExists(t, filepath.Join(dir, fmt.Sprint("out", i)))
	}
}
