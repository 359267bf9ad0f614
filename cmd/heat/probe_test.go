package main

import (
	_ "image/png"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/internal/imagetest"
)

// A probe outside the domain and two probes of one name exit 2 naming the
// key and the value, before the run, with no stack trace.
func TestProbeMistakesExitTwo(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		set  string
		want []string
	}{
		{`output.probe=[{name = "s1", at = [0.5, 1.25]}]`, []string{"output.probe[0].at", "[0.5 1.25]", "outside the domain [0, 1] × [0, 1]"}},
		{`output.probe=[{name = "s1", at = [0.5, 0.5]}, {name = "s1", at = [0.2, 0.2]}]`, []string{"output.probe[1].name", `"s1"`}},
	}
	for _, c := range cases {
		out := filepath.Join(dir, "out")
		code, stderr := asBinary(t, "run", "--out", out, "--set", "grid.shape=[16,16]", "--set", c.set)
		require.Equal(t, 2, code, stderr)
		for _, w := range c.want {
			require.Contains(t, stderr, w)
		}
		require.NotContains(t, stderr, "goroutine ")
		require.NoFileExists(t, filepath.Join(out, "probes.csv"))
	}
}

// heat plot draws probes.csv beside the other plots, with the run's label
// on its value axis; a folder with probes and no diagnostics still plots
// them; heat run draws it at its end when snapshots are on.
func TestPlotProbes(t *testing.T) {
	dir := t.TempDir()
	probes := `output.probe=[{name = "centre", at = [0.5, 0.5]}, {name = "near the wall", at = [0.05, 0.5]}]`
	hot := filepath.Join(dir, "hot")
	code, _, stderr := heat(t, "run", "-q", "--out", hot, "--steps", "40", "--set", "grid.shape=[24,24]", "--set", probes,
		"--set", "output.label=T (K)", "--set", "output.probe_every=4")
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := heat(t, "plot", hot)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, filepath.Join(hot, "plots", "field.png"))
	require.Contains(t, stdout, filepath.Join(hot, "plots", "probes.png"))
	require.Contains(t, stdout, "2 probes, 11 rows of "+filepath.Join(hot, "probes.csv"))
	img := imagetest.DecodePNG(t, filepath.Join(hot, "plots", "probes.png"))
	require.Greater(t, img.Bounds().Dx(), 600)

	// The probes alone.
	alone := filepath.Join(dir, "alone")
	code, _, stderr = heat(t, "run", "-q", "--out", alone, "--steps", "10", "--set", "grid.shape=[24,24]", "--set", probes,
		"--set", "output.diagnostics_every=0")
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = heat(t, "plot", alone)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, filepath.Join(alone, "plots", "probes.png"))
	require.NoFileExists(t, filepath.Join(alone, "plots", "field.png"))
	require.NoError(t, os.WriteFile(filepath.Join(alone, "probes.csv"), []byte("step,time,a\n0,0,x\n"), 0o644))
	code, _, stderr = heat(t, "plot", alone)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, filepath.Join(alone, "probes.csv")+`:2: a "x" is not a number`)

	// At the end of a run with snapshots on, listed in its manifest.
	snap := filepath.Join(dir, "snap")
	code, stdout, stderr = heat(t, "run", "--out", snap, "--steps", "20", "--set", "grid.shape=[24,24]", "--set", probes,
		"--set", "output.snapshot_every=10", "--set", "output.progress_every=0")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, filepath.Join(snap, "plots", "probes.png"))
	imagetest.DecodePNG(t, filepath.Join(snap, "plots", "probes.png"))
	manifest, err := os.ReadFile(filepath.Join(snap, ".heat-manifest"))
	require.NoError(t, err)
	require.Contains(t, string(manifest), `{"file":"plots/probes.png"}`)
	require.Contains(t, string(manifest), `{"file":"probes.csv"}`)
	code, _, stderr = heat(t, "run", "-q", "--out", snap, "--steps", "5", "--set", "grid.shape=[24,24]", "--overwrite")
	require.Equal(t, 0, code, stderr)
	require.NoFileExists(t, filepath.Join(snap, "probes.csv"), "the replaced run's probes are gone")
	require.NoFileExists(t, filepath.Join(snap, "plots", "probes.png"))
}

// A link or a FIFO planted as probes.csv is refused before the run, never
// written through nor waited on, as for diagnostics.csv.
func TestPlantedProbesCSVRefused(t *testing.T) {
	probes := `output.probe=[{name = "c", at = [0.5, 0.5]}]`
	for _, kind := range []string{"link", "fifo"} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		require.NoError(t, os.MkdirAll(out, 0o755))
		path := filepath.Join(out, "probes.csv")
		target := filepath.Join(dir, "precious")
		require.NoError(t, os.WriteFile(target, []byte("mine"), 0o644))
		if kind == "link" {
			require.NoError(t, os.Symlink(target, path))
		} else {
			require.NoError(t, syscall.Mkfifo(path, 0o644))
		}
		start := time.Now()
		code, stderr := asBinary(t, "run", "-q", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "4", "--set", probes)
		require.Equal(t, 2, code, "%s: %s", kind, stderr)
		require.Less(t, time.Since(start), 2*time.Second, kind)
		require.Contains(t, stderr, "probes.csv")
		data, err := os.ReadFile(target)
		require.NoError(t, err)
		require.Equal(t, "mine", string(data))
	}
}
