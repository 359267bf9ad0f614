package config

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"heat/configs"
)

// examplesDir is the repository's configs/ directory, seen from this package.
const examplesDir = "../../configs"

// writeFile writes text to name in a fresh temporary directory and returns
// its path.
func writeFile(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// resolve parses a `heat run` command line (after the subcommand) the way
// cmd/heat does and resolves it.
func resolve(t *testing.T, args ...string) (*Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := AddFlags(fs)
	require.NoError(t, fs.Parse(args))
	return f.Resolve()
}

// TestPrecedence proves the layering order built-in defaults < config file
// < --set < dedicated flags, key by key: each row adds one layer and the
// highest layer that names the key wins.
func TestPrecedence(t *testing.T) {
	type row struct {
		name string
		file string // config file text; "" = no -c (built-in problem)
		args []string
		get  func(*Config) any
		want any
	}
	steps := func(c *Config) any { return c.Run.Steps }
	ranks := func(c *Config) any { return c.Parallel.Ranks }
	threads := func(c *Config) any { return c.Parallel.Threads }
	dims := func(c *Config) any { return c.Parallel.Dims }
	out := func(c *Config) any { return c.Output.Dir }
	shape := func(c *Config) any { return c.Grid.Shape }
	kind := func(c *Config) any { return c.Equation.Kind }

	const other = "[equation]\nalpha = 2.0\n" // a file that leaves the keys alone
	rows := []row{
		// run.steps: the defaults are the built-in problem's, 2000.
		{"steps/default", other, nil, steps, 2000},
		{"steps/builtin", "", nil, steps, 2000},
		{"steps/file", "[run]\nsteps = 7\n", nil, steps, 7},
		{"steps/set>file", "[run]\nsteps = 7\n", []string{"--set", "run.steps=8"}, steps, 8},
		{"steps/flag>set>file", "[run]\nsteps = 7\n", []string{"--set", "run.steps=8", "--steps", "9"}, steps, 9},
		{"steps/flag>builtin", "", []string{"--steps", "9"}, steps, 9},
		{"steps/last set wins", "", []string{"--set", "run.steps=8", "--set", "run.steps=5"}, steps, 5},
		// parallel.ranks
		{"ranks/default", other, nil, ranks, 1},
		{"ranks/file", "[parallel]\nranks = 2\n", nil, ranks, 2},
		{"ranks/set>file", "[parallel]\nranks = 2\n", []string{"--set", "parallel.ranks=3"}, ranks, 3},
		{"ranks/flag>set>file", "[parallel]\nranks = 2\n", []string{"--set", "parallel.ranks=3", "--ranks", "4"}, ranks, 4},
		// parallel.threads
		{"threads/default", other, nil, threads, 0},
		{"threads/file", "[parallel]\nthreads = 2\n", nil, threads, 2},
		{"threads/set>file", "[parallel]\nthreads = 2\n", []string{"--set", "parallel.threads=3"}, threads, 3},
		{"threads/flag>set", "[parallel]\nthreads = 2\n", []string{"--set", "parallel.threads=3", "--threads", "4"}, threads, 4},
		// parallel.dims, with ranks to match
		{"dims/default", other, nil, dims, []int{}},
		{"dims/file", "[parallel]\nranks = 4\ndims = [4, 1]\n", nil, dims, []int{4, 1}},
		{"dims/set>file", "[parallel]\nranks = 4\ndims = [4, 1]\n", []string{"--set", "parallel.dims=[2,2]"}, dims, []int{2, 2}},
		{"dims/flag>set", "[parallel]\nranks = 4\ndims = [4, 1]\n", []string{"--set", "parallel.dims=[2,2]", "--dims", "1x4"}, dims, []int{1, 4}},
		// output.dir
		{"out/default", other, nil, out, "heat-out"},
		{"out/file", "[output]\ndir = \"a\"\n", nil, out, "a"},
		{"out/set>file", "[output]\ndir = \"a\"\n", []string{"--set", `output.dir="b"`}, out, "b"},
		{"out/flag>set", "[output]\ndir = \"a\"\n", []string{"--set", `output.dir="b"`, "--out", "c"}, out, "c"},
		// keys without a dedicated flag: the file and --set layers
		{"shape/default", other, nil, shape, []int{512, 512}},
		{"shape/builtin", "", nil, shape, []int{512, 512}},
		{"shape/file", "[grid]\nshape = [32, 16]\n", nil, shape, []int{32, 16}},
		{"shape/set>file", "[grid]\nshape = [32, 16]\n", []string{"--set", "grid.shape=[8,8,8]"}, shape, []int{8, 8, 8}},
		{"kind/file", "[equation]\nkind = \"poisson\"\n", nil, kind, Poisson},
		{"kind/set>file", "[equation]\nkind = \"poisson\"\n", []string{"--set", "equation.kind=heat"}, kind, Heat},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			args := r.args
			if r.file != "" {
				args = append([]string{"-c", writeFile(t, "run.toml", r.file)}, args...)
			}
			c, err := resolve(t, args...)
			require.NoError(t, err)
			require.Equal(t, r.want, r.get(c))
		})
	}
}

