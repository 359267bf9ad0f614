package config

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// floatKeys lists the dotted key of every float64 and []float64 field of
// the schema, per-face tables included, with its slice-ness.
func floatKeys(t reflect.Type, prefix string, out map[string]bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, name := range tagsOf(t) {
		f, _ := fieldByTag(t, name)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == reflect.TypeFor[Value](): // a number (or an expression, a table)
			out[prefix+name] = false
		case ft.Kind() == reflect.Struct:
			floatKeys(ft, prefix+name+".", out)
		case ft.Kind() == reflect.Float64:
			out[prefix+name] = false
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Float64:
			out[prefix+name] = true
		}
	}
}

// Every float key of the schema refuses NaN and ±Inf, whether the run
// uses it or not, naming the key and the value; the list of keys comes
// from the schema, so a new key is covered without a new row.
func TestNonFiniteRefusedInEveryFloatKey(t *testing.T) {
	keys := map[string]bool{}
	floatKeys(configType, "", keys)
	require.Contains(t, keys, "source.radius")
	require.Contains(t, keys, "boundary.x_lo.value")
	require.Contains(t, keys, "output.range")
	for key, slice := range keys {
		if strings.HasPrefix(key, "boundary.z_") {
			continue // a 2D grid has no z faces; the x and y faces stand for them
		}
		for _, bad := range []string{"nan", "inf", "-inf"} {
			val := bad
			if slice {
				val = "[0.25, " + bad + "]"
			}
			set := key + "=" + val
			_, err := Load("", []string{set})
			var ce *Error
			require.ErrorAs(t, err, &ce, set)
			require.Equal(t, key, ce.Key, "%s: %v", set, err)
			require.Contains(t, err.Error(), "--set "+set, set)
			require.Contains(t, err.Error(), bad, set)
			require.Contains(t, err.Error(), "finite", set)
		}
	}
	// A 3D grid's z faces too, from a file.
	p := writeFile(t, "z.toml", "[grid]\nshape = [8, 8, 8]\n[boundary.z_hi]\nvalue = nan\n")
	_, err := Load(p, nil)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "boundary.z_hi.value", ce.Key, "%v", err)
	require.Contains(t, err.Error(), p)
}

// Path and label keys take TOML strings only: a number, a bool or an
// array given for one is refused naming the key and the value, in a file
// and through --set, instead of becoming its text; a bare word on the
// command line is still a string.
func TestStringKeysTakeStringsOnly(t *testing.T) {
	for _, set := range []string{"output.label=5", "output.dir=2024", "output.dir=true", "output.slice=0.5", "equation.kind=[1]", "checkpoint.dir=1.5"} {
		_, err := Load("", []string{set})
		var ce *Error
		require.ErrorAs(t, err, &ce, set)
		key, val, _ := strings.Cut(set, "=")
		require.Equal(t, key, ce.Key, "%s: %v", set, err)
		require.Contains(t, err.Error(), "must be a string (got "+val+")", set)
	}
	p := writeFile(t, "x.toml", "[output]\ndir = 5\n")
	_, err := Load(p, nil)
	require.ErrorContains(t, err, p+": output.dir: must be a string (got 5)")

	c, err := Load("", []string{"equation.kind=poisson", `output.label="5"`, "output.dir=runs/2024-a", "checkpoint.dir = my run"})
	require.NoError(t, err)
	require.Equal(t, Poisson, c.Equation.Kind)
	require.Equal(t, "5", c.Output.Label)
	require.Equal(t, "runs/2024-a", c.Output.Dir)
	require.Equal(t, "my run", c.Checkpoint.Dir)
}

// A face value or coefficient no face can use is refused: a periodic face
// wraps, so a value of its own is ignored; h is a robin face's alone; a
// nonzero boundary.value that no face takes is ignored. A robin face needs
// h; an expression that does not compile names its column. (A neumann
// value is the face's flux.)
func TestFaceValuesThatWouldBeIgnored(t *testing.T) {
	for _, c := range []struct {
		sets []string
		key  string
		want string
	}{
		{[]string{"boundary.kind=periodic", "boundary.value=2"}, "boundary.value", "2 would be ignored"},
		{[]string{"boundary.kind=periodic", "boundary.x_lo.value=3"}, "boundary.x_lo.value", "a periodic face wraps around; value 3 would be ignored"},
		{[]string{"boundary.value=1", "boundary.x_lo.value=2", "boundary.x_hi.value=2", "boundary.y_lo.value=2", "boundary.y_hi.value=2"}, "boundary.value",
			"1 would be ignored"},
		{[]string{"boundary.x_hi.kind=robin", "boundary.x_hi.value=293"}, "boundary.x_hi.h", "a robin face needs h"},
		{[]string{"boundary.x_hi.h=25"}, "boundary.x_hi.h", "on a dirichlet face 25 would be ignored"},
		{[]string{"boundary.h=25"}, "boundary.h", "25 would be ignored: no face is robin"},
		{[]string{"boundary.x_hi={kind=\"robin\", h=-1}"}, "boundary.x_hi.h", "must not be negative"},
		{[]string{"boundary.x_hi.value=\"300 + 20*sin(2*pi*tt)\""}, "boundary.x_hi.value", "column 19: unknown name tt"},
		{[]string{"boundary.x_hi.value=\"300 +\""}, "boundary.x_hi.value", "column"},
		{[]string{"boundary.x_hi.value={table=\"no-such-table.csv\"}"}, "boundary.x_hi.value", "no-such-table.csv"},
	} {
		_, err := Load("", c.sets)
		var ce *Error
		require.ErrorAs(t, err, &ce, "%v", c.sets)
		require.Equal(t, c.key, ce.Key, "%v: %v", c.sets, err)
		require.Contains(t, err.Error(), c.want, "%v", c.sets)
	}
	for _, sets := range [][]string{
		{"boundary.value=5", "boundary.x_lo.kind=neumann"},                            // x_lo inherits 5, the others use it
		{"boundary.kind=neumann", "boundary.value=5", "boundary.x_hi.kind=dirichlet"}, // x_hi uses it
		{"boundary.x_lo.kind=neumann", "boundary.x_lo.value=0"},                       // zero flux said twice
		{"boundary.kind=periodic", "boundary.value=0"},
	} {
		_, err := Load("", sets)
		require.NoError(t, err, "%v", sets)
	}
}

