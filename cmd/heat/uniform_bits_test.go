package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUniformProblemsKeepTheirBits: the example problems in the uniform
// medium give the field.sha256 they gave before heterogeneous media came
// (recorded from commit 3534610): the media path is beside the uniform
// kernels, not instead of them, and every refactoring since kept their
// arithmetic.
func TestUniformProblemsKeepTheirBits(t *testing.T) {
	for _, c := range []struct {
		args string
		sha  string
	}{
		{"-c default --steps 300", "f8d96202d1692dad2199de5801d7d7e3e0147e23c4ba85b63b7c4ccd66ac0159"},
		{"-c default --steps 300 --set grid.ghost=4", "f8d96202d1692dad2199de5801d7d7e3e0147e23c4ba85b63b7c4ccd66ac0159"},
		{"-c poisson-2d", "46d34d683a55fc5e7009252d9fba258dff7beae1037009e3c708570052358c06"},
		{"-c poisson-2d --set equation.solver=jacobi --steps 3000", "59a9f7b6086045e5469f327804cce3874da30ea352b84ed8552d1c1f2c2e69a5"},
		{"-c poisson-2d --set multigrid.smoother=rbgs", "df11bbc0b3cdc248"},
		// The same 7 cycles as before solves were judged by their
		// componentwise backward error (5 reach the config's 1e-11).
		{"-c poisson-2d --set multigrid.cycle=fmg --set run.tolerance=1e-13", "a922fb56f90ff918"},
		{"-c implicit-heat-2d --steps 20", "f830c0decab1fa56009077c0424744d98476c42a8c27ac185d0833d5805dec55"},
		{"-c cube-3d --steps 50", "ab22a07acbcebebac968a43437daecb3442cc5ad824e48f641f7892145b65167"},
		{"-c hotplate-2d --steps 500", "a18c8c18d88e41a566cf67b3d920f97e3e99393e5324ba90039624b45d590192"},
		{"-c periodic-2d --steps 200", "9864204a0fc87e48592c456c088bf363b41ca117ae6972afe4ce8c7ac55ab08e"},
		{"-c poisson-3d --steps 4", "98f0bbd9fd9af25b8e55e90349f777b39f81ce2c02a8858c5d6df0fb01c29579"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := heat(t, append([]string{"run", "--out", out, "-q"}, strings.Fields(c.args)...)...)
		require.Equal(t, 0, code, "%s: %s", c.args, stderr)
		got := readReport(t, filepath.Join(out, "report.json")).Field.SHA256
		require.True(t, strings.HasPrefix(got, c.sha), "%s: field.sha256 %s, was %s", c.args, got, c.sha)
	}
}
