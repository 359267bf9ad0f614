package media

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"heat/field"
	"heat/internal/safefile"
)

// array is a map file opened for reading: its shape, the values of a box,
// and a pass over every value.
type array interface {
	// shape is the array's shape, C order.
	shape() []int
	// read stores the values of the box [lo, hi), C order, in dst (of the
	// box's cell count).
	read(lo, hi []int, dst []float64) error
	// scan calls fn with every value of the array once, a block at a time:
	// vals and, for the k-th of them, at(k) its global index. missing says
	// the block is a chunk that is not stored (its values are the fill
	// value).
	scan(fn func(vals []float64, at func(k int) []int, missing string) error) error
	close()
}

// maxMetaBytes bounds what is read of a metadata file (zarr.json, a .npy
// header).
const maxMetaBytes = 1 << 20

// maxBlock bounds, in values, what one read of a file or a scan's block
// holds at once: 4 MiB of float64.
const maxBlock = 1 << 19

// mapFail is the *MapError of map m: the path, then what is wrong.
func mapFail(m mapRef, format string, args ...any) *MapError {
	return &MapError{Key: m.key, Path: m.path, Msg: m.path + ": " + fmt.Sprintf(format, args...)}
}

// openMap opens the map file of m and checks its shape against the grid's.
func openMap(m mapRef, grid []int) (array, error) {
	name := m.array
	if name == "" {
		name = strings.TrimPrefix(m.key, "maps.")
	}
	arr, err := openArray(m.path, name, m.fill)
	if err != nil {
		return nil, &MapError{Key: m.key, Path: m.path, Msg: err.Error()}
	}
	if sh := arr.shape(); !slices.Equal(sh, grid) {
		arr.close()
		return nil, &MapError{Key: m.key, Path: m.path, Msg: fmt.Sprintf("%s has shape %v, the grid is %v", m.path, sh, grid)}
	}
	return arr, nil
}

// openArray opens path as a .npy file, a Zarr v3 array folder, a Zarr
// group whose array called name is taken, or a heat checkpoint — a
// checkpoint folder, an array folder in one, a checkpoints folder or its
// latest — whose array name (or the array folder's) is read through the
// checkpoint package (ckpt.go). fill says whether a Zarr array's chunks
// that are not stored read as its fill value (else they are errors).
//
// Links, one rule: path itself may be a symbolic link to a regular file,
// followed once (the target must be a regular file: a link to a folder, a
// FIFO, a device or another link is refused naming path); inside a Zarr
// folder or a checkpoint no link is followed, so nothing read resolves
// outside it. A FIFO, a device or a socket is refused without opening it.
// Errors name the path as given.
func openArray(path, name string, fill bool) (array, error) {
	clean := filepath.Clean(path)
	if root, ok := checkpointRoot(clean); ok {
		ck, err := resolveRoot(root, path)
		if err != nil {
			return nil, err
		}
		return openCheckpoint(ck, name, path)
	}
	file, err := safefile.Follow(clean)
	if err != nil {
		return nil, err
	}
	st, err := os.Lstat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file or folder", path)
	case err != nil:
		return nil, fmt.Errorf("%s: %v", path, unwrapPath(err))
	case st.Mode().IsRegular():
		return openNPY(file, path)
	case !st.IsDir():
		return nil, fmt.Errorf("%s is %s; a map is a .npy file or a Zarr v3 array folder", path, safefile.Kind(st.Mode().Type()))
	case heatGroup(clean):
		return openCheckpoint(clean, name, path)
	}
	if ck, arr, ok := inCheckpoint(clean); ok {
		return openCheckpoint(ck, arr, path)
	}
	z, err := openZarr(path, name)
	if err != nil {
		return nil, err
	}
	z.fillMissing = fill
	return z, nil
}

// unwrapPath is the cause of a *fs.PathError (its path is named already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readMap stores the values of map m over the box [lo, hi) in dst and
// checks them.
func readMap(m mapRef, grid, lo, hi []int, dst []float64) error {
	arr, err := openMap(m, grid)
	if err != nil {
		return err
	}
	defer arr.close()
	if err := arr.read(lo, hi, dst); err != nil {
		return wrapRead(m, err)
	}
	box := boxShape(lo, hi)
	for k, v := range dst {
		if !m.rule.ok(v) {
			return badValue(m, offset(lo, unravel(k, box)), v, "")
		}
	}
	return nil
}

