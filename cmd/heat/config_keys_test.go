package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"heat/configs"
	"heat/io/config"
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
		require.InDelta(t, c.time, float64(r.SimTime), 1e-12, "%v", c.args)
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
		{[]string{"--set", "boundary.x_lo.kind=periodic", "--set", "boundary.x_hi.kind=periodic", "--set", "boundary.x_lo.value=5"},
			[]string{"boundary.x_lo.value: a periodic face wraps around; value 5 would be ignored"}},
		{[]string{"--set", "boundary.x_lo.h=5"}, []string{"boundary.x_lo.h: h is a robin face's heat-transfer coefficient; on a dirichlet face 5 would be ignored"}},
		{[]string{"--set", "boundary.x_hi.kind=robin"}, []string{"boundary.x_hi.h: a robin face needs h"}},
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

// configPart is the config of a dry run's output: the TOML before the
// summary, which follows as comments.
func configPart(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, dryRunSummary)
	require.GreaterOrEqual(t, i, 0, "the dry run's summary follows the config:\n%s", out)
	return out[:i]
}

// dryRunSummary is the comment line between a dry run's config and its
// summary.
const dryRunSummary = "\n# ---- heat run --dry-run"

// `heat run --dry-run > x.toml` saves the resolved config as a file that
// runs: for every example problem (and a few command lines that use more
// of the schema) the whole output is TOML, it loads back to the config it
// printed, deep-equal, which is the example's own resolved config (with the
// time step and threads the run picks), and dry-running the file prints the
// same config again.
func TestDryRunRoundTrips(t *testing.T) {
	cases := [][]string{}
	for _, ex := range configs.Examples() {
		cases = append(cases, []string{"-c", ex.Name})
	}
	cases = append(cases,
		[]string{"--set", "grid.shape=[64,64]", "--set", "run.t_end=0.019", "--steps", "10", "--set", "checkpoint.shard=[32,64]",
			"--set", "boundary.y_lo.value=1", "--set", "boundary.x_hi.kind=neumann", "--set", "output.range=[0,1]", "--ranks", "2"},
		[]string{"-c", "hotplate-2d", "--set", "checkpoint.shard=none", "--set", "source={kind=\"sine\", value=2}", "--threads", "1"},
	)
	dir := t.TempDir()
	for i, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := heat(t, append([]string{"run", "--dry-run"}, args...)...)
			require.Equal(t, 0, code, stderr)
			var printed config.Config
			_, err := toml.Decode(stdout, &printed)
			require.NoError(t, err, "the whole output is TOML:\n%s", stdout)

			file := filepath.Join(dir, fmt.Sprintf("dry-%d.toml", i))
			require.NoError(t, os.WriteFile(file, []byte(stdout), 0o644))
			loaded, err := config.Load(file, nil)
			require.NoError(t, err)
			require.Equal(t, &printed, loaded, "the saved dry run loads to the config it printed")

			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			f := config.AddFlags(fs)
			require.NoError(t, fs.Parse(args))
			want, err := f.Resolve()
			require.NoError(t, err)
			want.Equation.DT = config.Step{V: want.TimeStep()}
			if want.Parallel.Threads == 0 {
				want.Parallel.Threads = printed.Parallel.Threads
			}
			require.Equal(t, want, loaded, "the dry run prints the resolved config")

			code, again, stderr := heat(t, "run", "--dry-run", "-c", file)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, configPart(t, stdout), configPart(t, again))

			code, _, stderr = heat(t, "run", "-q", "-c", file, "--steps", "2", "--out", filepath.Join(dir, fmt.Sprint("out", i)))
			require.Equal(t, 0, code, stderr)
		})
	}
}
