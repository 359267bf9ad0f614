//go:build !(goexperiment.simd && amd64)

package stencil

// best is the generic set: this build has no SIMD kernels.
func best() Set { return Generic }

// Available are the sets this build runs: generic alone.
func Available() []Set { return []Set{Generic} }
