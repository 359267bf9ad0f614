package multigrid

import (
	"flag"
	"os"
	"testing"

	"heat/internal/team"
)

// TestMain splits even the tests' small sweeps over the workers
// (team.SoloCells 0), so that the tests comparing thread counts compare
// the split levels, not one worker with itself; benchmarks keep the
// default.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		team.SetSoloCells(0)
	}
	os.Exit(m.Run())
}
