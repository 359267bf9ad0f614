package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/io/report"
	"heat/io/runplot"
)

// The problem of the adaptive tests: a sine mode decaying on a 24² plate
// between cold walls, and a uniform heater of q = 2 switched on at t = 1 by
// an expression, to t_end = 2, Crank–Nicolson with steps that choose
// themselves.
const adaptiveN = 24

func adaptiveArgs(out string, extra ...string) []string {
	args := []string{"run", "-q", "--out", out,
		"--set", fmt.Sprintf("grid.shape=[%d,%d]", adaptiveN, adaptiveN),
		"--set", "equation.scheme=crank-nicolson", "--set", `equation.dt="auto"`, "--set", "equation.alpha=0.05",
		"--set", "run.t_end=2.0", "--set", "run.tolerance=1e-12",
		"--set", "boundary.kind=dirichlet", "--set", "boundary.value=0",
		"--set", "initial.kind=sine", "--set", "initial.value=1.0", "--set", "initial.mode=[1,1]",
		"--set", "source.kind=expr", "--set", `source.expr="t < 1 ? 0 : 2"`,
		"--set", "output.formats=[]", "--set", "checkpoint.final=true"}
	return append(args, extra...)
}

// adaptiveExact is the grid's own solution at t = 2 (exact in time): the
// field in the discrete operator's eigenvectors sin(mπ(i+½)/n) — the
// cell-centred Dirichlet ghosts make them exact —, each coefficient c
// decaying as e^{−λt}, the heater's share s added from t = 1 on as
// (s/λ)(1 − e^{−λ(t−1)}).
func adaptiveExact() []float64 {
	const n, alpha, q, tEnd = adaptiveN, 0.05, 2.0, 2.0
	h := 1.0 / n
	phi := func(m, i int) float64 { return math.Sin(float64(m) * math.Pi * (float64(i) + 0.5) / n) }
	norm, sum, lam := make([]float64, n+1), make([]float64, n+1), make([]float64, n+1)
	for m := 1; m <= n; m++ {
		for i := range n {
			norm[m] += phi(m, i) * phi(m, i)
			sum[m] += phi(m, i)
		}
		s := math.Sin(float64(m) * math.Pi / (2 * n))
		lam[m] = alpha * 4 / (h * h) * s * s
	}
	u := make([]float64, n*n)
	for m := 1; m <= n; m++ {
		for l := 1; l <= n; l++ {
			L := lam[m] + lam[l]
			c := q * sum[m] * sum[l] / (norm[m] * norm[l]) / L * (1 - math.Exp(-L*(tEnd-1)))
			if m == 1 && l == 1 {
				c += math.Exp(-L * tEnd)
			}
			for j := range n {
				for i := range n {
					u[j*n+i] += c * phi(l, j) * phi(m, i)
				}
			}
		}
	}
	return u
}

// finalField is the field of a run's final checkpoint in out.
func finalField(t *testing.T, out string, ny, nx int) []float64 {
	t.Helper()
	path, err := checkpoint.Resolve(filepath.Join(out, "checkpoints"))
	require.NoError(t, err)
	ck, err := checkpoint.Open(path)
	require.NoError(t, err)
	u := make([]float64, ny*nx)
	require.NoError(t, checkpoint.ReadBox(ck, "u", []int{0, 0}, []int{ny, nx}, u))
	return u
}

