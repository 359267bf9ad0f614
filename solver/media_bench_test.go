package solver

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"heat/comm"
	"heat/comm/local"
	"heat/multigrid"
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

// BenchmarkMGCG is one whole Poisson solve of the square inclusion
// [3/8, 5/8]² (jump 1: the uniform problem through the same code) on 2D
// 1024², f = −1, zero Dirichlet faces, 2 threads, by multigrid F-cycles to
// a relative residual of 1e-10 (or its floor) and by mgcg to a
// componentwise backward error of 1e-12; setup and solve timed apart, and
// in work units (1 WU = one variable-coefficient explicit step of the same
// grid and threads, timed just before). Beside them the uniform problem on
// its own path (no medium), its WU the uniform explicit step: the
// baseline of the media solves' work units.
func BenchmarkMGCG(b *testing.B) {
	for _, shape := range [][]int{{1024, 1024}, {128, 128, 128}} {
		benchmarkMGCG(b, shape)
	}
}

func benchmarkMGCG(b *testing.B, shape []int) {
	b.Run(fmt.Sprintf("dims=%d/n=%d/uniform/mgcg=false/threads=2", len(shape), shape[0]), func(b *testing.B) {
		solveWU(b, shape, nil, false, stepTime(b, shape, 2, false))
	})
	wu := stepTime(b, shape, 2, true)
	for _, c := range []struct {
		jump    float64
		checker bool
	}{{1, false}, {1e6, false}, {1e6, true}} {
		jump := c.jump
		g := inclusion(shape, jump, c.checker)
		for _, cg := range []bool{false, true} {
			b.Run(fmt.Sprintf("dims=%d/n=%d/jump=%g/checker=%v/mgcg=%v/threads=2", len(shape), shape[0], jump, c.checker, cg), func(b *testing.B) {
				solveWU(b, shape, g, cg, wu)
			})
		}
	}
}

// solveWU times whole Poisson solves (f = −1, zero Dirichlet faces, F-cycles
// or mgcg) on medium g (nil: uniform) and reports setup and solve in
// seconds and in work units of wu.
func solveWU(b *testing.B, shape []int, g *globalMedia, cg bool, wu time.Duration) {
	spec := heatSpec(shape)
	spec.Equation, spec.Multigrid, spec.CG = Poisson, true, cg
	if g != nil {
		spec.Media = g.fn()
	}
	spec.Faces = faces(len(shape), Face{Kind: Dirichlet})
	spec.Source = Constant(-1)
	spec.Initial = Constant(0)
	spec.Steps, spec.Tolerance = 60, 1e-12
	spec.MG.Cycle = multigrid.F
	spec.Threads = 2
	if !cg {
		spec.Tolerance = 1e-10
	}
	var info SolverInfo
	var setup, solve time.Duration
	var rel float64
	for b.Loop() {
		setup, solve = timeSolve(b, 1, spec, func(_ comm.Comm, s *Solver) error {
			info, rel = s.Info(), s.Residual()
			return nil
		})
	}
	b.ReportMetric(float64(info.Cycles), "iterations")
	b.ReportMetric(setup.Seconds(), "setup_s")
	b.ReportMetric(solve.Seconds(), "solve_s")
	b.ReportMetric(setup.Seconds()/wu.Seconds(), "setup_WU")
	b.ReportMetric(solve.Seconds()/wu.Seconds(), "solve_WU")
	b.ReportMetric((setup+solve).Seconds()/wu.Seconds(), "WU")
	b.ReportMetric(rel, "relative_residual")
	if cg {
		b.ReportMetric(info.ComponentError, "component_error")
		b.ReportMetric(info.BackwardError, "backward_error")
	} else if n := len(info.History); n > 1 {
		b.ReportMetric(math.Pow(info.History[n-1]/info.History[0], 1/float64(n-1)), "factor")
	}
}

