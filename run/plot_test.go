package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/io/config"
	"heat/io/report"
)

// The report's every-cycle residuals fill in the Poisson plot only where
// they are the whole run's, or a restart's own from its checkpoint on; the
// mean factor is the report's.
func TestPlotRunFromReport(t *testing.T) {
	f := report.Float(0.125)
	hist := []report.Float{1e-2, 1e-3, 1e-4}
	rep := &report.Report{Steps: 3, Solver: &report.Solver{Kind: "multigrid", ResidualHistory: hist, ConvergenceFactor: &f}}
	r := plotRun(config.Poisson, rep)
	require.Equal(t, "poisson", r.Equation)
	require.Equal(t, "multigrid", r.Solver)
	require.Equal(t, 0.125, r.Factor)
	require.Equal(t, []float64{1e-2, 1e-3, 1e-4}, r.History)
	require.Equal(t, 0, r.First)

	rep.Steps, rep.Restart = 8, &report.Restart{Step: 5}
	r = plotRun(config.Poisson, rep)
	require.Equal(t, 5, r.First)
	require.Len(t, r.History, 3)

	rep.Restart = nil // 8 cycles, 3 residuals: not the whole run
	require.Nil(t, plotRun(config.Poisson, rep).History)
	require.Nil(t, plotRun(config.Heat, rep).History, "an implicit heat run's history is per step")
	require.Equal(t, "jacobi", plotRun(config.Poisson, &report.Report{Solver: &report.Solver{Kind: "jacobi"}}).Solver)
}

// A report that is not one is an error naming it; none at all is a run of
// unknown kind.
func TestReadRunReport(t *testing.T) {
	dir := t.TempDir()
	r, err := readRunReport(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	require.Equal(t, "", r.Equation)
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"config": 3}`), 0o644))
	_, err = readRunReport(bad)
	require.ErrorContains(t, err, "bad.json: not a run report")
}

func TestPlotsDue(t *testing.T) {
	cfg := config.Default()
	cfg.Output.SnapshotEvery = 0
	require.False(t, plotsDue(cfg), "the default problem: no snapshots on a schedule")
	cfg.Output.SnapshotEvery = 10
	require.True(t, plotsDue(cfg))
	cfg.Output.Formats = nil
	require.False(t, plotsDue(cfg))
	cfg.Output.Formats, cfg.Output.DiagnosticsEvery = []string{"vti"}, 0
	require.False(t, plotsDue(cfg))
}
