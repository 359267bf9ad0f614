package operator

import "heat/stencil"

// StepError is the step controller's error estimate over one row, on the
// kernels in use: the largest |u[j] − v[j]| / (den·(atol + rtol·max(|w[j]|,
// |u[j]|))) (NaN where any is NaN), with next, when not nil, set to u in the
// same pass. Every kernel set gives it the same bits, and a maximum does
// not depend on the order of the rows, so neither does a split.
func StepError(u, v, w, next []float64, den, atol, rtol float64) float64 {
	return stencil.Active.StepError(u, v, w, next, den, atol, rtol)
}