// TestLoadMatchesFlags: Load is Resolve without the dedicated flags.
func TestLoadMatchesFlags(t *testing.T) {
	p := writeFile(t, "x.toml", "[run]\nsteps = 7\n")
	a, err := Load(p, []string{"grid.shape=[64,32]"})
	require.NoError(t, err)
	b, err := resolve(t, "-c", p, "--set", "grid.shape=[64,32]")
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Equal(t, 7, a.Run.Steps)
}

// TestExamples loads every example problem under configs/ from disk and
// checks it validates and stays quick (the examples must run in seconds).
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.toml"))
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range files {
		names[filepath.Base(f)] = true
	}
	for _, want := range []string{"default.toml", "hotplate-2d.toml", "cube-3d.toml", "poisson-2d.toml", "periodic-2d.toml"} {
		require.True(t, names[want], "configs/%s is missing", want)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, err := Load(f, nil)
			require.NoError(t, err)
			cells, ok := product(c.Grid.Shape)
			require.True(t, ok)
			require.LessOrEqual(t, float64(cells)*float64(c.Run.Steps), 1e9,
				"an example should run in seconds on one core")
			// Every example is embedded too.
			embedded, err := fs.ReadFile(configs.FS, filepath.Base(f))
			require.NoError(t, err)
			onDisk, err := os.ReadFile(f)
			require.NoError(t, err)
			require.Equal(t, string(onDisk), string(embedded))
		})
	}
}

// TestBuiltinIsDefaultToml: `heat run` without -c solves configs/default.toml.
func TestBuiltinIsDefaultToml(t *testing.T) {
	onDisk, err := os.ReadFile(filepath.Join(examplesDir, "default.toml"))
	require.NoError(t, err)
	require.Equal(t, string(onDisk), string(configs.Default()))

	builtin, err := Load("", nil)
	require.NoError(t, err)
	fromFile, err := Load(filepath.Join(examplesDir, "default.toml"), nil)
	require.NoError(t, err)
	require.Equal(t, fromFile, builtin)

	c, err := resolve(t)
	require.NoError(t, err)
	require.Equal(t, builtin, c)
	require.Equal(t, Heat, c.Equation.Kind)
	require.Equal(t, "heat-out", c.Output.Dir)
}

// TestDefaultTomlDocumentsEveryKey: the built-in problem is where users
// learn the keys, so it names every key of the schema (per-face tables by
// example) — but for the media's, which the example of heterogeneous
// media shows (the default problem is a uniform plate).
func TestDefaultTomlDocumentsEveryKey(t *testing.T) {
	elsewhere := map[string]string{"maps": "two-materials-2d.toml", "material": "two-materials-2d.toml"}
	var walk func(t reflect.Type, prefix string)
	var missing []string
	walk = func(ty reflect.Type, prefix string) {
		for _, name := range tagsOf(ty) {
			f, _ := fieldByTag(ty, name)
			key := prefix + name
			top, _, _ := strings.Cut(key, ".")
			file := "default.toml"
			if e, ok := elsewhere[top]; ok {
				file = e
			}
			b, err := fs.ReadFile(configs.FS, file)
			require.NoError(t, err)
			text := string(b)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct { // [[material]]
				if !strings.Contains(text, "[["+key+"]]") {
					missing = append(missing, key+" in "+file)
				}
				walk(ft.Elem(), key+".")
				continue
			}
			if ft.Kind() == reflect.Struct {
				if !strings.Contains(text, key) && !strings.Contains(text, "["+key+"]") && !strings.Contains(text, name) {
					missing = append(missing, key+" in "+file)
				}
				walk(ft, key+".")
				continue
			}
			if !strings.Contains(text, name+" =") {
				missing = append(missing, key+" in "+file)
			}
		}
	}
	walk(configType, "")
	require.Empty(t, missing, "keys not shown in configs/")
}

