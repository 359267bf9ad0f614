//go:build goexperiment.simd && amd64

package stencil

import "simd/archsimd"

// The SIMD kernels are their portable twins of kernel_generic.go evaluated
// on whole vectors of cells: 8 per Float64x8 (AVX-512) or 4 per Float64x4
// (AVX2). The two widths differ only in vector type, so the Set are
// written once, as a template in kernel_simd_gen_test.go, and generated
// into kernel_simd_gen_amd64.go (`go generate ./stencil`). They are the
// reference loop of kernel.go (both equations use it). Every lane does the
// twin's operations in its order, each Mul and Add rounded on its own
// (never MulAdd; the compiler fuses no separate vector Mul and Add), so it
// equals the generic kernel's result bit for bit:
//
//	d = ((c0·c + cx·(w + e)) + cy·(s + n)) [+ cz·(l + u)] [+ f]
//
// The cells after the last whole vector (fewer than one vector) go to the
// generic kernel on the tail of the row; a row shorter than one vector (the
// rim's columns are rows of one cell) goes to it at once, without touching
// a vector register. ClearAVXUpperBits runs after the vector loop, before
// any scalar float code (the tail, the caller): after an asynchronous
// preemption the upper halves of the vector registers can stay dirty, and
// scalar SSE code then runs many times slower (shared/refbench/README.md).
//
// Loads and stores take subslices of exactly one vector, x[j:j+V], of
// operands resliced to the row's length, so the compiler proves them in
// bounds. Unrolling by two vectors was measured slower (register spills).
// The tail's operands are built in one composite literal per case: setting
// a field after the literal cost ~10 ns a row.

// best is the widest set this CPU runs, chosen once at start:
// AVX-512, else AVX2, else generic.
func best() Set {
	ks := Available()
	return ks[len(ks)-1]
}

// Available are the sets this build and CPU run, generic first and
// the fastest last.
func Available() []Set {
	ks := []Set{Generic}
	if archsimd.X86.AVX2() {
		ks = append(ks, avx2)
	}
	if archsimd.X86.AVX512() {
		ks = append(ks, avx512)
	}
	return ks
}

// avx512 is the 8-wide set (Float64x8).
var avx512 = Set{Name: "avx512", heat2D: heat2DAVX512, heat3D: heat3DAVX512}

// avx2 is the 4-wide set (Float64x4).
var avx2 = Set{Name: "avx2", heat2D: heat2DAVX2, heat3D: heat3DAVX2}
