//go:build unix

package media

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"heat/field"

	"github.com/stretchr/testify/require"
)

// A FIFO or a device in place of a map is refused at once, saying what is
// there, without blocking on the FIFO; so is a link to one, naming the
// link.
func TestNPYNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	grid := []int{4, 4}
	fifo := filepath.Join(dir, "fifo.npy")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	toFIFO := filepath.Join(dir, "to-fifo.npy")
	require.NoError(t, os.Symlink("fifo.npy", toFIFO))
	toDev := filepath.Join(dir, "to-dev.npy")
	require.NoError(t, os.Symlink("/dev/null", toDev))
	done := make(chan error, 1)
	go func() {
		for _, c := range []struct{ path, want string }{
			{fifo, fifo + " is a named pipe (FIFO)"},
			{"/dev/null", "/dev/null is a character device"},
			{toFIFO, toFIFO + " is a symbolic link to fifo.npy, which is a named pipe (FIFO): an input may be a link to a regular file only"},
			{toDev, toDev + " is a symbolic link to /dev/null, which is a character device"},
		} {
			err := (&Spec{Shape: grid, KMap: c.path}).Check()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				done <- &wrongError{c.want, err}
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a map check blocked")
	}
}

// wrongError is a check that did not fail as it should have.
type wrongError struct {
	want string
	got  error
}

func (e *wrongError) Error() string {
	if e.got == nil {
		return "no error; want one containing " + e.want
	}
	return e.got.Error() + "; want one containing " + e.want
}

// Inputs may be links to regular files, followed once (git-annex and DVC
// keep data so): a link to a good .npy beside it reads as that file. A
// link to a folder (a Zarr array, a checkpoint), to another link or to
// nothing is refused naming the link; and nothing inside a Zarr folder is
// reached through a link — a chunk folder or a chunk file that links out
// of the array is refused, naming it, instead of reading what lies
// outside.
func TestInputLinks(t *testing.T) {
	dir := t.TempDir()
	shape := []int{8, 8}
	writeNPY(t, dir, "real.npy", "<f8", shape, nil)
	link := filepath.Join(dir, "k.npy")
	require.NoError(t, os.Symlink("real.npy", link))
	s := &Spec{Shape: shape, KMap: link}
	require.NoError(t, s.Check())
	c, err := s.Fill([]int{0, 0}, shape)
	require.NoError(t, err)
	require.Equal(t, fieldValues(shape), c.K)
	got, err := ReadField("initial.path", link, shape, []int{2, 0}, []int{5, 8})
	require.NoError(t, err)
	require.Equal(t, sliceOf(fieldValues(shape), shape, []int{2, 0}, []int{5, 8}), got)

	zarr := writeZarr(t, dir, "map.zarr", shape, nil, zarrSpec{chunk: []int{4, 4}})
	for _, c := range []struct{ name, target, want string }{
		{"to-folder", "map.zarr", "which is a directory: an input may be a link to a regular file only (followed once)"},
		{"to-link", "k.npy", "which is a symbolic link: an input may be a link to a regular file only (followed once)"},
		{"dangling", "gone.npy", "which does not exist"},
	} {
		p := filepath.Join(dir, c.name)
		require.NoError(t, os.Symlink(c.target, p))
		err := (&Spec{Shape: shape, KMap: p}).Check()
		require.EqualError(t, err, "media: maps.k: "+p+" is a symbolic link to "+c.target+", "+c.want)
		require.ErrorContains(t, CheckField("initial.path", p, shape), p+" is a symbolic link to "+c.target)
	}

	// Outside the array: the same chunks with other values.
	other := make([]float64, field.Cells(shape))
	for i := range other {
		other[i] = 1e6
	}
	outside := writeZarr(t, dir, "outside", shape, other, zarrSpec{chunk: []int{4, 4}})
	require.NoError(t, (&Spec{Shape: shape, KMap: zarr}).Check())
	folder := filepath.Join(zarr, "c", "1")
	require.NoError(t, os.RemoveAll(folder))
	require.NoError(t, os.Symlink(filepath.Join(outside, "c", "1"), folder))
	err = (&Spec{Shape: shape, KMap: zarr}).Check()
	require.ErrorContains(t, err, "media: maps.k: "+folder+" is a symbolic link, not a folder: inside a Zarr folder heat follows no link")
	_, err = (&Spec{Shape: shape, KMap: zarr}).Fill([]int{4, 0}, shape)
	require.ErrorContains(t, err, folder+" is a symbolic link")

	require.NoError(t, os.Remove(folder))
	require.NoError(t, os.MkdirAll(folder, 0o755))
	chunk := filepath.Join(folder, "0")
	require.NoError(t, os.Symlink(filepath.Join(outside, "c", "1", "0"), chunk))
	_, err = ReadField("initial.path", zarr, shape, []int{0, 0}, shape, FillMissing(true))
	require.ErrorContains(t, err, chunk+" is a symbolic link, not a regular file")
}

// A heat checkpoint read as an input follows no link inside it either (the
// checkpoint package's rule): its u's chunk folder linked to another
// checkpoint's is refused, naming the link.
func TestCheckpointInputLinkInside(t *testing.T) {
	shape := []int{8, 6}
	root := writeSteps(t, shape, []int{4, 3}, 1, 2)
	ck := filepath.Join(root, "step-00000002")
	folder := filepath.Join(ck, "u", "c")
	require.NoError(t, os.RemoveAll(folder))
	require.NoError(t, os.Symlink(filepath.Join(root, "step-00000001", "u", "c"), folder))
	_, err := ReadField("initial.path", ck, shape, []int{0, 0}, shape)
	require.ErrorContains(t, err, "media: initial.path: "+ck+": "+folder+" is a symbolic link, not a folder: not followed out of the checkpoint")
}
