package main

import (
	"runtime"

	"heat/io/config"
	"heat/solver"
)

// specOf turns a validated config into the solver's description of the run.
func specOf(cfg *config.Config) solver.Spec {
	nd := cfg.NDim()
	s := solver.Spec{
		Shape:      cfg.Grid.Shape,
		Length:     cfg.Grid.Length,
		Ghost:      cfg.Grid.Ghost,
		Alpha:      cfg.Equation.Alpha,
		DT:         cfg.TimeStep(),
		Steps:      cfg.Run.Steps,
		Tolerance:  cfg.Run.Tolerance,
		CheckEvery: cfg.Run.CheckEvery,
		Faces:      make([][2]solver.Face, nd),
		Initial:    profileOf(cfg, cfg.Initial),
		Source:     profileOf(cfg, cfg.Source),
		Dims:       cfg.Parallel.Dims,
		Threads:    threadsOf(cfg),
	}
	if cfg.Equation.Kind == "poisson" {
		s.Equation = solver.Poisson
	}
	for a := range nd {
		for side := range 2 {
			kind, value := cfg.FaceKind(a, side)
			f := solver.Face{Value: value}
			switch kind {
			case "neumann":
				f.Kind = solver.Neumann
			case "periodic":
				f.Kind = solver.Periodic
			}
			s.Faces[a][side] = f
		}
	}
	return s
}

// threadsOf is the worker count per rank: as configured, or the cores this
// process may run on shared among the ranks, at least one.
func threadsOf(cfg *config.Config) int {
	if cfg.Parallel.Threads > 0 {
		return cfg.Parallel.Threads
	}
	if mpiWorld != nil {
		return mpiThreads()
	}
	return max(1, runtime.NumCPU()/cfg.Parallel.Ranks)
}

func profileOf(cfg *config.Config, p config.Profile) solver.Profile {
	switch p.Kind {
	case "constant":
		return solver.Constant(p.Value)
	case "hotspot":
		return solver.Hotspot(p.Center, p.Radius, p.Value, p.Background)
	case "gaussian":
		return solver.Gaussian(p.Center, p.Radius, p.Value, p.Background)
	case "sine":
		return solver.Sine(p.Mode, cfg.Grid.Length, p.Value, p.Background)
	case "random":
		return solver.Random(cfg.Grid.Shape, p.Seed, p.Value, p.Background)
	}
	return nil // "none"
}
