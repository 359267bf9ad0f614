package config

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"heat/io/media"
)

// npyFile writes a float64 .npy of shape [ny, nx] holding vals (1 where
// nil) and returns its path.
func npyFile(t *testing.T, name string, ny, nx int, vals []float64) string {
	t.Helper()
	if vals == nil {
		vals = make([]float64, ny*nx)
		for i := range vals {
			vals[i] = 1
		}
	}
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", ny, nx)
	total := (10 + len(dict) + 1 + 63) / 64 * 64
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(total-10))
	b.WriteString(dict + strings.Repeat(" ", total-10-len(dict)-1) + "\n")
	for _, v := range vals {
		binary.Write(&b, binary.LittleEndian, math.Float64bits(v))
	}
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
	return p
}

func f64(v float64) *float64 { return &v }

// [maps] and [[material]] tables load into the config and become the
// media spec: k = equation.alpha under everything, materials in order, a
// material without k or rho_c keeping what lies under.
func TestMediaKeysLoad(t *testing.T) {
	k := npyFile(t, "ground-k.npy", 16, 16, nil)
	file := writeFile(t, "m.toml", fmt.Sprintf(`
[grid]
shape = [16, 16]
[equation]
alpha = 2.0
[maps]
k = %q
[[material]]
name = "copper"
region = "box"
lo = [0.0, 0.5]
hi = [1.0, 1.0]
k = 400.0
rho_c = 3.45e6
[[material]]
region = "ball"
center = [0.25, 0.25]
radius = 0.1
fixed = 350.0
`, k))
	c, err := Load(file, nil)
	require.NoError(t, err)
	require.Equal(t, Maps{K: k}, c.Maps)
	require.Equal(t, []Material{
		{Name: "copper", Region: "box", Lo: []float64{0, 0.5}, Hi: []float64{1, 1}, K: f64(400), RhoC: f64(3.45e6)},
		{Region: "ball", Center: []float64{0.25, 0.25}, Radius: 0.1, Fixed: f64(350)},
	}, c.Material)
	s := c.Media()
	require.Equal(t, &media.Spec{Shape: []int{16, 16}, Length: []float64{1, 1}, K: 2, KMap: k, Materials: []media.Material{
		{Name: "copper", Region: media.Region{Kind: "box", Lo: []float64{0, 0.5}, Hi: []float64{1, 1}}, K: 400, RhoC: 3.45e6},
		{Region: media.Region{Kind: "ball", Center: []float64{0.25, 0.25}, Radius: 0.1}, KeepK: true, Fixed: f64(350)},
	}}, s)
	require.False(t, s.Uniform())

	d, err := Load("", nil)
	require.NoError(t, err)
	require.True(t, d.Media().Uniform(), "the built-in problem is a uniform medium")
	require.Equal(t, 1.0, d.Media().K)

	// --set: a map path as a bare word, the materials as one inline array.
	c, err = Load("", []string{"grid.shape=[16,16]", "maps.rho_c=" + k, `material=[{region="half-space", point=[0.5,0.5], normal=[0,1], k=0}]`})
	require.NoError(t, err)
	require.Equal(t, k, c.Maps.RhoC)
	require.Equal(t, []Material{{Region: "half-space", Point: []float64{0.5, 0.5}, Normal: []float64{0, 1}, K: f64(0)}}, c.Material)
	// ... and an empty array takes the file's materials away.
	c, err = Load(file, []string{"material=[]"})
	require.NoError(t, err)
	require.Empty(t, c.Material)

	// A hole in a poisson problem is fine; its rho_c is unused, a warning.
	notes := strings.Join(notesOf(t, "-c", file, "--set", "equation.kind=poisson", "--set", "maps.rho_c="+k), "\n")
	require.Contains(t, notes, "maps.rho_c is not used: a poisson problem has no heat capacity")
	require.Contains(t, notes, "material[0].rho_c is not used")
	_, err = Load("", []string{"equation.kind=poisson", `material=[{region="ball", center=[0.5,0.5], radius=0.2, k=0}]`})
	require.NoError(t, err)
}

