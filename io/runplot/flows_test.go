package runplot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A heat run's diagnostics.csv with its flow columns reads back into the
// rows' flows, and Write draws flows.png beside field.png; the
// old header still reads, without flows and without the plot.
func TestFlowsReadAndDrawn(t *testing.T) {
	head := strings.Join(append(Header, FlowColumns(2)...), ",")
	csv := head + "\n" +
		"0,0,0,1,0.5,0.5,0,0,-2,128,1.2,0,0\n" +
		"10,0.01,0,1,0.6,0.6,0,0,-2,9.6,0.8,0,3\n" +
		"20,0.02,0,1,0.7,0.7,0,0,-2,4.9,0.7,0,3\n"
	rows, err := Parse(strings.NewReader(csv), "d.csv")
	require.NoError(t, err)
	require.Len(t, rows, 3)
	require.Equal(t, map[string]float64{"y_lo": 0, "y_hi": -2, "x_lo": 9.6, "x_hi": 0.8, "held": 0, "source": 3}, rows[1].Q)

	dir := t.TempDir()
	paths, err := Write(dir, rows, Run{Equation: "heat"})
	require.NoError(t, err)
	require.Contains(t, paths, filepath.Join(dir, FlowFile))
	st, err := os.Stat(filepath.Join(dir, FlowFile))
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(1000))

	old, err := Parse(strings.NewReader(strings.Join(Header, ",")+"\n0,0,0,1,0.5,0.5,0\n5,0.1,0,1,0.5,0.5,0\n"), "old.csv")
	require.NoError(t, err)
	require.Nil(t, old[0].Q)
	paths, err = Write(t.TempDir(), old, Run{Equation: "heat"})
	require.NoError(t, err)
	require.Len(t, paths, 1) // field.png alone
}

// Series that are zero throughout (the faces of an insulated box, no held
// cells) are left out of the plot and its legend, and named in the title.
func TestFlowsLeaveOutZeroSeries(t *testing.T) {
	head := strings.Join(append(Header, FlowColumns(2)...), ",")
	rows, err := Parse(strings.NewReader(head+"\n"+
		"0,0,0,1,0.5,0.5,0,0,-2,0,0,0,3\n"+
		"10,0.01,0,1,0.6,0.6,0,0,-1,0,0,0,3\n"), "d.csv")
	require.NoError(t, err)
	pl, _, ok, err := FlowPlot(rows, "")
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, strings.HasSuffix(pl.Title.Text, "\nno flow throughout: y_lo, x_lo, x_hi, held"), pl.Title.Text)
}
