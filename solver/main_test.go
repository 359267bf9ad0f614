package solver

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
	soloDefault = team.SoloCells
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		team.SetSoloCells(0)
	}
	if emulated = os.Getenv("HEAT_TEST_EMULATOR") != ""; emulated {
		splitRanks = []int{1, 3, 6}
	}
	os.Exit(m.Run())
}

// soloDefault is team.SoloCells outside the tests.
var soloDefault int

// splitRanks are the rank counts the split tests sweep (each with 1 and 2
// threads): every count the acceptance names natively; under an emulator
// (HEAT_TEST_EMULATOR: qemu runs arm64 10–50× slower, for the
// architecture's arithmetic, which arch_test pins) 1, an odd split and
// the most ranks.
var splitRanks = []int{1, 2, 3, 4, 6}

// emulated: the tests run under an emulator (HEAT_TEST_EMULATOR), where
// the largest grids are left to the native run.
var emulated bool
