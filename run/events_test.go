package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/io/config"
)

// The events steps land on: run.events, the knots of a face's time table
// inside the run, a source's switch found in its expression, the probe
// times (also the pauses) and t_end last, sorted once each; the switches
// among them; a switch that cannot be found and a table too long to follow
// knot by knot are told.
func TestAdaptiveEvents(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "wall.csv")
	require.NoError(t, os.WriteFile(table, []byte("t,value\n0,1\n0.3,2\n0.7,2\n1.5,0\n"), 0o644))
	load := func(sets ...string) *config.Config {
		base := []string{"grid.shape=[16,16]", "equation.scheme=backward-euler", `equation.dt="auto"`, "run.t_end=1.0",
			`output.probe=[{name = "p", at = [0.5, 0.5]}]`}
		cfg, err := config.Load("", append(base, sets...))
		require.NoError(t, err)
		return cfg
	}
	a, notes, err := adaptiveOf(load("run.events=[0.5, 0.3]", `boundary.x_lo.value={table="`+table+`"}`,
		"source.kind=expr", `source.expr="t >= 0.45 ? 1 : 0"`, "output.probe_dt=0.25"))
	require.NoError(t, err)
	require.Empty(t, notes)
	require.Equal(t, []float64{0.25, 0.3, 0.45, 0.5, 0.7, 0.75, 1}, a.Events)
	require.Equal(t, []float64{0.25, 0.5, 0.75}, a.Pauses)
	// The forcing may jump at run.events and the expression's switch, not
	// at the table's knots (linear between them) nor the probe times.
	require.Equal(t, []float64{0.3, 0.45, 0.5}, a.Switches)
	require.Equal(t, 1e-4, a.RTol)
	require.Equal(t, 1e-4, a.ATol)

	_, notes, err = adaptiveOf(load("source.kind=expr", `source.expr="floor(4*t) > 1 ? 1 : 0"`))
	require.NoError(t, err)
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], `source.expr = "floor(4*t) > 1 ? 1 : 0" reads t in a way whose switches heat cannot find`)

	var b strings.Builder
	b.WriteString("t,value\n")
	for i := range maxTableKnots + 3 { // 10001 rows inside (0, 1)
		fmt.Fprintf(&b, "%g,%d\n", float64(i)/float64(maxTableKnots+2), i%3)
	}
	long := filepath.Join(dir, "long.csv")
	require.NoError(t, os.WriteFile(long, []byte(b.String()), 0o644))
	a, notes, err = adaptiveOf(load(`boundary.y_hi.value={table="` + long + `"}`))
	require.NoError(t, err)
	require.Equal(t, []float64{1}, a.Events, "a measured table's knots are left to the error control")
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "10001 rows inside the run, more than the 10000 steps land on")

	// Times closer than a millionth of dt_min are one event; t_end stays.
	a, _, err = adaptiveOf(load("equation.dt_min=1e-3", "run.events=[0.5, 0.5000000005, 0.9999999995]"))
	require.NoError(t, err)
	require.Equal(t, []float64{0.5, 1}, a.Events)

	a, _, err = adaptiveOf(load(`equation.dt=0.1`))
	require.NoError(t, err)
	require.Nil(t, a, "fixed steps")
}
