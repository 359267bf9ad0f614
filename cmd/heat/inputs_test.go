package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/run"
)

// A run reads its inputs before it removes or writes anything, and writes
// no run into the root or the home folder.

// inputsRun writes a 20-step run of a 24² grid into out with checkpoints
// at steps 10 and 20 and a snapshot (its plane kept as a .npy) at the end.
func inputsRun(t *testing.T, out string, extra ...string) {
	t.Helper()
	code, _, stderr := heat(t, append([]string{"run", "-q", "--out", out, "--set", "grid.shape=[24,24]", "--steps", "20",
		"--set", "checkpoint.every=10"}, extra...)...)
	require.Equal(t, 0, code, stderr)
}

// --overwrite of a run whose inputs lie among what it would remove — the
// previous run's checkpoints, its latest, its snapshot planes, the folder
// itself, or a link to any of them — is refused naming the key and the
// path, and removes nothing; an input the previous run did not write (a
// user's file in the same folder) is no reason to refuse.
func TestOverwriteKeepsItsOwnInputs(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self")
	inputsRun(t, self)
	plane := filepath.Join(self, "snapshots", "u-00000020.npy")
	require.FileExists(t, plane)
	link := filepath.Join(dir, "k-link.npy")
	require.NoError(t, os.Symlink(plane, link))
	before := dataTree(t, self)
	for _, c := range []struct{ key, path string }{
		{"initial.path", filepath.Join(self, "checkpoints", "step-00000020")},
		{"initial.path", filepath.Join(self, "checkpoints", "latest")},
		{"initial.path", filepath.Join(self, "checkpoints")},
		{"initial.path", self},
		{"maps.k", plane},
		{"maps.k", link},
		{"maps.k", filepath.Join(self, "checkpoints", "step-00000010", "u")},
		{"source.path", filepath.Join(self, "checkpoints", "step-00000010")},
	} {
		sets := []string{"--set", c.key + "=" + c.path}
		switch c.key {
		case "initial.path":
			sets = append(sets, "--set", "initial.kind=file")
		case "source.path":
			sets = append(sets, "--set", "source.kind=file")
		}
		code, _, stderr := heat(t, append([]string{"run", "-q", "--out", self, "--overwrite", "--set", "grid.shape=[24,24]", "--steps", "20",
			"--set", "checkpoint.every=10"}, sets...)...)
		require.Equal(t, 2, code, "%s = %s: %s", c.key, c.path, stderr)
		require.Contains(t, stderr, "--overwrite: "+c.key+" "+c.path+" lies in what --overwrite would remove", c.path)
		require.Equal(t, before, dataTree(t, self), "%s = %s: nothing removed", c.key, c.path)
	}

	// A map of the user's in the same folder stays: the run goes on, and
	// the user's file with it.
	mine := filepath.Join(self, "mine-k.npy")
	data, err := os.ReadFile(plane)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mine, data, 0o644))
	code, _, stderr := heat(t, "run", "-q", "--out", self, "--overwrite", "--set", "grid.shape=[24,24]", "--steps", "20",
		"--set", "maps.k="+mine)
	require.Equal(t, 0, code, stderr)
	require.FileExists(t, mine)
	require.NoDirExists(t, filepath.Join(self, "checkpoints"), "the previous run's checkpoints went, their folder with them")
}

// dataTree is every file under dir but the locks (which a run refused
// after taking them rewrites), by a digest of its bytes.
func dataTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for path, data := range snapshotTree(t, dir) {
		if base := filepath.Base(path); base != ".lock" && base != ".heat.lock" {
			files[path] = fmt.Sprintf("%x", sha256.Sum256([]byte(data)))
		}
	}
	return files
}

// --overwrite of a run that wrote checkpoints into its output folder says
// nothing of them (they were its own); what a user put beside them is
// left, and named alone.
func TestOverwriteWarnsOnlyOfForeign(t *testing.T) {
	self := t.TempDir()
	inputsRun(t, self)
	code, _, stderr := heat(t, "run", "--out", self, "--overwrite", "--set", "grid.shape=[24,24]", "--steps", "20", "--set", "checkpoint.every=10")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "left alone", "the previous run wrote everything it removed")

	notes := filepath.Join(self, "checkpoints", "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("mine"), 0o644))
	code, _, stderr = heat(t, "run", "--out", self, "--overwrite", "--set", "grid.shape=[24,24]", "--steps", "20")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "did not write: checkpoints/notes.txt\"", "only the user's file is named")
	require.FileExists(t, notes)
}

// No run writes its outputs or checkpoints into the home folder (a link
// to it included), or into / (the same check: run's own test holds that /
// is found as the root, so that a regression here never writes into the
// machine's /): exit 2 naming the key and the folder, and nothing written
// there.
func TestNoRunIntoRootOrHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	homeLink := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.Symlink(home, homeLink))
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", home}, "output.dir " + home + " is the home folder"},
		{[]string{"--out", homeLink}, "output.dir " + homeLink + " is the home folder"},
		{[]string{"--out", out, "--set", "checkpoint.dir=" + home, "--set", "checkpoint.every=1"}, "checkpoint.dir " + home + " is the home folder"},
	} {
		code, _, stderr := heat(t, append([]string{"run", "-q", "--set", "grid.shape=[16,16]", "--steps", "2"}, c.args...)...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want)
	}
	entries, err := os.ReadDir(home)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing written into the home folder")
	require.NoDirExists(t, out)
}