// notesOf resolves a command line and returns the notes the run prints as
// warnings.
func notesOf(t *testing.T, args ...string) []string {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := AddFlags(fs)
	require.NoError(t, fs.Parse(args))
	_, err := f.Resolve()
	require.NoError(t, err, "%v", args)
	return f.Notes
}

// A hotspot or gaussian centred outside the domain is a warning naming
// the key; a hotspot that covers no cell centre (its disc misses the
// domain, or falls between the cells) says the field is all background.
func TestProfileOutsideTheDomainWarns(t *testing.T) {
	notes := strings.Join(notesOf(t, "--set", "initial.center=[1.5,0.5]"), "\n")
	require.Contains(t, notes, "initial.center [1.5 0.5] is outside the domain [0, 1] × [0, 1]")
	require.Contains(t, notes, "the initial field is all background (0)")

	notes = strings.Join(notesOf(t, "--set", "initial.center=[1.05,0.5]"), "\n")
	require.Contains(t, notes, "initial.center [1.05 0.5] is outside the domain")
	require.NotContains(t, notes, "background")

	notes = strings.Join(notesOf(t, "--set", "source={kind=\"hotspot\", value=2, background=0.5, radius=0.2, center=[0.5,-0.3]}"), "\n")
	require.Contains(t, notes, "source.center [0.5 -0.3] is outside the domain")
	require.Contains(t, notes, "the source is all background (0.5)")

	notes = strings.Join(notesOf(t, "--set", "grid.shape=[8,8,8]", "--set", "source={kind=\"gaussian\", value=1, radius=0.1, center=[0.5,0.5,2]}"), "\n")
	require.Contains(t, notes, "source.center [0.5 0.5 2] is outside the domain [0, 1] × [0, 1] × [0, 1]")

	notes = strings.Join(notesOf(t, "--set", "initial.radius=0.0001"), "\n")
	require.Contains(t, notes, "initial: the hotspot of radius 0.0001 around [0.5 0.5] covers no cell centre")
	require.NotContains(t, notes, "outside")

	// Inside: nothing to say; unused: that it is unused, not where it is.
	require.Empty(t, notesOf(t))
	require.Equal(t, []string{`source.center (--set source.center=[3,3]) is not read by source.kind = "none", which reads nothing: the run ignores it`},
		notesOf(t, "--set", "source.center=[3,3]"))
	require.Empty(t, notesOf(t, "--set", "initial.kind=gaussian", "--set", "initial.center=[0,1]"))
}