// timeSolve builds spec's solver on ranks in-process ranks and runs it,
// then calls after with each rank's solver, and returns rank 0's times of
// New (setup) and Run (solve).
func timeSolve(b *testing.B, ranks int, spec Spec, after func(c comm.Comm, s *Solver) error) (setup, solve time.Duration) {
	err := local.Run(ranks, func(c comm.Comm) error {
		t0 := time.Now()
		s, err := New(c, spec)
		if err != nil {
			return err
		}
		defer s.Close()
		t1 := time.Now()
		if err := s.Run(context.Background()); err != nil {
			return err
		}
		if c.Rank() == 0 {
			setup, solve = t1.Sub(t0), time.Since(t1)
		}
		return after(c, s)
	})
	if err != nil {
		b.Fatal(err)
	}
	return setup, solve
}

// stepTime is one explicit step's time, variable-coefficient (media: a
// 10² inclusion) or uniform, the best of three runs of 10 steps.
func stepTime(b *testing.B, shape []int, threads int, media bool) time.Duration {
	spec := heatSpec(shape)
	spec.Threads = threads
	if media {
		spec.Media = inclusion(shape, 100, false).fn()
		spec.DT = 0
	}
	spec.Initial = Constant(1)
	spec.Steps, spec.CheckEvery = 1<<30, 1<<30
	best := time.Duration(1 << 62)
	err := local.Run(1, func(c comm.Comm) error {
		s, err := New(c, spec)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.RunTo(context.Background(), 5); err != nil {
			return err
		}
		for range 3 {
			t0 := time.Now()
			if err := s.RunTo(context.Background(), s.Step()+10); err != nil {
				return err
			}
			best = min(best, time.Since(t0)/10)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return best
}

// BenchmarkSmoothBall is HPGMG-FV's benchmark problem (its variable
// coefficient, β = 5.5 + 4.5·tanh(10(r − 0.25)), zero faces, u = sin·sin·sin)
// on 2 ranks of one thread, as `hpgmg-fv 7 4` runs it on 2 ranks: one
// full-multigrid cycle (which reaches the discretisation error), against
// mgcg from zero to a componentwise backward error of 1e-9, and the
// uniform problem's FMG cycle; setup (the media, the source, the
// hierarchy) and solve timed apart, and the max error against the exact
// solution. benchmarks/hpgmg.sh runs HPGMG-FV beside it.
func BenchmarkSmoothBall(b *testing.B) {
	for _, n := range []int{128, 256} {
		shape := []int{n, n, n}
		g, exact := ballMedia(shape)
		for _, mode := range []string{"fmg", "mgcg", "uniform-fmg"} {
			b.Run(fmt.Sprintf("n=%d/solve=%s/ranks=2", n, mode), func(b *testing.B) {
				spec := heatSpec(shape)
				spec.Equation, spec.Multigrid, spec.CG, spec.FMG = Poisson, true, true, true
				spec.Media, spec.Source, spec.Initial = g.fn(), ballSource, Constant(0)
				spec.Steps, spec.Tolerance = 1, 1e-9
				switch mode {
				case "mgcg":
					spec.Steps, spec.FMG = 40, false
				case "uniform-fmg":
					spec.Media, spec.CG = nil, false
				}
				var setup, solve time.Duration
				var steps int
				var worst float64
				for b.Loop() {
					setup, solve = timeSolve(b, 2, spec, func(c comm.Comm, s *Solver) error {
						u, err := s.Gather()
						if err != nil || c.Rank() != 0 {
							return err
						}
						steps, worst = s.Step(), 0
						for i := range exact {
							worst = max(worst, math.Abs(u[i]-exact[i]))
						}
						return nil
					})
				}
				b.ReportMetric(float64(steps), "iterations")
				b.ReportMetric(setup.Seconds(), "setup_s")
				b.ReportMetric(solve.Seconds(), "solve_s")
				b.ReportMetric(worst, "max_error")
			})
		}
	}
}
