package benchmarks

import (
	"fmt"

	"heat/decomp"
)

// WeakFactors is how a weak-scaling study grows its base shape for cores
// resources (ranks × threads): the process grid decomp would lay over the
// base shape for that many ranks, so growth follows the grid's aspect like a
// domain decomposition does. Multiplying every axis of base by its factor
// keeps the cells per core exactly the base's.
//
// The factorisation is decomp.AutoDims over the base shape scaled by cores
// along every axis: scaling all axes alike leaves the cut areas' ratios (and
// so the choice) unchanged, but lifts AutoDims's limit of at most n ranks
// along an axis of n cells, which does not apply to growth.
func WeakFactors(base []int, cores int, periodic []bool) ([]int, error) {
	if cores < 1 {
		return nil, fmt.Errorf("weak scaling: need at least 1 core, got %d", cores)
	}
	scaled := make([]int, len(base))
	for a, n := range base {
		if n < 1 {
			return nil, fmt.Errorf("weak scaling: base shape %s has %d cells along %s", decomp.FormatDims(base), n, decomp.AxisName(len(base), a))
		}
		scaled[a] = n * cores
	}
	f, err := decomp.AutoDims(scaled, cores, periodic)
	if err != nil {
		return nil, fmt.Errorf("weak scaling: base shape %s over %d cores: %w", decomp.FormatDims(base), cores, err)
	}
	return f, nil
}

// WeakShape is the global shape of a weak-scaling point with cores
// resources: every axis of base times its WeakFactors factor.
func WeakShape(base []int, cores int, periodic []bool) ([]int, error) {
	f, err := WeakFactors(base, cores, periodic)
	if err != nil {
		return nil, err
	}
	shape := make([]int, len(base))
	for a := range base {
		shape[a] = base[a] * f[a]
	}
	return shape, nil
}

// cellsOf is the number of cells of a shape.
func cellsOf(shape []int) int {
	n := 1
	for _, x := range shape {
		n *= x
	}
	return n
}