// readTable is a CSV file's rows, the header first.
func readTable(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

// With equation.dt = "auto", the error at t_end against the grid's exact
// solution stays within 10 × rtol and falls as rtol falls; the heater's
// switch is an event (found in its expression), so no step straddles it
// and the source's energy is exactly q × (t_end − 1) × the area; the
// energy balance closes.
func TestAdaptiveStepsTrackAHeaterSwitch(t *testing.T) {
	for _, scheme := range []string{"crank-nicolson", "sdirk4"} {
		t.Run(scheme, func(t *testing.T) { adaptiveHeater(t, scheme) })
	}
}

func adaptiveHeater(t *testing.T, scheme string) {
	exact := adaptiveExact()
	prev := math.Inf(1)
	for _, rtol := range []string{"1e-3", "1e-4", "1e-5"} {
		out := t.TempDir()
		code, _, stderr := heat(t, adaptiveArgs(out, "--set", "equation.rtol="+rtol, "--set", "equation.scheme="+scheme)...)
		require.Zero(t, code, stderr)
		rep := readReport(t, filepath.Join(out, "report.json"))
		require.Equal(t, 2.0, float64(rep.SimTime), "the run ends exactly at t_end")
		u := finalField(t, out, adaptiveN, adaptiveN)
		e := 0.0
		for i := range u {
			e = max(e, math.Abs(u[i]-exact[i]))
		}
		tol, _ := strconv.ParseFloat(rtol, 64)
		a := rep.Solver.Adaptive
		require.NotNil(t, a)
		t.Logf("rtol %s: error %.3e, %d steps (%d taken again), dt %.3g … %.3g", rtol, e, a.Steps, a.Rejected, float64(a.DTMin), float64(a.DTMax))
		require.Less(t, e, 10*tol, "rtol %s", rtol)
		// The step after the switch is chosen from the field there, as
		// the first is: from the steps before it, 3–6 attempts a run
		// were taken again.
		require.LessOrEqual(t, a.Rejected, 1, "rtol %s: attempts taken again", rtol)
		require.Less(t, e, prev, "the error falls as rtol falls")
		prev = e
		eb := rep.EnergyBalance
		require.InEpsilon(t, 2.0, float64(eb.Source), 1e-10, "the heater's energy: q × (t_end − 1) × 1")
		t.Logf("balance: relative residual %.3g", float64(eb.RelativeResidual))
		require.Less(t, float64(eb.RelativeResidual), 1e-10)
	}
}

// A step cut short by a probe time says how long the next may be; it is
// not grown from the longer step that was wanted. The sine mode (64²,
// SDIRK4, probes every 0.05) took one attempt again at rtol 2e-4 and at
// 7e-4 when it was: after two half steps of 0.01 to t = 0.05 (estimate
// 0.018) it tried 0.05 (estimate 5.3). And with multigrid.cycle = "auto"
// SDIRK4's stages in 2D are V-cycles (the last F), Crank–Nicolson's F, a
// cycle the user names is kept.
func TestAdaptiveStepsAfterAProbeTime(t *testing.T) {
	run := func(extra ...string) report.Report {
		out := t.TempDir()
		args := append([]string{"run", "-q", "--out", out, "-c", "implicit-heat-2d", "--set", "grid.shape=[64,64]",
			"--set", "output.formats=[]", "--set", `output.probe=[{name = "centre", at = [0.5, 0.5]}]`,
			"--set", `equation.dt="auto"`, "--set", "output.probe_dt=0.05"}, extra...)
		code, _, stderr := heat(t, args...)
		require.Zero(t, code, stderr)
		return readReport(t, filepath.Join(out, "report.json"))
	}
	for _, rtol := range []string{"2e-4", "7e-4"} {
		rep := run("--set", "equation.scheme=sdirk4", "--set", "equation.rtol="+rtol)
		a := rep.Solver.Adaptive
		t.Logf("rtol %s: %d steps, %d taken again, %d cycles", rtol, a.Steps, a.Rejected, rep.Solver.Cycles)
		require.Zero(t, a.Rejected, "rtol %s: attempts taken again", rtol)
		require.Equal(t, "v", rep.Solver.Cycle)
	}
	require.Equal(t, "f", run("--set", "equation.scheme=crank-nicolson", "--set", "equation.rtol=1e-4").Solver.Cycle)
	// The last stage by F: its residual is the energy balance's (128²,
	// default run.tolerance: 2.3e-10 of the flow; by V like the others,
	// 3.0e-8).
	rep := run("--set", "grid.shape=[128,128]", "--set", "equation.scheme=sdirk4", "--set", "equation.rtol=3e-4")
	require.Equal(t, "v", rep.Solver.Cycle)
	require.Less(t, float64(rep.EnergyBalance.RelativeResidual), 1e-9)
	require.Equal(t, "f", run("--set", "equation.scheme=sdirk4", "--set", "equation.rtol=1e-4", "--set", `multigrid.cycle="f"`).Solver.Cycle)
}

// Probes by time: with output.probe_dt = 0.1 the rows are at t = 0, 0.1,
// 0.2, … 2 — each k × 0.1 to the last bit —, and probes.csv, the steps and
// the field have the same bits on 1, 2, 3, 4 and 6 ranks and 1 and 2
// threads, by Crank–Nicolson (F-cycles) and SDIRK4 (V-cycles).
func TestAdaptiveProbesByTime(t *testing.T) {
	for _, scheme := range []string{"crank-nicolson", "sdirk4"} {
		t.Run(scheme, func(t *testing.T) { adaptiveProbes(t, scheme) })
	}
}

func adaptiveProbes(t *testing.T, scheme string) {
	var want [][]string
	var sha string
	for _, split := range [][2]string{{"1", "1"}, {"3", "2"}, {"4", "1"}, {"1", "2"}, {"2", "1"}, {"6", "1"}} {
		out := t.TempDir()
		code, _, stderr := heat(t, adaptiveArgs(out, "--ranks", split[0], "--threads", split[1], "--set", "equation.scheme="+scheme,
			"--set", `output.probe=[{name = "centre", at = [0.5, 0.5]}, {name = "corner", at = [0.1, 0.2]}]`,
			"--set", "output.probe_dt=0.1")...)
		require.Zero(t, code, stderr)
		rows := readTable(t, filepath.Join(out, "probes.csv"))
		require.Len(t, rows, 1+21, "a row at 0 and at each k × 0.1 to 2")
		for k, r := range rows[1:] {
			tk, err := strconv.ParseFloat(r[1], 64)
			require.NoError(t, err)
			want := float64(k) * 0.1
			if k == 20 {
				want = 2 // t_end itself
			}
			require.Equal(t, math.Float64bits(want), math.Float64bits(tk), "row %d: t = %s", k, r[1])
		}
		rep := readReport(t, filepath.Join(out, "report.json"))
		if want == nil {
			want, sha = rows, rep.Field.SHA256
			continue
		}
		require.Equal(t, want, rows, "%s ranks × %s threads", split[0], split[1])
		require.Equal(t, sha, rep.Field.SHA256, "%s ranks × %s threads", split[0], split[1])
	}
}

// Snapshots and checkpoints by time: output.snapshot_dt = 0.75 draws the
// field at t = 0.75, 1.5 and the end, checkpoint.every_time = 0.5 keeps
// checkpoints at t = 0.5, 1, 1.5 (and the final one at 2), each at its time
// to the bit.
func TestAdaptiveSnapshotsAndCheckpointsByTime(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := heat(t, adaptiveArgs(out, "--set", `output.formats=["png"]`, "--set", "output.snapshot_dt=0.75",
		"--set", "checkpoint.every_time=0.5", "--set", "checkpoint.keep=0")...)
	require.Zero(t, code, stderr)
	var times []float64
	for _, name := range []string{"u-*.json"} {
		found, err := filepath.Glob(filepath.Join(out, "snapshots", name))
		require.NoError(t, err)
		for _, f := range found {
			var p struct{ Time float64 }
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &p))
			times = append(times, p.Time)
		}
	}
	require.ElementsMatch(t, []float64{0.75, 1.5, 2}, times)
	rep := readReport(t, filepath.Join(out, "report.json"))
	var ckTimes []float64
	for _, c := range rep.Checkpoints {
		ck, err := checkpoint.Open(c.Path)
		require.NoError(t, err)
		ckTimes = append(ckTimes, ck.Meta().Time)
	}
	require.Equal(t, []float64{0.5, 1, 1.5, 2}, ckTimes)
	code, _, stderr = heat(t, adaptiveArgs(filepath.Join(out, "fixed"), "--set", "equation.dt=0.1", "--set", "checkpoint.every_time=0.5")...)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "checkpoint.every_time: checkpoints by time need steps that land on their times")
}

