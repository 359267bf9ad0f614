package run

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/io/heatmap"
	"heat/solver"
)

// The PNG's plane, averaged rank by rank into pixels, equals the plane cut
// from the gathered field and box-averaged in one place, on any split, by
// heatmap's rule: NaN cells left out, an infinity winning over finite
// cells, +Inf and -Inf together NaN.
func TestCoarsePlaneMatchesGatheredField(t *testing.T) {
	shape := []int{9, 23, 17}
	for _, spec := range []string{"z=mid", "y=3", "x=0.9"} {
		for _, rt := range [][2]int{{1, 1}, {1, 3}, {3, 2}, {4, 1}} {
			ranks := rt[0]
			sp := solver.Spec{Shape: shape, Length: []float64{1, 1, 1}, Ghost: 1, Equation: solver.Heat, Alpha: 1,
				Faces: make([][2]solver.Face, 3), Initial: solver.Random(shape, 9, 1, 0), Threads: rt[1], Steps: 0, CheckEvery: 1}
			sp.DT = 0.5 * solver.StableDT(1, sp.Spacing())
			err := local.Run(ranks, func(c comm.Comm) error {
				s, err := solver.New(c, sp)
				if err != nil {
					return err
				}
				defer s.Close()
				// Cells that are not finite are left out of their pixel: a
				// few scattered, and a whole 4×4 block of NaN (pixel (0, 0)
				// of z=mid at factor 4).
				lay := s.Layout()
				u := s.Field()
				for z := lay.Box.Lo[0]; z < lay.Box.Hi[0]; z++ {
					for y := lay.Box.Lo[1]; y < lay.Box.Hi[1]; y++ {
						for x := lay.Box.Lo[2]; x < lay.Box.Hi[2]; x++ {
							i := lay.Index(z-lay.Box.Lo[0], y-lay.Box.Lo[1], x-lay.Box.Lo[2])
							switch {
							case (z*31+y*7+x)%53 == 0:
								u[i] = math.NaN()
							case (z*13+y*5+x)%61 == 0:
								u[i] = math.Inf(1 - 2*(x%2))
							case z == 4 && y < 4 && x < 4:
								u[i] = math.NaN()
							}
						}
					}
				}
				plane, cy, cx, _, lo, hi, err := coarsePlane(c, viewOf(s), spec, 7, new(planeBufs))
				if err != nil {
					return err
				}
				field, err := s.Gather()
				if err != nil || c.Rank() != 0 {
					return err
				}
				full, ny, nx, _, err := heatmap.Slice(field, shape, spec)
				if err != nil {
					return err
				}
				f := heatmap.Factor(ny, nx, 7)
				require.Equal(t, (ny+f-1)/f, cy)
				require.Equal(t, (nx+f-1)/f, cx)
				finite := slices.DeleteFunc(slices.Clone(full), func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
				require.Equal(t, slices.Min(finite), lo)
				require.Equal(t, slices.Max(finite), hi)
				nan, infs := 0, 0
				for Y := range cy {
					for X := range cx {
						sum, n, pos, neg := 0.0, 0, false, false
						for y := Y * f; y < min(ny, (Y+1)*f); y++ {
							for x := X * f; x < min(nx, (X+1)*f); x++ {
								switch v := full[y*nx+x]; {
								case math.IsInf(v, 1):
									pos = true
								case math.IsInf(v, -1):
									neg = true
								case !math.IsNaN(v):
									sum += v
									n++
								}
							}
						}
						if pos != neg {
							require.Equal(t, math.Inf(map[bool]int{true: 1, false: -1}[pos]), plane[Y*cx+X], "%s ranks %d pixel %d,%d: an infinity wins", spec, ranks, Y, X)
							infs++
							continue
						}
						if n == 0 || (pos && neg) {
							require.True(t, math.IsNaN(plane[Y*cx+X]), "%s ranks %d pixel %d,%d", spec, ranks, Y, X)
							nan++
							continue
						}
						require.InDelta(t, sum/float64(n), plane[Y*cx+X], 1e-12, "%s ranks %d pixel %d,%d", spec, ranks, Y, X)
					}
				}
				if spec == "z=mid" {
					require.Positive(t, nan, "the all-NaN pixel")
				}
				require.Positive(t, infs, "%s: pixels with infinities", spec)
				return nil
			})
			require.NoError(t, err)
		}
	}
}
