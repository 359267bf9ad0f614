package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/internal/imagetest"
)

// heat sweep runs every point of the product of the swept keys (the last
// fastest), three at a time, each in a folder of its own, and tabulates
// them in point order: the values, the status, the field and its sha256 —
// the same as a plain run of that point gives — and draws a figure against
// a swept key.
func TestSweep(t *testing.T) {
	out := filepath.Join(t.TempDir(), "study")
	code, stdout, errOut := heat(t, "sweep", "--out", out, "--steps", "5", "--set", "output.formats=[]", "--jobs", "3",
		"--set", "grid.shape=[[16,16],[24,24],[20,12]]", "--set", "initial.value=[1.0,2.0,4.0]",
		"--plot", "max", "--against", "initial.value")
	require.Zero(t, code, errOut)
	require.Contains(t, stdout, "table: "+filepath.Join(out, "sweep.csv"))
	require.Contains(t, stdout, "plot: "+filepath.Join(out, "sweep.png"))
	f, err := os.Open(filepath.Join(out, "sweep.csv"))
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 10)
	head := recs[0]
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, head)
		return -1
	}
	shapes, values := []string{"[16, 16]", "[24, 24]", "[20, 12]"}, []string{"1.0", "2.0", "4.0"}
	shas := map[string]bool{}
	for p, r := range recs[1:] {
		require.Equal(t, strconv.Itoa(p), r[col("point")])
		require.Equal(t, []string{shapes[p/3], values[p%3]}, []string{r[col("grid.shape")], r[col("initial.value")]})
		require.Equal(t, "completed", r[col("status")])
		require.Equal(t, "5", r[col("steps")])
		shas[r[col("sha256")]] = true
		// Each point is the plain run of its values.
		plain := t.TempDir()
		code, _, errOut = heat(t, "run", "-q", "--out", plain, "--steps", "5", "--set", "output.formats=[]",
			"--set", "grid.shape="+r[col("grid.shape")], "--set", "initial.value="+r[col("initial.value")])
		require.Zero(t, code, errOut)
		require.Equal(t, readReport(t, filepath.Join(plain, "report.json")).Field.SHA256, r[col("sha256")], "point %d", p)
	}
	require.Len(t, shas, 9, "every point its own field")
	img := imagetest.DecodePNG(t, filepath.Join(out, "sweep.png"))
	require.Greater(t, img.Bounds().Dx(), 400)

	// Refusals, before any run: a table there, nothing swept, a point
	// whose config is wrong, a figure the table has not, a key of words
	// to draw against, too many jobs.
	code, _, errOut = heat(t, "sweep", "--out", out, "--steps", "5", "--set", "initial.value=[1.0,2.0]")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "holds a study already")
	code, _, errOut = heat(t, "sweep", "--out", filepath.Join(t.TempDir(), "s"), "--set", "initial.value=1.0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no key to sweep")
	bad := filepath.Join(t.TempDir(), "bad")
	code, _, errOut = heat(t, "sweep", "--out", bad, "--steps", "5", "--set", "grid.shape=[[16,16],[0,16]]")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "sweep point 1 ([0, 16])")
	require.Contains(t, errOut, "grid.shape")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "initial.value=[1.0,2.0]", "--plot", "maxx"}, "--plot maxx: not a figure of the table"},
		{[]string{"--set", "initial.value=[1.0,2.0]", "--plot", "probe_nowhere"}, "--plot probe_nowhere: not a figure"},
		{[]string{"--set", "grid.shape=[[16,16],[24,24]]", "--plot", "max"}, "whose value [16, 16] is not a number"},
		{[]string{"--set", "initial.value=[1.0,2.0]", "--plot", "max", "--against", "grid.shape"}, "--against grid.shape: not a swept key (swept: initial.value)"},
		{[]string{"--set", "initial.value=[1.0,2.0]", "--jobs", "1000"}, "--jobs 1000: give 1 to 256"},
	} {
		code, _, errOut = heat(t, append([]string{"sweep", "--out", bad, "--steps", "5"}, c.args...)...)
		require.Equal(t, 2, code, c.args)
		require.Contains(t, errOut, c.want)
	}
	require.NoDirExists(t, bad)
}

// A study's folder and table are refused where heat would replace or
// follow what it did not write — a link or a FIFO as sweep.csv (even with
// --overwrite), a link as the folder, the root folder — and a folder
// holding the user's own files keeps them.
func TestSweepFolders(t *testing.T) {
	args := func(out string, extra ...string) []string {
		return append([]string{"sweep", "-q", "--out", out, "--steps", "2", "--set", "output.formats=[]", "--set", "grid.shape=[16,16]",
			"--set", "initial.value=[1.0,2.0]"}, extra...)
	}
	base := t.TempDir()
	linked := filepath.Join(base, "linked")
	require.NoError(t, os.MkdirAll(linked, 0o755))
	target := filepath.Join(base, "mine.csv")
	require.NoError(t, os.WriteFile(target, []byte("my data\n"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(linked, "sweep.csv")))
	code, _, errOut := heat(t, args(linked, "--overwrite")...)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not a regular file")
	data, _ := os.ReadFile(target)
	require.Equal(t, "my data\n", string(data))

	// The plot's file likewise: a link there is refused, its target kept.
	plotLink := filepath.Join(base, "plotlink")
	require.NoError(t, os.MkdirAll(plotLink, 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(plotLink, "sweep.png")))
	code, _, errOut = heat(t, args(plotLink, "--overwrite", "--plot", "max")...)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "sweep.png is not a regular file")
	st, err := os.Lstat(filepath.Join(plotLink, "sweep.png"))
	require.NoError(t, err)
	require.NotZero(t, st.Mode()&os.ModeSymlink, "the link is still there")
	data, _ = os.ReadFile(target)
	require.Equal(t, "my data\n", string(data))

	fifo := filepath.Join(base, "fifo")
	require.NoError(t, os.MkdirAll(fifo, 0o755))
	mkfifo(t, filepath.Join(fifo, "sweep.csv"))
	code, _, errOut = heat(t, args(fifo)...)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not a regular file")

	require.NoError(t, os.Symlink(linked, filepath.Join(base, "dirlink")))
	code, _, errOut = heat(t, args(filepath.Join(base, "dirlink"))...)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not a folder")

	code, _, errOut = heat(t, args("/")...)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "root folder")

	own := filepath.Join(base, "own")
	require.NoError(t, os.MkdirAll(own, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(own, "notes.txt"), []byte("keep\n"), 0o644))
	code, _, errOut = heat(t, args(own)...)
	require.Zero(t, code, errOut)
	data, _ = os.ReadFile(filepath.Join(own, "notes.txt"))
	require.Equal(t, "keep\n", string(data))
	require.FileExists(t, filepath.Join(own, "sweep.csv"))
}
