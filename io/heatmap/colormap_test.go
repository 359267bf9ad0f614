package heatmap

import (
	"image/color"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestColormapEndsMatchPublishedTables(t *testing.T) {
	// First, middle (entry 128) and last entries of matplotlib's tables, and
	// Moreland's ends and centre, rounded to 8 bits.
	cases := []struct {
		name string
		t    float64
		want color.RGBA
	}{
		{"viridis", 0, color.RGBA{68, 1, 84, 255}},
		{"viridis", 128.0 / 255, color.RGBA{33, 145, 140, 255}},
		{"viridis", 1, color.RGBA{253, 231, 37, 255}},
		{"", 1, color.RGBA{253, 231, 37, 255}},
		{"inferno", 0, color.RGBA{0, 0, 4, 255}},
		{"inferno", 1, color.RGBA{252, 255, 164, 255}},
		{"coolwarm", 0, color.RGBA{59, 76, 192, 255}},
		{"coolwarm", 0.5, color.RGBA{221, 221, 221, 255}},
		{"coolwarm", 1, color.RGBA{180, 4, 38, 255}},
	}
	for _, c := range cases {
		m := mustMap(t, c.name)
		require.Equal(t, c.want, m(c.t), "%s(%g)", c.name, c.t)
	}
}

func TestColormapClampsAndInterpolates(t *testing.T) {
	for _, name := range Cmaps() {
		m := mustMap(t, name)
		require.Equal(t, m(0), m(-3), name)
		require.Equal(t, m(1), m(7), name)
		require.Equal(t, nanColor, m(math.NaN()), name)
		// Neighbouring t give neighbouring colours: no jumps between anchors.
		prev := m(0)
		for k := 1; k <= 1024; k++ {
			c := m(float64(k) / 1024)
			for _, d := range []int{int(c.R) - int(prev.R), int(c.G) - int(prev.G), int(c.B) - int(prev.B)} {
				require.LessOrEqual(t, d*d, 9, "%s jumps at t=%g", name, float64(k)/1024)
			}
			prev = c
		}
	}
}

func TestSequentialMapsGetBrighter(t *testing.T) {
	// viridis and inferno rise monotonically in lightness; check a luma proxy.
	for _, name := range []string{"viridis", "inferno"} {
		m := mustMap(t, name)
		luma := func(c color.RGBA) float64 { return 0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B) }
		prev := -1.0
		for k := 0; k <= 32; k++ {
			l := luma(m(float64(k) / 32))
			require.Greater(t, l, prev, "%s at t=%g", name, float64(k)/32)
			prev = l
		}
	}
}

func TestColormapUnknownNameListsKnown(t *testing.T) {
	_, err := Colormap("Viridis")
	require.EqualError(t, err, `heatmap: unknown colour map "Viridis" (known: coolwarm, inferno, viridis)`)
}
