package solver

// useKernels makes New pick its row kernels from ks until restore is called,
// so a test can run the generic path on a SIMD build, or each SIMD set in
// turn. It swaps a package variable: tests that use it must not run in
// parallel with tests that call New.
func useKernels(ks kernels) (restore func()) {
	old := active
	active = ks
	return func() { active = old }
}