// run.steps and run.t_end from any layers stop the run at whichever comes
// first; run.steps counts only where a layer other than the built-in
// problem gives it. The resolved config keeps both as given (the steps
// cut to t_end where t_end comes first), and resolves to itself again.
func TestStepsAndTEndFirstOneStops(t *testing.T) {
	// On 64² the automatic dt is 0.9/(2·(64²+64²)) = 5.4931640625e-05:
	// t_end 0.019 is 346 steps (the last one shortened), 0.5 is 9103.
	grid := []string{"--set", "grid.shape=[64,64]"}
	both := writeFile(t, "both.toml", "[grid]\nshape = [64, 64]\n[run]\nsteps = 10\nt_end = 0.019\n")
	tEnd := writeFile(t, "t.toml", "[grid]\nshape = [64, 64]\n[run]\nt_end = 0.019\n")
	for _, c := range []struct {
		name  string
		args  []string
		steps int
		atEnd bool
	}{
		{"t_end alone", append(grid, "--set", "run.t_end=0.019"), 346, true},
		{"t_end beyond the built-in steps", append(grid, "--set", "run.t_end=0.5"), 9103, true},
		{"steps first, --set both", append(grid, "--set", "run.t_end=0.019", "--set", "run.steps=100"), 100, false},
		{"steps first, other order", append(grid, "--set", "run.steps=100", "--set", "run.t_end=0.019"), 100, false},
		{"t_end first, --steps", append(grid, "--steps", "1000", "--set", "run.t_end=0.019"), 346, true},
		{"both in one file, steps first", []string{"-c", both}, 10, false},
		{"file's t_end first over --steps", []string{"-c", tEnd, "--steps", "5000"}, 346, true},
		{"--steps first over a file's t_end", []string{"-c", tEnd, "--steps", "20"}, 20, false},
		{"steps equal to t_end's", append(grid, "--set", "run.t_end=0.019", "--steps", "346"), 346, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := resolve(t, c.args...)
			require.NoError(t, err)
			require.Equal(t, c.steps, cfg.Run.Steps)
			require.Contains(t, []float64{0.019, 0.5}, cfg.Run.TEnd, "t_end is kept as given")
			require.Equal(t, c.atEnd, cfg.EndsAtTEnd())
			notes := strings.Join(notesOf(t, c.args...), "\n")
			if c.atEnd {
				require.NotContains(t, notes, "run.t_end")
			} else {
				require.Contains(t, notes, "run.steps = "+strconv.Itoa(c.steps))
				require.Contains(t, notes, "before run.t_end = 0.019")
			}
			again := *cfg
			require.NoError(t, again.Validate())
			require.Equal(t, *cfg, again, "a resolved config validates to itself")
		})
	}
}

// A restart resolves when to stop again, from the checkpoint's steps and
// t_end and the restart's own: a larger --steps still stops at the
// checkpoint's t_end, a later t_end moves the end of a run that stopped at
// its t_end, and a checkpoint's run.steps that came first stays a bound.
func TestRestartStopsAtTheFirstToo(t *testing.T) {
	restart := func(base *Config, args ...string) *Config {
		t.Helper()
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f := AddFlags(fs)
		require.NoError(t, fs.Parse(args))
		c, err := f.ResolveRestart(base, "checkpoint step-00000010")
		require.NoError(t, err, "%v", args)
		return c
	}
	stepsFirst, err := resolve(t, "--set", "grid.shape=[64,64]", "--set", "run.t_end=0.019", "--steps", "100")
	require.NoError(t, err)
	require.Equal(t, stepsFirst, restart(stepsFirst))
	c := restart(stepsFirst, "--steps", "2000")
	require.Equal(t, 346, c.Run.Steps, "a larger --steps still stops at t_end")
	require.True(t, c.EndsAtTEnd())
	require.Equal(t, 200, restart(stepsFirst, "--steps", "200").Run.Steps)
	require.Equal(t, 100, restart(stepsFirst, "--set", "run.t_end=0.5").Run.Steps, "the checkpoint's steps came first and still do")

	toTEnd, err := resolve(t, "--set", "grid.shape=[64,64]", "--set", "run.t_end=0.019")
	require.NoError(t, err)
	require.Equal(t, toTEnd, restart(toTEnd))
	require.Equal(t, 692, restart(toTEnd, "--set", "run.t_end=0.038").Run.Steps, "steps that only reach t_end follow it")
	require.Equal(t, 346, restart(toTEnd, "--steps", "5000").Run.Steps)
	c = restart(toTEnd, "--set", "run.t_end=0")
	require.Equal(t, 346, c.Run.Steps, "without t_end the steps are the total")
	require.False(t, c.EndsAtTEnd())
}

// Step counts that cannot be run are refused naming run.t_end and the time
// step: more than MaxSteps steps (1e-300 used to give a negative count),
// or none at all.
func TestTEndStepCountBounds(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want []string
	}{
		{[]string{"equation.dt=1e-300", "run.t_end=1"}, []string{"--set run.t_end=1: run.t_end:", "run.t_end: 1 takes 1e+300 steps of equation.dt = 1e-300", "more than the 1e+12"}},
		{[]string{"run.t_end=1e300"}, []string{"run.t_end: 1e+300 takes", "the automatic equation.dt = 8.58306884765625e-07", "more than the 1e+12"}},
		{[]string{"grid.shape=[64,64]", "run.t_end=1e-20"}, []string{"run.t_end: 1e-20 is", "of a step of the automatic equation.dt = 5.4931640625e-05", "no steps"}},
	} {
		_, err := Load("", c.sets)
		var ce *Error
		require.ErrorAs(t, err, &ce, "%v", c.sets)
		require.Equal(t, "run.t_end", ce.Key, "%v", err)
		for _, w := range c.want {
			require.Contains(t, err.Error(), w, "%v", c.sets)
		}
	}
	c, err := Load("", []string{"grid.shape=[64,64]", "equation.dt=1e-9", "run.t_end=1000"})
	require.NoError(t, err, "1e12 steps are allowed")
	require.Equal(t, int(1e12), c.Run.Steps)
}