// Each mistake in the media keys is an *Error naming its source, the key
// (a material by its index from 0) and the bad value.
func TestMediaKeysRefused(t *testing.T) {
	wrong := npyFile(t, "ground-k.npy", 64, 32, nil)
	ball := `region = "ball"` + "\ncenter = [0.5, 0.5]\nradius = 0.1\n"
	for _, c := range []struct {
		name string
		file string   // the text after [grid] shape = [64, 64]
		sets []string // --set, after the file
		key  string
		want string // "FILE" stands for the config file's path
	}{
		{"unknown key", "[[material]]\n" + ball + "[[material]]\n" + ball + "radus = 0.2\n", nil, "",
			`FILE: unknown key "material[1].radus" (did you mean "material[1].radius"?)`},
		{"wrong type", "[[material]]\n" + `region = "ball"` + "\nradius = \"big\"\n", nil, "material[0].radius", `FILE: material[0].radius: expected a number (got "big")`},
		{"a table, not an array", "[material]\nk = 3.0\n", nil, "material", "FILE: material: expected an array of tables (got a table)"},
		{"--set into the array", "", []string{"material.k=3"}, "material", "--set material.k=3: material: expected an array of tables (got a table)"},
		{"no region", "[[material]]\nk = 1.0\n", nil, "material[0].region",
			`FILE: material[0].region: is missing: every material needs a region, "box", "ball", "cylinder" or "half-space"`},
		{"unknown region", "[[material]]\nname = \"x\"\nregion = \"sphere\"\n", nil, "material[0].region",
			`FILE: material[0].region: must be "box", "ball", "cylinder" or "half-space" (got "sphere"), in material "x"`},
		{"coordinates", "[[material]]\n" + ball + "[[material]]\nregion = \"ball\"\ncenter = [0.5, 0.5, 0.5]\nradius = 0.1\n", nil, "material[1].center",
			"FILE: material[1].center: a ball needs center with one coordinate per axis, 2 for this grid, C order (got [0.5 0.5 0.5])"},
		{"radius", "[[material]]\nname = \"copper\"\nregion = \"ball\"\ncenter = [0.5, 0.5]\nradius = -1.0\n", nil, "material[0].radius",
			`FILE: material[0].radius: must be finite and > 0 (got -1), in material "copper"`},
		{"unused key", "[[material]]\nregion = \"box\"\nlo = [0.0, 0.0]\nhi = [1.0, 1.0]\nradius = 0.5\n", nil, "material[0].radius",
			"FILE: material[0].radius: a box takes lo, hi; radius 0.5 would be ignored"},
		{"negative k", "[[material]]\n" + ball + "k = -2.0\n", nil, "material[0].k", "FILE: material[0].k: must be finite and >= 0; 0 is an insulating hole (got -2)"},
		{"nan k", "[[material]]\n" + ball + "k = nan\n", nil, "material[0].k", "FILE: material[0].k: must be a finite number (got nan)"},
		{"inf center", "[[material]]\nregion = \"ball\"\ncenter = [0.5, inf]\nradius = 0.1\n", nil, "material[0].center", "FILE: material[0].center: must hold finite numbers (got [0.5 inf])"},
		{"zero rho_c", "[[material]]\n" + ball + "rho_c = 0.0\n", nil, "material[0].rho_c",
			"FILE: material[0].rho_c: must be > 0; leave it out to keep the rho_c that lies under (got 0)"},
		{"nan fixed", "[[material]]\n" + ball + "fixed = nan\n", nil, "material[0].fixed", "FILE: material[0].fixed: must be a finite number (got nan)"},
		{"names", "[[material]]\nname = \"a\"\n" + ball + "[[material]]\nname = \"a\"\n" + ball, nil, "material[1].name",
			`FILE: material[1].name: "a" is also the name of material[0]; names must be unique, in material "a"`},
		{"cylinder in 2D", "[[material]]\nregion = \"cylinder\"\ncenter = [0.5, 0.5]\nradius = 0.1\n", nil, "material[0].region",
			"FILE: material[0].region: a cylinder needs a 3D grid; in 2D a disc is a ball"},
		{"--set material", "", []string{`material=[{region="ball", center=[0.5,0.5], radius=0}]`}, "material[0].radius",
			`--set material=[{region="ball", center=[0.5,0.5], radius=0}]: material[0].radius: must be finite and > 0 (got 0)`},
		{"map shape", "[maps]\nk = " + fmt.Sprintf("%q", wrong) + "\n", nil, "maps.k", "FILE: maps.k: " + wrong + " has shape [64 32], the grid is [64 64]"},
		{"map shape by --set", "", []string{"maps.k=" + wrong}, "maps.k", "--set maps.k=" + wrong + ": maps.k: " + wrong + " has shape [64 32], the grid is [64 64]"},
		{"no map", "[maps]\nk = \"nowhere/ground-k.npy\"\n", nil, "maps.k", "FILE: maps.k: nowhere/ground-k.npy: no such file or folder"},
		{"map path a number", "[maps]\nk = 5\n", nil, "maps.k", `FILE: maps.k: must be a string (got 5); quote it, "5", to mean the text`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, "m.toml", "[grid]\nshape = [64, 64]\n"+c.file)
			_, err := Load(p, c.sets)
			var ce *Error
			require.ErrorAs(t, err, &ce)
			require.Equal(t, c.key, ce.Key, "%v", err)
			require.EqualError(t, err, strings.ReplaceAll(c.want, "FILE", p))
		})
	}
}