// checkMap checks the whole map m: its shape, its data type, every value.
// Once ctx is done it stops at the next block and returns its cause.
func checkMap(ctx context.Context, m mapRef, grid []int) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	arr, err := openMap(m, grid)
	if err != nil {
		return err
	}
	defer arr.close()
	err = arr.scan(func(vals []float64, at func(int) []int, missing string) error {
		if ctx.Err() != nil {
			return errStopped
		}
		for k, v := range vals {
			if !m.rule.ok(v) {
				return badValue(m, at(k), v, missing)
			}
		}
		return nil
	})
	if errors.Is(err, errStopped) {
		return context.Cause(ctx)
	}
	return wrapRead(m, err)
}

// errStopped ends a scan whose context is done.
var errStopped = errors.New("stopped")

// wrapRead makes a read error of map m (its text names the file) a
// *MapError.
func wrapRead(m mapRef, err error) error {
	var me *MapError
	var mc *missingChunk
	switch {
	case err == nil:
		return nil
	case errors.As(err, &me):
		return me
	case errors.As(err, &mc):
		e := mapFail(m, "%v", mc)
		e.Cell = slices.Clone(mc.first) // ranks reading boxes agree on the first
		return e
	}
	return &MapError{Key: m.key, Path: m.path, Msg: err.Error()}
}

// badValue is the error of a value of map m at global cell idx.
func badValue(m mapRef, idx []int, v float64, missing string) *MapError {
	var e *MapError
	if missing != "" {
		e = mapFail(m, "cell %v is %s, the fill value of chunk %s, which is not stored (%s)", idx, FormatNumber(v), missing, m.rule.what)
	} else {
		e = mapFail(m, "cell %v is %s (%s)", idx, FormatNumber(v), m.rule.what)
	}
	e.Cell = slices.Clone(idx)
	return e
}

// boxShape is the shape of the box [lo, hi).
func boxShape(lo, hi []int) []int {
	sh := make([]int, len(lo))
	for a := range lo {
		sh[a] = hi[a] - lo[a]
	}
	return sh
}

// unravel is the index, C order, of the k-th cell of shape, a new slice.
func unravel(k int, shape []int) []int {
	idx := make([]int, len(shape))
	field.Unravel(k, shape, idx)
	return idx
}

// offset is lo + idx, a new slice.
func offset(lo, idx []int) []int {
	out := make([]int, len(lo))
	for a := range lo {
		out[a] = lo[a] + idx[a]
	}
	return out
}

// eachRow calls fn for every row (a run along the last axis) of the box
// [lo, hi): the global index of its first cell (reused between calls) and
// its length. An empty box has no rows.
func eachRow(lo, hi []int, fn func(start []int, n int) error) error {
	nd := len(lo)
	for a := range nd {
		if hi[a] <= lo[a] {
			return nil
		}
	}
	idx := slices.Clone(lo)
	n := hi[nd-1] - lo[nd-1]
	for {
		if err := fn(idx, n); err != nil {
			return err
		}
		a := nd - 2
		for ; a >= 0; a-- {
			if idx[a]++; idx[a] < hi[a] {
				break
			}
			idx[a] = lo[a]
		}
		if a < 0 {
			return nil
		}
	}
}

// intersect is the box [lo, hi) ∩ [blo, bhi); ok is false when it is empty.
func intersect(lo, hi, blo, bhi []int) (ilo, ihi []int, ok bool) {
	ilo, ihi = make([]int, len(lo)), make([]int, len(lo))
	for a := range lo {
		ilo[a], ihi[a] = max(lo[a], blo[a]), min(hi[a], bhi[a])
		if ilo[a] >= ihi[a] {
			return nil, nil, false
		}
	}
	return ilo, ihi, true
}

// copyBox copies the box [lo, hi) from src, which holds the box [slo, ·)
// of shape sshape, into dst, which holds the box [dlo, ·) of shape dshape.
func copyBox(dst []float64, dlo, dshape []int, src []float64, slo, sshape []int, lo, hi []int) {
	nd := len(lo)
	d, s := make([]int, nd), make([]int, nd)
	_ = eachRow(lo, hi, func(start []int, n int) error {
		for a := range nd {
			d[a], s[a] = start[a]-dlo[a], start[a]-slo[a]
		}
		i, j := field.Linear(d, dshape), field.Linear(s, sshape)
		copy(dst[i:i+n], src[j:j+n])
		return nil
	})
}

// joinKey is the file of a chunk key under dir.
func joinKey(dir, key string) string { return filepath.Join(dir, filepath.FromSlash(key)) }
