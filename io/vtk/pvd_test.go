package vtk

import (
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// pvdDoc is a .pvd as encoding/xml reads it.
type pvdDoc struct {
	Type      string `xml:"type,attr"`
	Version   string `xml:"version,attr"`
	ByteOrder string `xml:"byte_order,attr"`
	DataSets  []struct {
		Timestep string `xml:"timestep,attr"`
		Group    string `xml:"group,attr"`
		Part     string `xml:"part,attr"`
		File     string `xml:"file,attr"`
	} `xml:"Collection>DataSet"`
}

// readPVD returns the (timestep, file) pairs of a .pvd, in file order.
func readPVD(t *testing.T, path string) [][2]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc pvdDoc
	require.NoError(t, xml.Unmarshal(raw, &doc))
	require.Equal(t, "Collection", doc.Type)
	require.Equal(t, "0.1", doc.Version)
	require.Equal(t, "LittleEndian", doc.ByteOrder)
	var got [][2]string
	for _, d := range doc.DataSets {
		require.Equal(t, "0", d.Part)
		got = append(got, [2]string{d.Timestep, d.File})
	}
	return got
}

func TestSeriesListsSnapshotsInOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "snapshots.pvd")
	s := NewSeries(path)
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is written before the first Add")

	// Snapshot paths as the writer opened them; the .pvd stores them
	// relative to itself.
	require.NoError(t, s.Add(0, filepath.Join(dir, "u-000000.vti")))
	require.Equal(t, [][2]string{{"0", "u-000000.vti"}}, readPVD(t, path), "complete after every Add")
	require.NoError(t, s.Add(0.0125, filepath.Join(dir, "step-100", "u.pvti")))
	require.NoError(t, s.Add(0.025, filepath.Join(dir, "a&b.vti")))
	want := [][2]string{{"0", "u-000000.vti"}, {"0.0125", "step-100/u.pvti"}, {"0.025", "a&b.vti"}}
	require.Equal(t, want, readPVD(t, path))
	require.Equal(t, []Entry{{0, "u-000000.vti"}, {0.0125, "step-100/u.pvti"}, {0.025, "a&b.vti"}}, s.Entries())

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary files left")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// A restarted run continues the file; a snapshot earlier than the last
	// drops the later ones, which the run writes again.
	r, err := OpenSeries(path)
	require.NoError(t, err)
	require.Equal(t, s.Entries(), r.Entries())
	require.NoError(t, r.Add(0.0125, filepath.Join(dir, "step-100", "u.pvti")))
	require.Equal(t, want[:2], readPVD(t, path))
	require.NoError(t, r.Add(0.03, filepath.Join(dir, "u-000300.vti")))
	require.Equal(t, [][2]string{{"0", "u-000000.vti"}, {"0.0125", "step-100/u.pvti"}, {"0.03", "u-000300.vti"}}, readPVD(t, path))
}

func TestSeriesRelativePathsFromWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.Mkdir("out", 0o755))
	s := NewSeries(filepath.Join("out", "snapshots.pvd"))
	// The path the snapshot was written at, from the working directory...
	require.NoError(t, s.Add(1, filepath.Join("out", "u-1.vti")))
	require.NoError(t, s.Add(2, filepath.Join("out", "step-2", "u.pvti")))
	// ...or the name relative to the .pvd.
	require.NoError(t, s.Add(3, "u-3.vti"))
	require.NoError(t, s.Add(4, filepath.Join("step-4", "u.pvti")))
	want := [][2]string{{"1", "u-1.vti"}, {"2", "step-2/u.pvti"}, {"3", "u-3.vti"}, {"4", "step-4/u.pvti"}}
	require.Equal(t, want, readPVD(t, filepath.Join(dir, "out", "snapshots.pvd")))
}

func TestSeriesRejects(t *testing.T) {
	dir := t.TempDir()
	s := NewSeries(filepath.Join(dir, "s.pvd"))
	require.ErrorContains(t, s.Add(math.NaN(), "u.vti"), "must be finite")
	require.ErrorContains(t, s.Add(1, ""), "has no file")
	require.Error(t, NewSeries(filepath.Join(dir, "missing", "s.pvd")).Add(1, "u.vti"))

	empty, err := OpenSeries(filepath.Join(dir, "none.pvd"))
	require.NoError(t, err)
	require.Empty(t, empty.Entries())
	bad := filepath.Join(dir, "bad.pvd")
	require.NoError(t, os.WriteFile(bad, []byte(`<VTKFile type="ImageData"></VTKFile>`), 0o644))
	_, err = OpenSeries(bad)
	require.ErrorContains(t, err, `VTKFile type is "ImageData"`)
}