// A restart from a checkpoint taken mid-run, on another rank count, takes
// the straight run's steps (diagnostics.csv's dt and error estimate, row
// for row) to its field.sha256.
func TestAdaptiveRestartTakesTheSameSteps(t *testing.T) {
	for _, scheme := range []string{"crank-nicolson", "sdirk4"} {
		t.Run(scheme, func(t *testing.T) { adaptiveRestart(t, scheme) })
	}
}

func adaptiveRestart(t *testing.T, scheme string) {
	straight := t.TempDir()
	code, _, stderr := heat(t, adaptiveArgs(straight, "--set", "output.diagnostics_every=1", "--set", "equation.scheme="+scheme)...)
	require.Zero(t, code, stderr)
	rep := readReport(t, filepath.Join(straight, "report.json"))
	steps := rep.Steps
	require.Greater(t, steps, 20)
	a := readTable(t, filepath.Join(straight, "diagnostics.csv"))
	dt := len(a[0]) - 2
	require.Equal(t, "dt", a[0][dt])
	// Checkpoints at step 12 and at the step that lands on the heater's
	// switch (the next step is then to be chosen afresh).
	atSwitch := ""
	for _, r := range a[1:] {
		if r[1] == "1" {
			atSwitch = r[0]
		}
	}
	require.NotEmpty(t, atSwitch, "a step ends at t = 1")
	for _, at := range []string{"12", atSwitch} {
		half := t.TempDir()
		code, _, stderr = heat(t, adaptiveArgs(half, "--set", "output.diagnostics_every=1", "--set", "equation.scheme="+scheme, "--ranks", "2",
			"--set", "checkpoint.every="+at, "--steps", at)...)
		require.Zero(t, code, stderr)
		require.Contains(t, stderr, "run.steps = "+at+" came before run.t_end = 2: the steps that choose themselves ended at t = ")
		ck := fmt.Sprintf("step-%08s", at)
		code, _, stderr = heat(t, "run", "-q", "--restart", filepath.Join(half, "checkpoints", ck), "--ranks", "3", "--steps", strconv.Itoa(1<<30))
		require.Zero(t, code, stderr)
		rest := readReport(t, filepath.Join(half, "report.json"))
		require.Equal(t, rep.Field.SHA256, rest.Field.SHA256, "restart from step %s", at)
		require.Equal(t, steps, rest.Steps)
		a0, a1 := *rep.Solver.Adaptive, *rest.Solver.Adaptive
		a0.ControlS, a0.ControlShare, a1.ControlS, a1.ControlShare = 0, 0, 0, 0
		require.Equal(t, a0, a1, "the same steps kept, taken again, smallest and largest")
		b := readTable(t, filepath.Join(half, "diagnostics.csv"))
		require.Equal(t, a[0], b[0])
		// The restarted run's rows follow its checkpoint's; each step's
		// time, dt and estimate as the straight run's.
		got := map[string][]string{}
		for _, r := range b[1:] {
			got[r[0]] = []string{r[1], r[dt], r[dt+1]}
		}
		for _, r := range a[1:] {
			require.Equal(t, []string{r[1], r[dt], r[dt+1]}, got[r[0]], "restart from step %s: step %s", at, r[0])
		}
	}
}

