package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A medium with nothing to solve or whose faces overflow is refused before
// a step (exit 2, the cause named), and the run still leaves a report that
// parses; before, the steps ran with dt = +Inf and the report could not be
// written ("json: unsupported value: +Inf").
func TestMediaWithNothingToSolveRefused(t *testing.T) {
	whole := func(k string, extra string) []string {
		return []string{"--set", `material=[{region = "box", lo = [0.0, 0.0], hi = [1.0, 1.0], k = ` + k + extra + `}]`}
	}
	cases := []struct {
		name string
		sets []string
		want string
	}{
		{"k = 0 everywhere", whole("0.0", ""), "no free conducting cell"},
		{"every cell held", whole("1.0", ", fixed = 2.0"), "no free conducting cell"},
		{"k near 1e308", whole("1e308", ""), "face coefficients k_f/h² overflow"},
	}
	for _, tc := range cases {
		for _, eq := range [][]string{{"--set", "equation.kind=heat"}, {"--set", "equation.kind=poisson"}} {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-q", "--set", "grid.shape=[16,12]", "--ranks", "2", "--out", out}, tc.sets...)
			code, _, stderr := heat(t, append(args, eq...)...)
			require.Equal(t, 2, code, "%s %v: %s", tc.name, eq, stderr)
			require.Contains(t, stderr, tc.want, tc.name)
			require.NotContains(t, stderr, "goroutine")
			data, err := os.ReadFile(filepath.Join(out, "report.json"))
			require.NoError(t, err, tc.name)
			var rep map[string]any
			require.NoError(t, json.Unmarshal(data, &rep), "%s: the report parses", tc.name)
			require.Equal(t, "failed", rep["status"])
			require.EqualValues(t, 2, rep["exit_code"])
		}
	}
}
