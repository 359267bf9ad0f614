package run

import (
	"math"

	"heat/comm"
	"heat/io/config"
	"heat/io/report"
	"heat/solver"
)

// energyReport is the report's energy balance of s (nil where the solver
// keeps none). Collective.
func energyReport(c comm.Comm, cfg *config.Config, s *solver.Solver) (*report.EnergyBalance, error) {
	e, err := s.Energy()
	if err != nil || e == nil {
		return nil, err
	}
	nd := cfg.NDim()
	faces := map[string]report.Float{}
	for a := range nd {
		for side := range 2 {
			faces[cfg.FaceName(a, side)] = report.Float(e.Faces[2*a+side])
		}
	}
	change, in := e.Content-e.ContentStart, e.Inflow()
	den := max(math.Abs(change), math.Abs(in))
	if scale := max(math.Abs(e.ContentStart), math.Abs(e.Content)); den < 1e-12*scale {
		den = scale
	}
	res := 0.0
	if d := math.Abs(change - in); d != 0 || den != den {
		res = d / den
	}
	return &report.EnergyBalance{
		ContentStart: report.Float(e.ContentStart), ContentEnd: report.Float(e.Content),
		ContentChange: report.Float(change), Inflow: report.Float(in), Faces: faces,
		Held: report.Float(e.Held), Source: report.Float(e.Source), RelativeResidual: report.Float(res),
	}, nil
}

// fluxReport is the report's flows of a Poisson run's field (nil for heat
// runs). Collective.
func fluxReport(cfg *config.Config, s *solver.Solver) (*report.Flux, error) {
	fl, err := s.Fluxes()
	if err != nil || fl == nil {
		return nil, err
	}
	faces := map[string]report.Float{}
	net, big := fl.Held+fl.Source, math.Max(math.Abs(fl.Held), math.Abs(fl.Source))
	for a := range cfg.NDim() {
		for side := range 2 {
			f := fl.Faces[2*a+side]
			faces[cfg.FaceName(a, side)] = report.Float(f)
			net, big = net+f, math.Max(big, math.Abs(f))
		}
	}
	res := 0.0
	if net != 0 || big != big {
		res = math.Abs(net) / big
	}
	return &report.Flux{Faces: faces, Held: report.Float(fl.Held), Source: report.Float(fl.Source),
		Net: report.Float(net), RelativeResidual: report.Float(res)}, nil
}