// Bad input: "auto" alone takes the documented tolerance; a tolerance or
// bounds out of order, an event outside the run, no t_end, probes by time
// with fixed steps exit 2 naming the key; a step that cannot meet the
// tolerance at dt_min exits 1 naming the time, dt and the estimate.
func TestAdaptiveRefusals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := heat(t, append(adaptiveArgs(out), "--dry-run")...)
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "rtol = 0.0001\n")
	require.Contains(t, stdout, "atol = 0.0001\n")
	require.Contains(t, stdout, "# problem      heat 24x24: crank-nicolson steps chosen by their error to run.t_end = 2 (rtol 0.0001, atol 0.0001; dt from the field's rate at the start within [2e-12, 2]), landing on 2 event(s)")
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"equation.rtol=-1e-3"}, "equation.rtol: must be in (0, 1)"},
		{[]string{"equation.dt_min=0.5", "equation.dt_max=0.1"}, "equation.dt_min: 0.5 is larger than equation.dt_max = 0.1"},
		{[]string{"run.events=[0.5, 3.0]"}, "run.events: event 1 at 3 lies outside [0, run.t_end = 2]"},
		{[]string{"run.t_end=0"}, `run.t_end: equation.dt = "auto" needs a run.t_end`},
		{[]string{"equation.dt=0.1", "output.probe_dt=0.1"}, "output.probe_dt: probes by time need steps that land on their times"},
		{[]string{"equation.dt=0.1", "equation.rtol=1e-3"}, `equation.rtol: is read only by implicit steps with equation.dt = "auto"`},
	} {
		var args []string
		for _, s := range c.set {
			args = append(args, "--set", s)
		}
		code, _, stderr := heat(t, adaptiveArgs(out, args...)...)
		require.Equal(t, 2, code, "%v: %s", c.set, stderr)
		require.Contains(t, stderr, c.want)
		require.NotContains(t, stderr, "goroutine")
	}
	require.NoDirExists(t, out)
	code, _, stderr = heat(t, adaptiveArgs(out, "--set", "equation.rtol=1e-6", "--set", "equation.dt_min=0.5", "--set", "equation.dt_max=0.5", "--set", "equation.dt_initial=0.5")...)
	require.Equal(t, 1, code, stderr)
	require.Regexp(t, `step 1 at t = 0: the error estimate \S+ \(of the tolerance\) stays above 1 at equation.dt_min = 0.5`, stderr)
	rep := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, "failed", rep.Status)
}

