package operator

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// imports is every package the non-test Go files of dir (relative to the
// module root) import.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, dir)
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, im := range af.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			require.NoError(t, err)
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// The design in the imports: the operator is the one caller of the
// kernels (the time loop and multigrid talk to it), multigrid knows no
// transport, and the config asks the plan, never the solvers.
func TestDependencies(t *testing.T) {
	for dir, banned := range map[string][]string{
		"solver":    {"heat/stencil"},
		"multigrid": {"heat/stencil", "heat/comm/local", "heat/solver"},
		"io/config": {"heat/solver", "heat/multigrid"},
		"plan":      {"heat/solver", "heat/multigrid", "heat/stencil"},
	} {
		got := imports(t, dir)
		for _, b := range banned {
			require.NotContains(t, got, b, "%s imports %s", dir, b)
		}
	}
	require.Contains(t, imports(t, "operator"), "heat/stencil")
}
