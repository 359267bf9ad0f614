//go:build !amd64 || purego

package stencil

// vectorSets are none: this architecture (or a purego build) runs the
// generic kernels.
func vectorSets() []Set { return nil }

// Fence is a no-op: these builds have no non-temporal stores.
func Fence() {}

// Prefetch is a no-op here: a hint these builds do without.
func Prefetch(x []float64) {}
