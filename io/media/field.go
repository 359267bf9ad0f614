package media

import (
	"context"
	"math"

	"heat/field"
	"heat/internal/hugemem"
)

// A field from a file — a run's initial u (initial.kind = "file"), a source
// (source.kind = "file") — is read by the maps' reader: a .npy file, a Zarr
// v3 array folder, or a heat checkpoint standing for its array u (read with
// the checkpoint's checks); each rank reads the rows or chunks of its own
// box. Its values must be finite.

// fieldRule is what a field's values must be.
var fieldRule = rule{func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }, "a field's values must be finite"}

// fieldRef is the field file path of config key key, read as opts say.
func fieldRef(key, path string, opts []FieldOption) mapRef {
	m := mapRef{key: key, path: path, rule: fieldRule, array: "u"}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// FieldOption says how a field file is read.
type FieldOption func(*mapRef)

// FillMissing(true) reads the chunks a Zarr field does not store as its
// fill_value, as Spec.FillMissing does a map's (maps.missing = "fill");
// without it such a chunk is an error naming it.
func FillMissing(fill bool) FieldOption { return func(m *mapRef) { m.fill = fill } }

// CheckField opens the field file path, given for config key key, and
// checks its shape against grid's (C order) and its data type (of a heat
// checkpoint, its seal and metadata too); its values, and a checkpoint's
// chunks, are checked where ReadField reads them. Errors are *MapError.
func CheckField(key, path string, grid []int, opts ...FieldOption) error {
	arr, err := openMap(fieldRef(key, path, opts), grid)
	if err != nil {
		return err
	}
	arr.close()
	return nil
}

// CheckFieldValues reads every value of the field file path (as CheckField
// opens it) and checks each is finite, a block at a time, so that a run
// refuses a bad field before it removes or writes anything; a stop (ctx
// done) ends the pass within a block and returns its cause.
func CheckFieldValues(ctx context.Context, key, path string, grid []int, opts ...FieldOption) error {
	return checkMap(ctx, fieldRef(key, path, opts), grid)
}

// ReadField reads the box [lo, hi) (global cell indices, C order) of the
// field file path, given for config key key, whose shape must be grid's:
// the box's values in C order, last axis fastest. A value that is not
// finite is a *MapError naming the file, the cell's global index and the
// value; so is a chunk that is not stored (unless FillMissing), naming it
// and, as Cell, its first cell in the box.
func ReadField(key, path string, grid, lo, hi []int, opts ...FieldOption) ([]float64, error) {
	dst := hugemem.Floats(field.Cells(boxShape(lo, hi)))
	if err := readMap(fieldRef(key, path, opts), grid, lo, hi, dst); err != nil {
		return nil, err
	}
	return dst, nil
}
