package solver

import (
	"context"
	"fmt"
	"testing"

	"heat/comm"
	"heat/comm/local"
)

// BenchmarkMediaStep is the variable-coefficient explicit step (a 10²
// square inclusion), the work unit of the media solves, beside the
// uniform step.
func BenchmarkMediaStep(b *testing.B) {
	for _, shape := range [][]int{{2048, 2048}, {256, 256, 256}} {
		for _, media := range []bool{false, true} {
			for _, threads := range []int{1, 2} {
				name := fmt.Sprintf("dims=%d/n=%d/media=%v/threads=%d", len(shape), shape[0], media, threads)
				b.Run(name, func(b *testing.B) {
					spec := heatSpec(shape)
					spec.Threads = threads
					if media {
						spec.Media = inclusion(shape, 100, false).fn()
						spec.DT = 0
					}
					spec.Initial = Constant(1)
					spec.Steps = 1 << 30
					spec.CheckEvery = 1 << 30
					cells := 1
					for _, n := range shape {
						cells *= n
					}
					err := local.Run(1, func(c comm.Comm) error {
						s, err := New(c, spec)
						if err != nil {
							return err
						}
						defer s.Close()
						if err := s.RunTo(context.Background(), 2); err != nil {
							return err
						}
						b.ResetTimer()
						if err := s.RunTo(context.Background(), 2+b.N); err != nil {
							return err
						}
						b.StopTimer()
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(cells)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
				})
			}
		}
	}
}

// BenchmarkMGCG is one whole mgcg solve of the square inclusion (jump 1:
// the uniform problem through the same code) on 2D 1024², f = −1, zero
// Dirichlet faces, to a backward error of 1e-14.
func BenchmarkMGCG(b *testing.B) {
	shape := []int{1024, 1024}
	for _, jump := range []float64{1, 1e6} {
		for _, cg := range []bool{false, true} {
			b.Run(fmt.Sprintf("jump=%g/mgcg=%v/threads=2", jump, cg), func(b *testing.B) {
				spec := heatSpec(shape)
				spec.Equation, spec.Multigrid, spec.CG = Poisson, true, cg
				spec.Media = inclusion(shape, jump, false).fn()
				spec.Faces = faces(2, Face{Kind: Dirichlet})
				spec.Source = Constant(-1)
				spec.Initial = Constant(0)
				spec.Steps, spec.Tolerance = 60, 1e-14
				spec.MG.Pre, spec.MG.Post = 2, 2
				spec.Threads = 2
				if !cg {
					spec.Tolerance = 1e-10
				}
				var its int
				var back, rel float64
				for b.Loop() {
					err := local.Run(1, func(c comm.Comm) error {
						s, err := New(c, spec)
						if err != nil {
							return err
						}
						defer s.Close()
						err = s.Run(context.Background())
						in := s.Info()
						its, back, rel = in.Cycles, in.BackwardError, s.Residual()
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(its), "iterations")
				b.ReportMetric(back, "backward_error")
				b.ReportMetric(rel, "relative_residual")
			})
		}
	}
}
