package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/internal/team"
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
// probes 25 s, 2,000 materials 52 s). Loading twice the tables allocates
// twice as much, not four times: a quadratic step that allocates is
// caught at any size. 4,000 probes and 2,000 materials load in 0.1 s (1
// to 2 under -race); the quadratic check took some 100 s for them.
func TestManyTablesLoadInLinearTime(t *testing.T) {
	small, large := writeFile(t, "small.toml", manyTables(250, 125)), writeFile(t, "large.toml", manyTables(500, 250))
	allocs := func(file string) float64 {
		return testing.AllocsPerRun(1, func() {
			if _, err := Load(file, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	a, b := allocs(small), allocs(large)
	require.Less(t, b/a, 2.5, "allocations for 375 tables %.0f, for 750 %.0f", a, b)

	c, err := Load(writeFile(t, "many.toml", manyTables(4000, 2000)), nil)
	require.NoError(t, err)
	require.Len(t, c.Output.Probe, 4000)
	require.Len(t, c.Material, 2000)
	require.Equal(t, "p3999", c.Output.Probe[3999].Name)
	require.Equal(t, "m1999", c.Material[1999].Name)

	// The check is still made of every table, the last one included.
	_, err = Load(writeFile(t, "bad.toml", manyTables(300, 0)+"[[output.probe]]\nname = \"x\"\nat = [0.5, 0.5]\nnam = 1\n"), nil)
	require.ErrorContains(t, err, `unknown key "output.probe[300].nam" (did you mean "output.probe[300].name"?)`)
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

// Threads above MaxThreads are refused, naming the key, the flag, the
// value and the limit: --threads 65537 hung the run for good (the team
// packs part indices in 16 bits) and 32,768 took 16 s for 10 steps of 64².
func TestThreadsCapped(t *testing.T) {
	require.Less(t, MaxThreads, team.MaxWorkers)
	_, err := resolve(t, "--threads", "65537")
	require.EqualError(t, err, "--threads: parallel.threads: must be at most 4096 worker threads a rank (got 65537); 0 means cores / ranks")
	_, err = resolve(t, "--set", "parallel.threads=4097")
	require.ErrorContains(t, err, "--set parallel.threads=4097: parallel.threads: must be at most 4096")
	c, err := resolve(t, "--threads", "4096")
	require.NoError(t, err)
	require.Equal(t, 4096, c.Parallel.Threads)
}

// A grid whose cell count overflows, or passes MaxCells, is refused
// naming grid.shape and the count: [9223372036854775807, 1] estimated a
// negative memory and [2097152, 2097152, 2097152] (2^63 cells) 1.9 GiB,
// then panicked in makeslice.
func TestGridCellsCapped(t *testing.T) {
	for _, c := range []struct{ shape, want string }{
		{"[9223372036854775807, 1]", "--set grid.shape=[9223372036854775807, 1]: grid.shape: [9223372036854775807 1] has 9223372036854775807 cells, more than the 1099511627776 (2^40) a grid may have"},
		{"[2097152, 2097152, 2097152]", "grid.shape: [2097152 2097152 2097152] has more cells than a 64-bit integer holds, more than the 1099511627776 (2^40) a grid may have"},
		{"[1048577, 1048576]", "grid.shape: [1048577 1048576] has 1099512676352 cells"},
	} {
		_, err := Load("", []string{"grid.shape=" + c.shape})
		var ce *Error
		require.ErrorAs(t, err, &ce, c.shape)
		require.Equal(t, "grid.shape", ce.Key)
		require.ErrorContains(t, err, c.want)
	}
	// The cap itself is a valid shape as far as the config goes.
	_, err := Load("", []string{"grid.shape=[1048576, 1048576]", "parallel.ranks=1"})
	require.NoError(t, err)
}

// Cells whose square underflows to 0 or overflows are refused naming
// grid.length and the cell size: [1e-300, 1] and [1e300, 1e300] ran with
// dt = +Inf and ended without a report.
func TestGridCellSizeRefused(t *testing.T) {
	for _, c := range []struct{ length, want string }{
		{"[1e-300, 1.0]", "grid.length: 1e-300 over 512 cells makes cells of 1.953125e-303 along y, whose square is 0 in double precision"},
		{"[1e300, 1e300]", "grid.length: 1e+300 over 512 cells makes cells of 1.953125e+297 along y, whose square overflows"},
		{"[1.0, 1e-160]", "cells of 1.953125e-163 along x, whose square is 0 in double precision"},
		{"[1.0, 1e-153]", "cells of 1.953125e-156 along x, whose 1/h² overflows"},
		// Each axis fine, their sum 1/hy² + 1/hx² too large.
		{"[6e-152, 6e-152]", "grid.length: [6e-152 6e-152] makes cells of [1.171875e-154 1.171875e-154], whose explicit stability limit 1/(2·Σ1/h²) is 0, not a positive number"},
	} {
		_, err := Load("", []string{"grid.length=" + c.length})
		var ce *Error
		require.ErrorAs(t, err, &ce, c.length)
		require.Equal(t, "grid.length", ce.Key)
		require.ErrorContains(t, err, c.want)
	}
	_, err := Load("", []string{"grid.length=[1e-100, 1e100]", "equation.dt=0"})
	require.NoError(t, err)
}

// The sign and finiteness rules of a key hold for expressions that are
// constant and for every row of a table, as for numbers: a Robin h of
// "-1" or a table with a negative row ran to exit 0 with an unphysical
// field; a face value of "0/0" or "1/0" ended only at the first check,
// "the solution is no longer finite".
func TestValueRulesHoldForExpressionsAndTables(t *testing.T) {
	negative := writeFile(t, "h.csv", "t,h\n0,25\n# night\n3600,-5\n7200,-5\n")
	robin := []string{"boundary.x_hi={kind = \"robin\", value = 293.0}", "boundary.value=0.0"}
	for _, c := range []struct {
		sets      []string
		key, want string
	}{
		{[]string{`boundary.h="-1"`}, "boundary.h", `"-1" is -1: a heat-transfer coefficient must not be negative`},
		{[]string{`boundary.h="2 - 3*1"`}, "boundary.h", `"2 - 3*1" is -1`},
		{[]string{`boundary.x_hi.h={table = "` + negative + `"}`}, "boundary.x_hi.h",
			negative + " line 4: the value at t = 3600 is -5: a heat-transfer coefficient must not be negative"},
		{[]string{`boundary.h="0/0"`}, "boundary.h", `"0/0" evaluates to nan everywhere, not a finite number`},
		{[]string{`boundary.x_hi.value="1/0"`, "boundary.h=1.0"}, "boundary.x_hi.value", `"1/0" evaluates to inf everywhere`},
	} {
		_, err := Load("", append(robin[:len(robin):len(robin)], c.sets...))
		var ce *Error
		require.ErrorAs(t, err, &ce, "%v", c.sets)
		require.Equal(t, c.key, ce.Key, "%v", err)
		require.ErrorContains(t, err, c.want)
	}
	for _, c := range []struct {
		sets      []string
		key, want string
	}{
		{[]string{`boundary.value="0/0"`}, "boundary.value", `"0/0" evaluates to nan everywhere`},
		{[]string{`boundary.value="-1/0"`}, "boundary.value", `"-1/0" evaluates to -inf everywhere`},
		{[]string{`source.kind="expr"`, `source.expr="log(0)"`}, "source.expr", `"log(0)" evaluates to -inf everywhere`},
		{[]string{`initial.kind="expr"`, `initial.expr="sqrt(-1)"`}, "initial.expr", `"sqrt(-1)" evaluates to nan everywhere`},
		{[]string{`source.kind="constant"`, `source.value=1.0`, `source.amplitude="1/0"`}, "source.amplitude", `"1/0" evaluates to inf everywhere`},
	} {
		_, err := Load("", c.sets)
		var ce *Error
		require.ErrorAs(t, err, &ce, "%v", c.sets)
		require.Equal(t, c.key, ce.Key, "%v", err)
		require.ErrorContains(t, err, c.want)
	}
	// A negative face value is fine (a Dirichlet temperature, an outward
	// flux), and so is an h that varies: it is checked where evaluated.
	_, err := Load("", append(robin, `boundary.h="t > 0.002 ? 5 : 1"`, `boundary.x_hi.value="-3"`))
	require.NoError(t, err)
	zero := writeFile(t, "zero.csv", "0,0\n1,2\n")
	_, err = Load("", append(robin, `boundary.h={table = "`+zero+`"}`))
	require.NoError(t, err)
}
