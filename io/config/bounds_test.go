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
