package main

import (
	"bytes"
	"image/gif"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// heat render -o picks the format by the file's extension: the SVG and the
// PDF are the files they claim to be; anything else is a usage error that
// names the file.
func TestRenderWritesEveryFormat(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := heat(t, "run", "-q", "--set", "grid.shape=[16,24]", "--set", "grid.length=[1,2]", "--steps", "3", "--out", out,
		"--set", "checkpoint.final=true", "--set", "output.formats=[]")
	require.Equal(t, 0, code, stderr)
	for _, c := range []struct{ name, magic string }{{"f.svg", "<?xml"}, {"f.pdf", "%PDF-"}, {"F.PNG", "\x89PNG"}} {
		path := filepath.Join(out, c.name)
		code, stdout, stderr := heat(t, "render", out, "-o", path, "--cmap", "coolwarm")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, path)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, []byte(c.magic)), "%s starts %q", c.name, data[:min(len(data), 8)])
	}
	code, _, stderr = heat(t, "render", out, "-o", filepath.Join(out, "f.jpg"))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `f.jpg: unknown image format ".jpg"`)
	require.NotContains(t, stderr, "goroutine")
}

// Snapshots in SVG (output.image_format) keep their planes too, and the
// movie of a run has a frame per snapshot.
func TestRenderMovieOfARun(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := heat(t, "run", "-q", "--set", "grid.shape=[20,30]", "--steps", "12", "--ranks", "2", "--out", out,
		"--set", "output.snapshot_every=4", "--set", `output.image_format="svg"`, "--set", `output.label="T (K)"`)
	require.Equal(t, 0, code, stderr)
	snaps, err := filepath.Glob(filepath.Join(out, "snapshots", "u-*.svg"))
	require.NoError(t, err)
	require.Len(t, snaps, 4, "steps 0, 4, 8, 12")
	svg, err := os.ReadFile(snaps[0])
	require.NoError(t, err)
	require.Contains(t, string(svg), "T (K)")
	planes, err := filepath.Glob(filepath.Join(out, "snapshots", "u-*.npy"))
	require.NoError(t, err)
	require.Len(t, planes, len(snaps))

	movie := filepath.Join(out, "run.gif")
	code, stdout, stderr := heat(t, "render", "--movie", filepath.Join(out, "snapshots"), "-o", movie)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "4 frames, steps 0 to 12")
	data, err := os.ReadFile(movie)
	require.NoError(t, err)
	g, err := gif.DecodeAll(bytes.NewReader(data))
	require.NoError(t, err)
	require.Len(t, g.Image, len(snaps))

	code, _, stderr = heat(t, "render", "--movie", out, "-o", filepath.Join(out, "run.png"))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "a movie is a GIF")
	empty := t.TempDir()
	code, _, stderr = heat(t, "render", "--movie", empty)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "no snapshot planes (u-NNNNNNNN.npy) in "+empty)
	code, _, stderr = heat(t, "render", "--movie", out, "--line", "y=0.5")
	require.Equal(t, 2, code)
	require.True(t, strings.Contains(stderr, "--movie and --line"), stderr)
}

// A render of the final checkpoint is the final snapshot, byte for byte,
// whatever the picture: Poisson's title (iteration and residual), a 3D cut
// with its own axes and lengths, the run's colour map, label and image
// size, an SVG.
func TestRenderEqualsSnapshotForEveryKindOfPicture(t *testing.T) {
	cases := []struct {
		name string
		args []string
		snap string // the final snapshot, under snapshots/
		out  string // what to render to
	}{
		{"poisson", []string{"-c", "poisson-2d", "--set", "grid.shape=[48,32]", "--set", "grid.length=[1.5,1]"}, "", "r.png"},
		{"3D cut", []string{"--set", "grid.shape=[10,12,14]", "--set", "grid.length=[1,2,3]", "--steps", "4", "--set", "output.slice=y=mid",
			"--set", "output.cmap=inferno", "--set", `output.label="T (K)"`, "--set", "output.image_size=20"}, "u-00000004.png", "r.png"},
		{"svg", []string{"--set", "grid.shape=[12,20]", "--steps", "3", "--set", `output.image_format="svg"`}, "u-00000003.svg", "r.svg"},
	}
	for _, c := range cases {
		out := t.TempDir()
		args := append([]string{"run", "-q", "--out", out, "--set", "checkpoint.final=true", "--ranks", "2"}, c.args...)
		code, _, stderr := heat(t, args...)
		require.Equal(t, 0, code, "%s: %s", c.name, stderr)
		snap := c.snap
		if snap == "" {
			files, err := filepath.Glob(filepath.Join(out, "snapshots", "u-*.png"))
			require.NoError(t, err)
			require.NotEmpty(t, files)
			snap = filepath.Base(files[len(files)-1])
		}
		img := filepath.Join(out, c.out)
		code, _, stderr = heat(t, "render", out, "-o", img)
		require.Equal(t, 0, code, "%s: %s", c.name, stderr)
		want, err := os.ReadFile(filepath.Join(out, "snapshots", snap))
		require.NoError(t, err)
		got, err := os.ReadFile(img)
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "%s: the render of the final checkpoint differs from %s", c.name, snap)
	}
}

// heat render --field draws a checkpoint's media (k over 6 decades on a
// log scale); a field it does not know, or one the checkpoint does not
// hold, exits 2 naming it and what the checkpoint holds.
func TestRenderMediaField(t *testing.T) {
	dir := mediaCheckpoint(t)
	out := t.TempDir()
	for _, c := range []struct{ field, says string }{
		{"k", "k (log scale) of 24x20 at step 7"}, {"rho_c", "rho_c of 24x20 at step 7"},
		{"mask", "mask of 24x20 at step 7"}, {"u", "the field of 24x20 at step 7"},
	} {
		path := filepath.Join(out, c.field+".png")
		code, stdout, stderr := heat(t, "render", dir, "--field", c.field, "-o", path)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, path+": "+c.says+"\n", stdout)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, []byte("\x89PNG")))
	}
	code, stdout, stderr := heat(t, "render", dir, "--field", "k")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, dir+"-k.png: ")

	code, _, stderr = heat(t, "render", dir, "--field", "T")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "render: --field T: not a field heat draws (u, k, rho_c, mask); checkpoint "+dir+" holds u, k, rho_c, mask")
	require.NotContains(t, stderr, "goroutine")
	code, _, stderr = heat(t, "render", dir, "--field", "k", "--line", "y=0.5")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--field k draws a checkpoint's picture")

	uniform := t.TempDir()
	code, _, stderr = heat(t, "run", "-q", "--set", "grid.shape=[16,24]", "--steps", "3", "--out", uniform,
		"--set", "checkpoint.final=true", "--set", "output.formats=[]")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = heat(t, "render", uniform, "--field", "k")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "render: --field k: checkpoint ")
	require.Contains(t, stderr, "holds no k (it holds u)")
}