// A manifest cut short before it named its run (a full disk, a kill)
// blocks no later run, --overwrite included; a file of another kind under
// the manifest's name still stops the run, naming it.
func TestUnfinishedManifestDoesNotBlock(t *testing.T) {
	for _, text := range []string{"", `{"heat_manifest":1,"ru`, `{"heat_manifest":1,"run":"0123abcd`} {
		for _, overwrite := range []bool{false, true} {
			out := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(out, ".heat-manifest"), []byte(text), 0o644))
			args := []string{"run", "-q", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "2"}
			if overwrite {
				args = append(args, "--overwrite")
			}
			code, _, stderr := heat(t, args...)
			require.Equal(t, 0, code, "%q, overwrite %v: %s", text, overwrite, stderr)
			m, err := os.ReadFile(filepath.Join(out, ".heat-manifest"))
			require.NoError(t, err)
			require.Contains(t, string(m), `"run":"`+readReport(t, filepath.Join(out, "report.json")).RunID+`"`)
		}
	}
	out := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(out, ".heat-manifest"), []byte("my notes\n"), 0o644))
	code, _, stderr := heat(t, "run", "-q", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "2")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, ".heat-manifest")
}

// writeMapNPY writes a float64 .npy of shape ny×nx at path, sparse: every
// value 0 but those of set (C-order index: value).
func writeMapNPY(t *testing.T, path string, ny, nx int, set map[int64]float64) {
	t.Helper()
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", ny, nx)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	require.NoError(t, binary.Write(&b, binary.LittleEndian, uint16(len(header))))
	b.WriteString(header)
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(b.Bytes())
	require.NoError(t, err)
	require.NoError(t, f.Truncate(int64(b.Len())+8*int64(ny)*int64(nx)))
	for k, v := range set {
		var cell [8]byte
		binary.LittleEndian.PutUint64(cell[:], math.Float64bits(v))
		_, err := f.WriteAt(cell[:], int64(b.Len())+8*k)
		require.NoError(t, err)
	}
}

// The maps' values are read after the memory check: a map on a grid the
// host cannot hold is refused for its memory at once, not for a bad value
// found reading 80 GB of it (--dry-run prints without reading them); on a
// grid that fits, a bad value is the error it always was — source, key,
// file and cell — before anything is written.
func TestMapValuesReadAfterTheMemoryCheck(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge-k.npy")
	writeMapNPY(t, huge, 100000, 100000, map[int64]float64{0: -1})
	out := filepath.Join(dir, "out")
	code, _, stderr := heat(t, "run", "-q", "--out", out, "--set", "grid.shape=[100000,100000]", "--set", "maps.k="+huge)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "the run needs about")
	require.NotContains(t, stderr, "cell [0 0]")
	require.NoDirExists(t, out)
	code, stdout, stderr := heat(t, "run", "--dry-run", "--out", out, "--set", "grid.shape=[100000,100000]", "--set", "maps.k="+huge)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "values are checked when the run starts")

	small := filepath.Join(dir, "small-k.npy")
	writeMapNPY(t, small, 64, 64, map[int64]float64{3*64 + 7: -1})
	code, _, stderr = heat(t, "run", "-q", "--out", out, "--set", "grid.shape=[64,64]", "--set", "maps.k="+small)
	require.Equal(t, 2, code, stderr)
	require.Equal(t, "heat: --set maps.k="+small+": maps.k: "+small+": cell [3 7] is -1 (k must be finite and >= 0)\n", stderr)
	require.NoDirExists(t, out)
	cfg := filepath.Join(dir, "c.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[grid]\nshape = [64, 64]\n[maps]\nrho_c = \""+small+"\"\n"), 0o644))
	code, _, stderr = heat(t, "run", "-q", "--out", out, "-c", cfg)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "heat: "+cfg+": maps.rho_c: "+small+": cell [0 0] is 0 (rho_c must be finite and > 0)")
}

// A SIGTERM while the maps' values are read stops the run there: exit 143,
// nothing written.
func TestStopWhileReadingMaps(t *testing.T) {
	dir := t.TempDir()
	k := filepath.Join(dir, "k.npy")
	writeMapNPY(t, k, 64, 64, map[int64]float64{5: 1})
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(run.SignalError{Sig: syscall.SIGTERM})
	var o, e bytes.Buffer
	err := cli(ctx, []string{"run", "-q", "--out", out, "--set", "grid.shape=[64,64]", "--set", "maps.k=" + k}, &o, &e)
	require.Equal(t, 143, exitCode(err), "%v", err)
	require.ErrorContains(t, err, "stopped by SIGTERM while the map files' values were checked; nothing was written")
	require.NoDirExists(t, out)
}
