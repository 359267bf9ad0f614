package main

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/checkpoint"
)

// TestPoissonFluxesFromTheCheckpoint: an electrode held at 1 inside a
// dielectric block between grounded walls, solved by mgcg. The report's
// flux out of the held cells (the electrode's charge) and through each
// face equal sums written here over the final checkpoint's u, k and mask
// with the discrete contract's face coefficients; they balance (nothing
// else puts anything in) and have the same bits on 1 and 3 ranks.
func TestPoissonFluxesFromTheCheckpoint(t *testing.T) {
	const ny, nx = 40, 36
	var want *float64
	for _, ranks := range []string{"1", "3"} {
		out := t.TempDir()
		code, stdout, stderr := heat(t, "run", "-c", "poisson-2d", "--out", out, "--ranks", ranks,
			"--set", "grid.shape=[40,36]", "--set", "grid.length=[1.0,1.2]",
			"--set", "boundary.kind=dirichlet", "--set", "boundary.value=0",
			"--set", "boundary.x_hi.kind=neumann", "--set", "boundary.x_hi.value=0",
			"--set", "source.kind=none", "--set", "initial.kind=constant", "--set", "initial.value=0",
			"--set", "equation.solver=mgcg", "--set", "run.tolerance=1e-14", "--set", "checkpoint.final=true",
			"--set", `material=[{name = "dielectric", region = "box", lo = [0.2, 0.3], hi = [0.7, 0.9], k = 4.0}, {name = "electrode", region = "ball", center = [0.45, 0.55], radius = 0.12, fixed = 1.0}]`)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, "flux in: x_lo ")
		rep := readReport(t, filepath.Join(out, "report.json"))
		require.NotNil(t, rep.Flux)
		require.Nil(t, rep.EnergyBalance)

		ckpt, err := checkpoint.Resolve(filepath.Join(out, "checkpoints"))
		require.NoError(t, err)
		ck, err := checkpoint.Open(ckpt)
		require.NoError(t, err)
		read := func(name string) []float64 {
			v := make([]float64, ny*nx)
			require.NoError(t, checkpoint.ReadBox(ck, name, []int{0, 0}, []int{ny, nx}, v))
			return v
		}
		u, k, mask := read("u"), read("k"), read("mask")
		h := [2]float64{1.0 / ny, 1.2 / nx}
		vol := h[0] * h[1]
		held, faces := 0.0, map[string]float64{}
		nheld := 0
		for y := range ny {
			for x := range nx {
				i := y*nx + x
				if mask[i] != 0 {
					nheld++
					continue
				}
				// Each face of a free cell: to a held neighbour (its flux
				// comes out of the held cells), or a physical face's
				// Dirichlet ghost 2·0 − u.
				for a, d := range [2][2]int{{1, 0}, {0, 1}} {
					for _, s := range []int{-1, 1} {
						yy, xx := y+s*d[0], x+s*d[1]
						if yy < 0 || yy >= ny || xx < 0 || xx >= nx {
							name := map[[2]int]string{{0, -1}: "y_lo", {0, 1}: "y_hi", {1, -1}: "x_lo", {1, 1}: "x_hi"}[[2]int{a, s}]
							if name != "x_hi" { // Neumann 0: no flux
								faces[name] += k[i] / (h[a] * h[a]) * (2 * (0 - u[i])) * vol
							}
							continue
						}
						j := yy*nx + xx
						if mask[j] != 0 {
							kf := 2 * k[i] * k[j] / (k[i] + k[j])
							held += kf / (h[a] * h[a]) * (u[j] - u[i]) * vol
						}
					}
				}
			}
		}
		require.Greater(t, nheld, 40)
		require.Greater(t, held, 0.0, "the electrode at 1 gives out what the grounded walls take")
		require.InEpsilon(t, held, float64(rep.Flux.Held), 1e-12)
		for _, name := range []string{"x_lo", "y_lo", "y_hi"} {
			require.InEpsilon(t, faces[name], float64(rep.Flux.Faces[name]), 1e-12, name)
			require.Less(t, float64(rep.Flux.Faces[name]), 0.0, name)
		}
		require.Zero(t, float64(rep.Flux.Faces["x_hi"]))
		require.Zero(t, float64(rep.Flux.Source))
		require.Less(t, math.Abs(float64(rep.Flux.Net)), 1e-9*held)
		require.Less(t, float64(rep.Flux.RelativeResidual), 1e-9)
		if want == nil {
			v := float64(rep.Flux.Held)
			want = &v
		}
		require.Equal(t, *want, float64(rep.Flux.Held), "the same bits on %s ranks", ranks)
	}
}