// TestDefaultsResolved: resolution fills lengths and centres from the grid.
func TestDefaultsResolved(t *testing.T) {
	p := writeFile(t, "x.toml", "[grid]\nshape = [10, 20, 40]\nlength = [1.0, 2.0, 4.0]\n[initial]\nkind = \"sine\"\n")
	c, err := Load(p, nil)
	require.NoError(t, err)
	require.Equal(t, []float64{0.5, 1, 2}, c.Initial.Center)
	require.Equal(t, []float64{0.5, 1, 2}, c.Source.Center)
	require.Equal(t, []int{1, 1, 1}, c.Initial.Mode)
	require.Nil(t, c.Source.Mode)

	c, err = Load(writeFile(t, "y.toml", "[run]\nsteps = 1\n"), nil)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 1}, c.Grid.Length)
	require.Equal(t, []int{512, 512}, c.Grid.Shape)
	require.Equal(t, 1, c.Grid.Ghost)

	// Validate is idempotent on a resolved config.
	before := *c
	require.NoError(t, c.Validate())
	require.Equal(t, before, *c)

	// Default itself resolves and validates.
	d := Default()
	require.NoError(t, d.Validate())
	require.Equal(t, []float64{1, 1}, d.Grid.Length)
	require.Equal(t, []float64{0.5, 0.5}, d.Initial.Center)
}

