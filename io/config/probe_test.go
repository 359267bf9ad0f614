package config

import (
	"bytes"
	"errors"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// Probes load from [[output.probe]] tables and from the inline array
// alike; probe_every defaults to 1; the dry run's TOML and the
// checkpoint's JSON load back to the same config.
func TestProbesLoadAndRoundTrip(t *testing.T) {
	file := writeFile(t, "p.toml", "[grid]\nshape = [8, 16]\nlength = [1.0, 2.0]\n"+
		"[[output.probe]]\nname = \"sensor1\"\nat = [0.5, 0.25]\n[[output.probe]]\nname = \"wall\"\nat = [1.0, 2.0]\n")
	c, err := Load(file, nil)
	require.NoError(t, err)
	require.Equal(t, []Probe{{Name: "sensor1", At: []float64{0.5, 0.25}}, {Name: "wall", At: []float64{1, 2}}}, c.Output.Probe)
	require.Equal(t, 1, c.Output.ProbeEvery)
	inline, err := Load("", []string{"grid.shape=[8,16]", "grid.length=[1.0,2.0]",
		`output.probe=[{name = "sensor1", at = [0.5, 0.25]}, {name = "wall", at = [1, 2]}]`})
	require.NoError(t, err)
	require.Equal(t, c.Output.Probe, inline.Output.Probe)

	c.Output.ProbeEvery = 5
	var text bytes.Buffer
	require.NoError(t, toml.NewEncoder(&text).Encode(c))
	require.Contains(t, text.String(), "[[output.probe]]")
	again, err := Load(writeFile(t, "dry.toml", text.String()), nil)
	require.NoError(t, err)
	require.Equal(t, c, again)

	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := AddFlags(fs)
	require.NoError(t, fs.Parse(nil))
	back, err := f.ResolveRestart(c, "checkpoint step-00000010")
	require.NoError(t, err)
	require.Equal(t, c, back, "through the checkpoint's JSON")
}

// A bad probe is an *Error naming output.probe[i] and its field, with the
// value; a point outside the domain names the domain too.
func TestProbesRefused(t *testing.T) {
	grid := []string{"grid.shape=[8,16]", "grid.length=[1.0,2.0]"}
	cases := []struct {
		set  string
		key  string
		want []string
	}{
		{`output.probe=[{name = "s", at = [0.5, 2.5]}]`, "output.probe[0].at",
			[]string{"[0.5 2.5]", `"s"`, "outside the domain [0, 1] × [0, 2]", "x = 2.5"}},
		{`output.probe=[{name = "s", at = [-0.1, 1]}]`, "output.probe[0].at", []string{"y = -0.1", "[0, 1]"}},
		{`output.probe=[{name = "a", at = [0.5, 1]}, {name = "a", at = [0.1, 1]}]`, "output.probe[1].name",
			[]string{`"a" is also the name of output.probe[0]`}},
		{`output.probe=[{name = "s", at = [0.5]}]`, "output.probe[0].at", []string{"one coordinate per axis", "[y, x]", "[0.5]"}},
		{`output.probe=[{name = "s", at = [0.5, 1, 1]}]`, "output.probe[0].at", []string{"one coordinate per axis"}},
		{`output.probe=[{name = "s"}]`, "output.probe[0].at", []string{"one coordinate per axis", "got []"}},
		{`output.probe=[{at = [0.5, 1]}]`, "output.probe[0].name", []string{"missing"}},
		{`output.probe=[{name = "a,b", at = [0.5, 1]}]`, "output.probe[0].name", []string{"comma", `"a,b"`}},
		{`output.probe=[{name = "say \"hi\"", at = [0.5, 1]}]`, "output.probe[0].name", []string{"double quote"}},
		{`output.probe=[{name = "two\nlines", at = [0.5, 1]}]`, "output.probe[0].name", []string{"one line"}},
		{`output.probe=[{name = " s", at = [0.5, 1]}]`, "output.probe[0].name", []string{"space"}},
		{`output.probe=[{name = "time", at = [0.5, 1]}]`, "output.probe[0].name", []string{"step,time"}},
		{`output.probe=[{name = "s", at = [nan, 1]}]`, "output.probe[0].at", []string{"finite", "nan"}},
		{`output.probe=[{name = "s", at = [0.5, 1], where = 1}]`, "", []string{`unknown key "output.probe[0].where"`}},
		{`output.probe_every=0`, "output.probe_every", []string{">= 1", "got 0"}},
	}
	for _, c := range cases {
		_, err := Load("", append(grid, c.set))
		var ce *Error
		require.True(t, errors.As(err, &ce), "%s: %v", c.set, err)
		require.Equal(t, c.key, ce.Key, "%s: %v", c.set, err)
		require.Contains(t, err.Error(), "--set "+c.set)
		for _, w := range c.want {
			require.Contains(t, err.Error(), w, c.set)
		}
	}
	// The faces and corners of the domain are inside.
	_, err := Load("", append(grid, `output.probe=[{name = "lo", at = [0, 0]}, {name = "hi", at = [1, 2]}]`))
	require.NoError(t, err)
}