// A config with media survives what a run does with its config: the dry
// run's TOML and the checkpoint's JSON load back to it, deep-equal; a
// restart does not read the maps again (the checkpoint holds the media)
// and may not change them.
func TestMediaRoundTrips(t *testing.T) {
	k := npyFile(t, "k.npy", 32, 32, nil)
	c, err := Load("", []string{"grid.shape=[32,32]", "maps.k=" + k,
		`material=[{name="a", region="box", lo=[0,0], hi=[0.5,1], k=0}, {region="ball", center=[0.5,0.5], radius=0.2, rho_c=2, fixed=1.5}]`})
	require.NoError(t, err)

	var text bytes.Buffer
	require.NoError(t, toml.NewEncoder(&text).Encode(c))
	_, tables, ok := strings.Cut(text.String(), "[[material]]")
	require.True(t, ok)
	require.NotContains(t, tables, "radius = 0.0", "keys a region does not take are left out")
	require.NotContains(t, tables, "axis = 0")
	again, err := Load(writeFile(t, "dry.toml", text.String()), nil)
	require.NoError(t, err)
	require.Equal(t, c, again)

	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := AddFlags(fs)
	require.NoError(t, fs.Parse(nil))
	back, err := f.ResolveRestart(c, "checkpoint step-00000010")
	require.NoError(t, err)
	require.Equal(t, c, back, "through the checkpoint's JSON")

	// A restart takes its media from the checkpoint: the map file may be
	// gone (a fresh run is refused).
	require.NoError(t, os.Remove(k))
	back, err = f.ResolveRestart(c, "checkpoint step-00000010")
	require.NoError(t, err)
	require.Equal(t, c, back)
	again = &Config{}
	*again = *c
	require.ErrorContains(t, again.Validate(), "maps.k: "+k+": no such file or folder")

	fs = pflag.NewFlagSet("run", pflag.ContinueOnError)
	f = AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--set", "material=[]"}))
	_, err = f.ResolveRestart(c, "checkpoint step-00000010")
	require.ErrorContains(t, err, "--set material=[]: material: is [")
	require.ErrorContains(t, err, "a restart continues the same problem, so it cannot change material")
}