// In media (the power module: plain cycles, which hand over to mgcg where
// they converge slowly) the steps choose themselves too:
// diagnostics.csv's rows carry each step's dt and estimate under its
// header (the media's step was written back over "auto"), the plots read
// it, the heater's switch at t = 1 is an event, and the balance closes.
func TestAdaptiveInMedia(t *testing.T) {
	for _, scheme := range []string{"backward-euler", "sdirk4"} {
		t.Run(scheme, func(t *testing.T) { adaptiveMedia(t, scheme) })
	}
}

func adaptiveMedia(t *testing.T, scheme string) {
	out := t.TempDir()
	code, _, stderr := heat(t, "run", "-q", "-c", "power-module-3d", "--out", out, "--set", "grid.shape=[8,32,32]", "--set", "run.t_end=3", "--set", `equation.dt="auto"`,
		"--set", "equation.rtol=1e-3", "--set", "equation.atol=1e-2", "--set", "output.diagnostics_every=1", "--set", "output.formats=[]",
		"--set", "run.tolerance=1e-12", "--set", "equation.scheme="+scheme)
	require.Zero(t, code, stderr)
	rep := readReport(t, filepath.Join(out, "report.json"))
	require.NotNil(t, rep.Solver.Adaptive)
	require.Equal(t, "multigrid", rep.Solver.Kind) // each step begins with plain cycles
	rows, err := runplot.Read(filepath.Join(out, "diagnostics.csv"))
	require.NoError(t, err)
	require.Len(t, rows, rep.Steps+1)
	last := rows[len(rows)-1]
	require.Equal(t, 3.0, last.Time)
	require.Greater(t, last.DT, 0.0)
	require.Greater(t, last.Estimate, 0.0)
	require.LessOrEqual(t, last.Estimate, 1.0)
	landed := false
	for _, r := range rows {
		landed = landed || r.Time == 1
	}
	require.True(t, landed, "a step ends at the switch, t = 1")
	require.InEpsilon(t, 50*2.0, float64(rep.EnergyBalance.Source), 1e-9, "50 W from t = 1 to 3")
	t.Logf("%d steps, balance %.3g", rep.Steps, float64(rep.EnergyBalance.RelativeResidual))
	require.Less(t, float64(rep.EnergyBalance.RelativeResidual), 1e-8)
	code, _, stderr = heat(t, "plot", out)
	require.Zero(t, code, stderr)
}

// In a random medium of 10⁴ (preconditioned algebraically) the steps that
// choose themselves set the hierarchy up once and scale it to each step
// length; a restart on another rank count, whose first step length is
// another, scales the same hierarchy and reaches the straight run's
// field.sha256 in the same steps.
func TestAdaptiveRestartInARandomMedium(t *testing.T) {
	kmap := filepath.Join(t.TempDir(), "k.npy")
	writeMap(t, kmap, adaptiveN, adaptiveN, func(y, x int) float64 {
		if (y*7919+x*104729)%13 < 6 {
			return 1e4
		}
		return 1
	})
	args := func(out string, extra ...string) []string {
		return adaptiveArgs(out, append([]string{"--set", "maps.k=" + kmap, "--set", "equation.alpha=1.0", "--set", "equation.scheme=backward-euler",
			"--set", "equation.rtol=1e-2", "--set", "equation.atol=1e-2"}, extra...)...)
	}
	straight := t.TempDir()
	code, _, stderr := heat(t, args(straight)...)
	require.Zero(t, code, stderr)
	rep := readReport(t, filepath.Join(straight, "report.json"))
	require.NotNil(t, rep.Solver.Algebraic, "the medium is preconditioned algebraically")
	alg := rep.Solver.Algebraic
	t.Logf("%d steps, %d cycles; algebraic: %d setups, %d rescales, %.3f s", rep.Steps, rep.Solver.Cycles, alg.Setups, alg.Rescales, alg.SetupS)
	require.Equal(t, 1, alg.Setups, "set up once")
	require.Greater(t, alg.Rescales, rep.Steps, "scaled to every step length")
	require.Greater(t, rep.Steps, 12)

	half := t.TempDir()
	code, _, stderr = heat(t, args(half, "--ranks", "2", "--set", "checkpoint.every=12", "--steps", "12")...)
	require.Zero(t, code, stderr)
	code, _, stderr = heat(t, "run", "-q", "--restart", filepath.Join(half, "checkpoints", "step-00000012"), "--ranks", "3", "--steps", strconv.Itoa(1<<30))
	require.Zero(t, code, stderr)
	rest := readReport(t, filepath.Join(half, "report.json"))
	require.Equal(t, rep.Field.SHA256, rest.Field.SHA256)
	require.Equal(t, rep.Steps, rest.Steps)
}
