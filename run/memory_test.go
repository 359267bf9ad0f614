package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/decomp"
	"heat/io/config"
	"heat/io/expr"
)

// The estimate counts what the inputs hold: a time table once however many
// keys name it (a 3D face's value and h), and the box each rank reads of a
// field from a file. Before, neither was counted (a 63 MB table estimated
// 12 MiB in all and peaked at 2.8 GB).
func TestEstimateCountsInputs(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "wall.csv")
	var b strings.Builder
	b.WriteString("t,value\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "%d,%d\n", i, 1+i%7)
	}
	require.NoError(t, os.WriteFile(table, []byte(b.String()), 0o644))
	field := filepath.Join(dir, "src.npy")
	saveNPY(t, field, "<f8", []int{24, 20}, oddField([]int{24, 20}))

	load := func(sets ...string) *config.Config {
		cfg, err := config.Load("", append([]string{"grid.shape=[24,20]"}, sets...))
		require.NoError(t, err)
		return cfg
	}
	g, err := decomp.New([]int{24, 20}, 3, nil, []bool{false, false})
	require.NoError(t, err)
	all := []int{0, 1, 2}

	require.Zero(t, inputBytes(load(), g, all))
	tb, err := expr.LoadTable("x", table)
	require.NoError(t, err)
	require.GreaterOrEqual(t, tb.Bytes(), int64(2*8*5000))
	tab := `{table="` + table + `"}`
	one := inputBytes(load("boundary.x_lo.value="+tab), g, all)
	require.Equal(t, tb.Bytes(), one)
	twice := inputBytes(load("boundary.x_lo.value="+tab, "boundary.x_hi.kind=robin", "boundary.x_hi.h="+tab, "boundary.x_hi.value=0"), g, all)
	require.Equal(t, one, twice, "one table, counted once")

	src := load("source.kind=file", `source.path="`+field+`"`)
	require.Equal(t, int64(8*24*20), inputBytes(src, g, all), "every rank's box of the field")
	require.Equal(t, int64(8*g.Box(1).Size()), inputBytes(src, g, []int{1}), "under MPI, this rank's")
	mem := estimateMemory(src, specOf(src, nil), g, all)
	require.Equal(t, int64(8*24*20), mem.Inputs)
	require.Contains(t, mem.String(), "inputs ")
}

// In media solved by multigrid, rank 0's process counts the algebraic
// preconditioner's hierarchy (the medium may turn out mixed); the other
// ranks' processes, and explicit steps, do not.
func TestEstimateCountsAlgebraic(t *testing.T) {
	load := func(sets ...string) *config.Config {
		cfg, err := config.Load("", append([]string{"grid.shape=[64,48]", `material=[{region = "box", lo = [0.2, 0.2], hi = [0.6, 0.5], k = 1e4}]`}, sets...))
		require.NoError(t, err)
		return cfg
	}
	g, err := decomp.New([]int{64, 48}, 2, nil, []bool{false, false})
	require.NoError(t, err)
	for _, c := range []struct {
		cfg  *config.Config
		want int64
	}{
		{load("equation.kind=poisson"), algebraicBytesPerCell * 64 * 48},
		{load("equation.scheme=backward-euler", "equation.dt=0.01"), algebraicBytesPerCell * 64 * 48},
		{load(), 0},
	} {
		spec := specOf(c.cfg, nil)
		spec.Media = mediaOf(c.cfg)
		require.NotNil(t, spec.Media)
		zero, one := estimateMemory(c.cfg, spec, g, []int{0}), estimateMemory(c.cfg, spec, g, []int{1})
		require.Equal(t, g.Box(0).Size(), g.Box(1).Size()) // the media's own bytes alike
		require.Equal(t, c.want, zero.Media-one.Media)
	}
}
