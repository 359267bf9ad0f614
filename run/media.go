package run

import (
	"heat/checkpoint"
	"heat/comm"
	"heat/io/config"
	"heat/io/media"
	"heat/solver"
)

// mediaOf is the run's media as the solver reads them, each rank its own
// box from the config's maps and materials; nil for the uniform medium.
func mediaOf(cfg *config.Config) solver.MediaFunc {
	m := cfg.Media()
	if m.Uniform() {
		return nil
	}
	return func(_ comm.Comm, lo, hi []int) (k, rhoC, held []float64, err error) {
		cells, err := m.Fill(lo, hi)
		if err != nil {
			return nil, nil, nil, UsageError{err}
		}
		return cells.K, cells.RhoC, cells.Fixed, nil
	}
}

// autoStep reports whether the solver picks the run's time step (and with
// t_end its step count) from the media's stability limit: an explicit
// heat run in media without equation.dt.
func autoStep(cfg *config.Config, spec solver.Spec) bool {
	return spec.Media != nil && cfg.Equation.Kind == config.Heat && !cfg.Implicit() && cfg.Equation.DT.V == 0
}

// mediaStep reports whether a restart of cfg from ck takes its time step
// from the media (autoStep, with the media from the checkpoint or the
// config).
func mediaStep(cfg *config.Config, ck *checkpoint.Checkpoint) bool {
	inMedia := ck.Has("k") || !cfg.Media().Uniform()
	return inMedia && cfg.Equation.Kind == config.Heat && !cfg.Implicit() && cfg.Equation.DT.V == 0
}

// resolveMaps names, in cfg, the one checkpoint a map given as a
// checkpoints folder or its latest stands for (its newest), once: every
// rank then reads the same, though a run adds checkpoints there meanwhile.
func resolveMaps(cfg *config.Config) error {
	for _, m := range []struct {
		key  string
		path *string
	}{{"maps.k", &cfg.Maps.K}, {"maps.rho_c", &cfg.Maps.RhoC}} {
		if *m.path == "" {
			continue
		}
		p, err := media.ResolveCheckpoint(m.key, *m.path)
		if err != nil {
			return fieldError(err)
		}
		*m.path = p
	}
	return nil
}
