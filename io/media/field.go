package media

import "math"

// A field from a file — a run's initial u (initial.kind = "file") — is read
// by the maps' reader: a .npy file, a Zarr v3 array folder, or a Zarr group
// (a heat checkpoint folder) standing for its array u; each rank reads the
// rows or chunks of its own box. Its values must be finite.

// fieldRule is what a field's values must be.
var fieldRule = rule{func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }, "a field's values must be finite"}

// fieldRef is the field file path of config key key.
func fieldRef(key, path string) mapRef {
	return mapRef{key: key, path: path, rule: fieldRule, array: "u"}
}

// CheckField opens the field file path, given for config key key, and
// checks its shape against grid's (C order) and its data type; its values
// are checked where ReadField reads them. Errors are *MapError.
func CheckField(key, path string, grid []int) error {
	arr, err := openMap(fieldRef(key, path), grid)
	if err != nil {
		return err
	}
	arr.close()
	return nil
}

// ReadField reads the box [lo, hi) (global cell indices, C order) of the
// field file path, given for config key key, whose shape must be grid's:
// the box's values in C order, last axis fastest. A value that is not
// finite is a *MapError naming the file, the cell's global index and the
// value.
func ReadField(key, path string, grid, lo, hi []int) ([]float64, error) {
	dst := make([]float64, cells(boxShape(lo, hi)))
	if err := readMap(fieldRef(key, path), grid, lo, hi, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// CellIndex is the C-order (last axis fastest) index of the global cell
// idx in a grid of shape, the order a field's values and its first bad
// cell follow; CellAt is its inverse.
func CellIndex(idx, shape []int) int { return linear(idx, shape) }

// CellAt is the global cell of C-order index k in a grid of shape.
func CellAt(k int, shape []int) []int { return unravel(k, shape) }
