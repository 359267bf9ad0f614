package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// manyTables is a config of probes [[output.probe]] and materials
// [[material]] tables.
func manyTables(probes, materials int) string {
	var b strings.Builder
	b.WriteString("[grid]\nshape = [64, 64]\n")
	for i := range probes {
		fmt.Fprintf(&b, "[[output.probe]]\nname = \"p%d\"\nat = [0.5, 0.5]\n", i)
	}
	for i := range materials {
		fmt.Fprintf(&b, "[[material]]\nname = \"m%d\"\nregion = \"box\"\nlo = [0.0, 0.0]\nhi = [0.5, 0.5]\nk = 2.0\n", i)
	}
	return b.String()
}

// Arrays of tables load in time linear in their length: the schema check
// took each array whole once for every key of every table in it (3,000
// probes 25 s, 2,000 materials 52 s). 10,000 probes and 5,000 materials
// load in under a second (some three under -race); the quadratic check
// took some ten minutes for them. Loading twice the tables allocates
// twice as much, not four times: a quadratic step that allocates is
// caught at any size.
func TestManyTablesLoadInLinearTime(t *testing.T) {
	small, large := writeFile(t, "small.toml", manyTables(500, 250)), writeFile(t, "large.toml", manyTables(1000, 500))
	allocs := func(file string) float64 {
		return testing.AllocsPerRun(1, func() {
			if _, err := Load(file, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	a, b := allocs(small), allocs(large)
	require.Less(t, b/a, 2.5, "allocations for 750 tables %.0f, for 1,500 %.0f", a, b)

	c, err := Load(writeFile(t, "many.toml", manyTables(10000, 5000)), nil)
	require.NoError(t, err)
	require.Len(t, c.Output.Probe, 10000)
	require.Len(t, c.Material, 5000)
	require.Equal(t, "p9999", c.Output.Probe[9999].Name)
	require.Equal(t, "m4999", c.Material[4999].Name)

	// The check is still made of every table, the last one included.
	_, err = Load(writeFile(t, "bad.toml", manyTables(3000, 0)+"[[output.probe]]\nname = \"x\"\nat = [0.5, 0.5]\nnam = 1\n"), nil)
	require.ErrorContains(t, err, `unknown key "output.probe[3000].nam" (did you mean "output.probe[3000].name"?)`)
}

// BenchmarkLoadManyTables loads 5,000 probes and 2,000 materials.
func BenchmarkLoadManyTables(b *testing.B) {
	file := writeFile(b, "many.toml", manyTables(5000, 2000))
	for b.Loop() {
		if _, err := Load(file, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// --set of an array replaces the array of the layers below whole: a new
// material took the file's fixed (a held block) and name, and a probe the
// file's name, from the file's table of the same index.
func TestSetArrayReplaces(t *testing.T) {
	file := writeFile(t, "media.toml", "[grid]\nshape = [16, 16]\n"+
		"[[material]]\nname = \"held\"\nregion = \"box\"\nlo = [0.0, 0.0]\nhi = [0.5, 0.5]\nfixed = 2.0\nk = 0.0\n"+
		"[[material]]\nregion = \"ball\"\ncenter = [0.5, 0.5]\nradius = 0.2\nk = 3.0\n"+
		"[[output.probe]]\nname = \"file\"\nat = [0.5, 0.5]\n[[output.probe]]\nname = \"second\"\nat = [0.1, 0.1]\n"+
		"[output]\nformats = [\"png\", \"vti\"]\n")
	c, err := Load(file, []string{`material=[{region = "box", lo = [0.5, 0.5], hi = [1.0, 1.0], k = 5.0}]`,
		`output.probe=[{name = "set", at = [0.25, 0.25]}]`, `output.formats=["vti"]`})
	require.NoError(t, err)
	k := 5.0
	require.Equal(t, []Material{{Region: "box", Lo: []float64{0.5, 0.5}, Hi: []float64{1, 1}, K: &k}}, c.Material)
	require.Equal(t, []Probe{{Name: "set", At: []float64{0.25, 0.25}}}, c.Output.Probe)
	require.Equal(t, []string{"vti"}, c.Output.Formats)

	// A probe without a name is refused, not named after the file's.
	_, err = Load(file, []string{`output.probe=[{at = [0.25, 0.25]}]`})
	require.ErrorContains(t, err, "output.probe[0].name: is missing")
	// An array inside an inline table replaces too; the empty array empties.
	c, err = Load(file, []string{`output={probe = [{name = "x", at = [0.5, 0.5]}]}`, "material=[]"})
	require.NoError(t, err)
	require.Equal(t, []Probe{{Name: "x", At: []float64{0.5, 0.5}}}, c.Output.Probe)
	require.Empty(t, c.Material)
}