// TestBadInput: every mistake is an *Error whose text names the source, the
// key and the bad value.
func TestBadInput(t *testing.T) {
	type row struct {
		name string
		file string // config file text; "" = no -c
		args []string
		key  string   // want Error.Key
		want []string // substrings of the message ("FILE" stands for the file's path)
	}
	rows := []row{
		{"unknown key in file", "[grid]\nshpe = [4, 4]\n", nil, "",
			[]string{"FILE: ", `unknown key "grid.shpe"`, `did you mean "grid.shape"`}},
		{"unknown table in file", "[gird]\nshape = [4, 4]\n", nil, "", []string{"FILE", `unknown key "gird"`}},
		{"key case matters", "[Grid]\nshape = [4, 4]\n", nil, "", []string{`unknown key "Grid"`, `did you mean "grid"`}},
		{"unknown key in --set", "", []string{"--set", "grid.shpe=[4,4]"}, "",
			[]string{"--set grid.shpe=[4,4]: ", `unknown key "grid.shpe"`}},
		{"unknown face key", "", []string{"--set", "boundary.x_lo.knd=neumann"}, "", []string{`unknown key "boundary.x_lo.knd"`}},
		{"wrong type in file", "[grid]\nshape = \"abc\"\n", nil, "grid.shape",
			[]string{"FILE: grid.shape: expected an array of integers (got \"abc\")"}},
		{"wrong element type", "[grid]\nshape = [4, 4.5]\n", nil, "grid.shape", []string{"expected an array of integers (got [4, 4.5])"}},
		{"wrong type in --set", "", []string{"--set", "grid.shape=abc"}, "grid.shape",
			[]string{"--set grid.shape=abc: grid.shape: expected an array of integers (got \"abc\")"}},
		{"table expected", "", []string{"--set", "boundary.x_lo=5"}, "boundary.x_lo", []string{"expected a table (got 5)"}},
		{"number expected", "[equation]\nalpha = \"fast\"\n", nil, "equation.alpha", []string{`expected a number (got "fast")`}},
		{"bool expected", "", []string{"--set", "output.fingerprint=no"}, "output.fingerprint", []string{`expected true or false (got "no")`}},
		{"syntax error keeps line", "[grid]\nshape = [4, 4]\nghost = = 2\n", nil, "", []string{"FILE: line 3:"}},
		{"set without =", "", []string{"--set", "grid.shape"}, "", []string{"--set grid.shape: expected key=value"}},
		{"non-positive shape", "[grid]\nshape = [-4, 8]\n", nil, "grid.shape",
			[]string{"FILE: grid.shape: must be positive (got [-4 8])"}},
		{"shape rank", "", []string{"--set", "grid.shape=[4]"}, "grid.shape", []string{"must have 2 or 3 entries", "(got [4])"}},
		{"length count", "[grid]\nlength = [1.0]\n", nil, "grid.length", []string{"has 1 entries but grid.shape has 2"}},
		{"ghost range", "", []string{"--set", "grid.ghost=0"}, "grid.ghost", []string{"between 1 and 8 (got 0)"}},
		{"equation kind", "", []string{"--set", "equation.kind=wave"}, "equation.kind", []string{`must be "heat" or "poisson" (got "wave")`}},
		{"alpha nan", "", []string{"--set", "equation.alpha=nan"}, "equation.alpha", []string{"(got nan)"}},
		{"dims product", "[parallel]\nranks = 6\ndims = [4, 2]\n", nil, "parallel.dims",
			[]string{"FILE: parallel.dims: 4x2 has 8 ranks but parallel.ranks is 6"}},
		{"dims product, ranks from flag", "[parallel]\ndims = [4, 2]\n", []string{"--ranks", "6"}, "parallel.dims",
			[]string{"4x2 has 8 ranks but parallel.ranks is 6 (from --ranks)"}},
		{"dims count", "", []string{"--ranks", "8", "--dims", "2x2x2"}, "parallel.dims", []string{"--dims: parallel.dims: needs one entry per axis, 2"}},
		{"more ranks than cells along an axis", "[grid]\nshape = [3, 64]\n", []string{"--ranks", "4", "--dims", "4x1"}, "parallel.dims",
			[]string{"--dims: parallel.dims: cannot split 3 cells over 4 ranks along y"}},
		{"more ranks than cells", "[grid]\nshape = [4, 4]\n", []string{"--ranks", "17"}, "parallel.ranks",
			[]string{"--ranks: parallel.ranks: 17 ranks for a 4x4 grid of 16 cells"}},
		{"ghost wider than a box", "[grid]\nshape = [64, 64]\nghost = 4\n", []string{"--ranks", "32", "--dims", "32x1"}, "grid.ghost",
			[]string{"FILE: grid.ghost: 4 is wider than the thinnest box", "2 cells along y"}},
		{"unstable dt", "[grid]\nshape = [128, 128]\n[equation]\ndt = 0.01\n", nil, "equation.dt",
			[]string{"FILE: equation.dt: 0.01 exceeds the stability limit 1.525e-05 = 1/(2·α·Σ1/h²) for this grid"}},
		{"negative dt", "", []string{"--set", "equation.dt=-1"}, "equation.dt", []string{"must be >= 0", "(got -1)"}},
		{"negative threads", "", []string{"--threads", "-1"}, "parallel.threads",
			[]string{"--threads: parallel.threads: must be >= 0 (got -1)"}},
		{"negative threads via --set", "", []string{"--set", "parallel.threads=-1"}, "parallel.threads",
			[]string{"--set parallel.threads=-1: parallel.threads: must be >= 0 (got -1)"}},
		{"zero ranks", "", []string{"--ranks", "0"}, "parallel.ranks", []string{"must be between 1 and 16777216 (got 0)"}},
		{"negative steps", "", []string{"--steps", "-3"}, "run.steps", []string{"--steps: run.steps: must be >= 0 (got -3)"}},
		{"check_every", "", []string{"--set", "run.check_every=0"}, "run.check_every", []string{"must be >= 1 (got 0)"}},
		{"periodic on one face", "[boundary]\nkind = \"dirichlet\"\n[boundary.x_lo]\nkind = \"periodic\"\n", nil, "boundary.x_lo.kind",
			[]string{"FILE: boundary.x_lo.kind: periodic must be on both faces", "x_lo is periodic but x_hi is dirichlet"}},
		{"periodic broken by an override", "[boundary]\nkind = \"periodic\"\n", []string{"--set", "boundary.y_hi.kind=neumann"}, "boundary.y_hi.kind",
			[]string{"--set boundary.y_hi.kind=neumann: boundary.y_hi.kind:", "y_hi is neumann but y_lo is periodic"}},
		{"2D config with z_lo", "[boundary.z_lo]\nkind = \"neumann\"\n", nil, "boundary.z_lo",
			[]string{"FILE: boundary.z_lo: a 2D grid has no z faces"}},
		{"boundary kind", "", []string{"--set", "boundary.kind=fixed"}, "boundary.kind", []string{`(got "fixed")`}},
		{"face kind", "", []string{"--set", "boundary.x_hi.kind=open"}, "boundary.x_hi.kind", []string{`(got "open")`}},
		{"initial kind", "", []string{"--set", "initial.kind=none"}, "initial.kind", []string{`"constant", "hotspot", "gaussian", "sine", "random", "expr" or "file" (got "none")`}},
		{"source kind", "[source]\nkind = \"blob\"\n", nil, "source.kind", []string{`"none", "constant"`, `(got "blob")`}},
		{"center length", "", []string{"--set", "initial.center=[0.5]"}, "initial.center", []string{"one coordinate per axis, 2 for this grid (got [0.5])"}},
		{"mode length", "", []string{"--set", "source.kind=sine", "--set", "source.mode=[1,2,3]"}, "source.mode", []string{"one wave number per axis"}},
		{"radius", "", []string{"--set", "initial.radius=0"}, "initial.radius", []string{"must be positive for hotspot (got 0)"}},
		{"output dir", "", []string{"--out", ""}, "output.dir", []string{"--out: output.dir: must not be empty"}},
		{"bad key in --set", "", []string{"--set", "grid..shape=1"}, "", []string{`--set grid..shape=1: bad key "grid..shape"`}},
		{"array of tables", "[[grid]]\nshape = [4, 4]\n", nil, "grid", []string{"FILE: grid: expected a table (got an array of tables)"}},
		{"integer too big for a float", "[equation]\nalpha = 9007199254740993\n", nil, "equation.alpha",
			[]string{"FILE: equation.alpha: 9007199254740993 is out of the safe float64 range"}},
		{"z face via --set", "", []string{"--set", "boundary.z_hi.kind=neumann"}, "boundary.z_hi",
			[]string{"--set boundary.z_hi.kind=neumann: boundary.z_hi: a 2D grid has no z faces"}},
		{"too many ranks", "", []string{"--ranks", "1000000000000"}, "parallel.ranks", []string{"--ranks: parallel.ranks: must be between 1 and"}},
		{"no process grid fits", "[grid]\nshape = [5, 5]\n", []string{"--ranks", "7"}, "parallel.ranks",
			[]string{"--ranks: parallel.ranks: cannot split a 5x5 grid (25 cells) over 7 ranks"}},
		{"bad --dims", "", []string{"--dims", "4x"}, "parallel.dims", []string{`--dims: parallel.dims: want AxB or AxBxC`, `(got "4x")`}},
		{"image format", "", []string{"--set", "output.image_format=jpg"}, "output.image_format",
			[]string{`--set output.image_format=jpg: output.image_format: unknown image format "jpg" (known: png, svg, pdf)`}},
		{"label with a newline", "[output]\nlabel = \"u\\nv\"\n", nil, "output.label", []string{`FILE: output.label: must be one line of printable text (got "u\nv")`}},
		{"label too long", "", []string{"--set", `output.label="` + strings.Repeat("T", 41) + `"`}, "output.label", []string{"at most 40 characters", "(got 41)"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			args, path := r.args, ""
			if r.file != "" {
				path = writeFile(t, "x.toml", r.file)
				args = append([]string{"-c", path}, args...)
			}
			_, err := resolve(t, args...)
			require.Error(t, err)
			var ce *Error
			require.ErrorAs(t, err, &ce)
			require.Equal(t, r.key, ce.Key, "error: %v", err)
			for _, w := range r.want {
				require.Contains(t, err.Error(), strings.ReplaceAll(w, "FILE", path))
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load("nope.toml", nil)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.True(t, strings.HasPrefix(err.Error(), `config file "nope.toml": no such file (and no example problem of that name: `), err.Error())
	_, err = Load(filepath.Join(t.TempDir(), "nope.toml"), nil)
	require.ErrorAs(t, err, &ce)
	require.True(t, strings.HasSuffix(err.Error(), `nope.toml": no such file`), "a path is no example's name: %v", err)

	_, err = Load(t.TempDir(), nil)
	require.ErrorAs(t, err, &ce)
	require.Contains(t, err.Error(), "is a directory")
}

func TestErrorFormat(t *testing.T) {
	require.Equal(t, "a.toml: grid.shape: bad", (&Error{"a.toml", "grid.shape", "bad"}).Error())
	require.Equal(t, "grid.shape: bad", (&Error{"", "grid.shape", "bad"}).Error())
	require.Equal(t, "a.toml: bad", (&Error{"a.toml", "", "bad"}).Error())
}

// TestSetValues covers the forms of --set users type.
func TestSetValues(t *testing.T) {
	c, err := Load("", []string{
		"equation.kind=poisson",            // bare word
		"source.kind = \"constant\"",       // quoted, with spaces
		"boundary.x_lo.kind=neumann",       // per-face table
		"boundary.y_hi.value=2.5",          // per-face value only
		"boundary.y_lo={kind=\"neumann\"}", // inline table
		"output.dir=runs/2024",             // a bare word with a slash
		"parallel.ranks=4",
		"parallel.dims=2x2", // the --dims form
		"grid.shape=[64,32]",
	})
	require.NoError(t, err)
	require.Equal(t, Poisson, c.Equation.Kind)
	require.Equal(t, "constant", c.Source.Kind)
	require.Equal(t, "runs/2024", c.Output.Dir)
	require.Equal(t, []int{2, 2}, c.Parallel.Dims)
	require.Equal(t, []int{64, 32}, c.Grid.Shape)

	kind, _ := c.FaceKind(1, 0) // x_lo
	require.Equal(t, Neumann, kind)
	kind, v := c.FaceKind(0, 1) // y_hi: kind from the defaults, value overridden
	require.Equal(t, Dirichlet, kind)
	require.Equal(t, Value{Num: 2.5}, v)
	kind, _ = c.FaceKind(0, 0) // y_lo
	require.Equal(t, Neumann, kind)
	kind, v = c.FaceKind(1, 1) // x_hi: untouched
	require.Equal(t, Dirichlet, kind)
	require.Equal(t, Value{}, v)

	// A --set value may not smuggle in a second key.
	_, err = Load("", []string{"run.steps=1\nrun.check_every=2"})
	require.ErrorContains(t, err, "one line")
}

// TestFaceOverlay: a per-face table in a file and a --set on the same face
// combine field by field.
func TestFaceOverlay(t *testing.T) {
	p := writeFile(t, "f.toml", "[boundary]\nvalue = 3.0\n[boundary.x_hi]\nkind = \"dirichlet\"\nvalue = 1.0\n")
	c, err := Load(p, []string{"boundary.x_hi.value=7"})
	require.NoError(t, err)
	kind, v := c.FaceKind(1, 1)
	require.Equal(t, Dirichlet, kind)
	require.Equal(t, Value{Num: 7}, v)
	kind, v = c.FaceKind(1, 0)
	require.Equal(t, Dirichlet, kind)
	require.Equal(t, Value{Num: 3}, v)
}

func TestParseDims(t *testing.T) {
	for s, want := range map[string][]int{"4x2": {4, 2}, "2x2x2": {2, 2, 2}, " 1X8 ": {1, 8}, "": {}} {
		d, err := ParseDims(s)
		require.NoError(t, err, s)
		require.Equal(t, want, d, s)
	}
	for _, s := range []string{"4x", "x2", "4", "0x2", "-1x2", "2x2x2x2", "a x b", "4*2"} {
		_, err := ParseDims(s)
		var ce *Error
		require.ErrorAs(t, err, &ce, s)
		require.Equal(t, "parallel.dims", ce.Key)
		require.Contains(t, err.Error(), s)
	}
}

func TestStabilityLimit(t *testing.T) {
	c := Default()
	c.Grid.Shape = []int{128, 128}
	require.NoError(t, c.Validate())
	limit := 1 / (2 * 1.0 * (128*128 + 128*128))
	require.InDelta(t, limit, c.StabilityLimit(), 1e-20)
	require.InDelta(t, 0.9*limit, c.TimeStep(), 1e-20)

	// Anisotropic 3D cells: Σ over axes of 1/h².
	c = Default()
	c.Grid.Shape = []int{10, 20, 40}
	c.Grid.Length = []float64{1, 2, 8}
	c.Equation.Alpha = 0.5
	hz, hy, hx := 0.1, 0.1, 0.2
	require.InDelta(t, 1/(2*0.5*(1/(hz*hz)+1/(hy*hy)+1/(hx*hx))), c.StabilityLimit(), 1e-15)

	c.Equation.DT = Step{V: 1e-4}
	require.Equal(t, 1e-4, c.TimeStep())
	c.Equation.DT = Step{V: c.StabilityLimit()} // exactly the limit is allowed
	require.NoError(t, c.Validate())

	c.Equation.Kind = Poisson
	require.Equal(t, 0.0, c.TimeStep())
	c.Equation.DT = Step{V: 1} // not checked for poisson
	require.NoError(t, c.Validate())
}

// TestDTMessageLimitIsStable: the limit quoted in the message is itself a
// stable dt, so a user can copy it.
func TestDTMessageLimitIsStable(t *testing.T) {
	for _, n := range []int{7, 100, 128, 333, 4096} {
		c := Default()
		c.Grid.Shape = []int{n, n}
		c.Equation.DT = Step{V: 1}
		err := c.Validate()
		require.Error(t, err)
		msg := formatLimit(c.StabilityLimit())
		require.Contains(t, err.Error(), "stability limit "+msg+" ")
		c2 := Default()
		c2.Grid.Shape = []int{n, n}
		require.NoError(t, c2.Validate())
		_, err = Load("", []string{"grid.shape=[" + strconv.Itoa(n) + "," + strconv.Itoa(n) + "]", "equation.dt=" + msg})
		require.NoError(t, err, msg)
	}
}

func TestPeriodicAndFaces3D(t *testing.T) {
	c, err := Load("", []string{
		"grid.shape=[8,16,32]",
		"boundary.kind=periodic",
		"boundary.z_lo.kind=dirichlet", "boundary.z_hi.kind=neumann",
		"boundary.z_lo.value=4",
		"initial.center=[0.1,0.2,0.3]",
	})
	require.NoError(t, err)
	require.Equal(t, 3, c.NDim())
	require.Equal(t, []bool{false, true, true}, c.Periodic())
	kind, v := c.FaceKind(0, 0)
	require.Equal(t, Dirichlet, kind)
	require.Equal(t, Value{Num: 4}, v)
	kind, _ = c.FaceKind(0, 1)
	require.Equal(t, Neumann, kind)
	kind, _ = c.FaceKind(2, 1)
	require.Equal(t, Periodic, kind)

	c, err = Load(filepath.Join(examplesDir, "periodic-2d.toml"), nil)
	require.NoError(t, err)
	require.Equal(t, []bool{true, true}, c.Periodic())
}

func TestWorldSize(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--set", "parallel.dims=[4,2]"}))
	f.WorldSize = 8
	c, err := f.Resolve()
	require.NoError(t, err)
	require.Equal(t, 8, c.Parallel.Ranks)

	fs = pflag.NewFlagSet("run", pflag.ContinueOnError)
	f = AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--ranks", "4"}))
	f.WorldSize = 8
	_, err = f.Resolve()
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "--ranks: parallel.ranks: 4 conflicts with the 8 ranks of the MPI world", err.Error())
}

// TestNoAliasing: each Load builds a fresh Config; changing one does not
// change the next.
func TestNoAliasing(t *testing.T) {
	a, err := Load("", nil)
	require.NoError(t, err)
	a.Grid.Shape[0] = 1
	a.Initial.Center[0] = math.Pi
	b, err := Load("", nil)
	require.NoError(t, err)
	require.Equal(t, 512, b.Grid.Shape[0])
	require.Equal(t, 0.5, b.Initial.Center[0])
}

// -c NAME runs the embedded example of that name when no file NAME exists,
// and a file of that name wins over the example.
func TestExampleByName(t *testing.T) {
	for _, name := range []string{"poisson-3d", "poisson-3d.toml"} {
		c, err := Load(name, nil)
		require.NoError(t, err)
		require.Equal(t, Poisson, c.Equation.Kind)
		require.Len(t, c.Grid.Shape, 3)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("poisson-3d", []byte("[grid]\nshape = [12, 12]\n"), 0o644))
	c, err := Load("poisson-3d", nil)
	require.NoError(t, err)
	require.Equal(t, []int{12, 12}, c.Grid.Shape)
}

// One set of defaults: the built-in problem (configs/default.toml) is
// Default itself, so an empty config file, a file naming only some keys and
// no file at all start from the same values.
func TestOneSetOfDefaults(t *testing.T) {
	builtin, err := Load("", nil)
	require.NoError(t, err)
	f := Flags{Config: writeFile(t, "empty.toml", "# nothing set\n")}
	empty, err := f.Resolve()
	require.NoError(t, err)
	require.Equal(t, builtin, empty)
	require.Len(t, f.Notes, 1)
	require.Contains(t, f.Notes[0], "empty.toml")
	require.Contains(t, f.Notes[0], "built-in defaults")
	d := Default()
	require.NoError(t, d.Validate())
	require.Equal(t, builtin, d)
}

// A restart starts from the checkpoint's config: what may change does,
// what is the problem itself is refused naming the key and both values.
func TestResolveRestart(t *testing.T) {
	base, err := resolve(t, "--set", "grid.shape=[64,32]", "--ranks", "4", "--dims", "2x2", "--out", "first", "--set", "run.t_end=0.01")
	require.NoError(t, err)
	again := func(args ...string) (*Config, error) {
		t.Helper()
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f := AddFlags(fs)
		require.NoError(t, fs.Parse(args))
		return f.ResolveRestart(base, "checkpoint step-00000010")
	}
	// Nothing given: the checkpoint's config, as it was.
	c, err := again()
	require.NoError(t, err)
	require.Equal(t, base, c)

	// Steps, ranks, output: a new rank count drops the old process grid, a
	// new output folder takes the checkpoints along.
	c, err = again("--steps", "500", "--ranks", "3", "--out", "second")
	require.NoError(t, err)
	require.Equal(t, base.Run.Steps, c.Run.Steps, "the checkpoint's t_end comes before 500 steps")
	require.Equal(t, 0.01, c.Run.TEnd)
	require.Equal(t, 3, c.Parallel.Ranks)
	require.Empty(t, c.Parallel.Dims)
	require.Equal(t, filepath.Join("second", "checkpoints"), c.Checkpoint.Dir)
	c, err = again("--set", "run.t_end=0.02")
	require.NoError(t, err)
	require.Greater(t, c.Run.Steps, base.Run.Steps)

	for _, r := range []struct {
		args []string
		want []string
	}{
		{[]string{"--set", "grid.shape=[64,64]"}, []string{"grid.shape", "[64,32]", "[64,64]", "checkpoint step-00000010", "--set grid.shape=[64,64]"}},
		{[]string{"--set", "equation.alpha=2"}, []string{"equation.alpha", "1", "2"}},
		{[]string{"--set", "boundary.x_lo.kind=neumann"}, []string{"boundary.x_lo.kind", "unset", `"neumann"`}},
		{[]string{"-c", writeFile(t, "p.toml", "[equation]\nkind = \"poisson\"\n")}, []string{"equation.kind", `"heat"`, `"poisson"`}},
	} {
		_, err := again(r.args...)
		var ce *Error
		require.ErrorAs(t, err, &ce, "%v", r.args)
		for _, w := range r.want {
			require.Contains(t, err.Error(), w, "%v", r.args)
		}
	}
}
