//go:build !(goexperiment.simd && amd64)

package solver

// bestKernels is the generic set: this build has no SIMD kernels.
func bestKernels() kernels { return generic }

// availableKernels are the sets this build runs: generic alone.
func availableKernels() []kernels { return []kernels{generic} }
