package config

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"
)

// The kinds expr and file take their keys, and a formula is checked when
// the config loads.
func TestFormulaKinds(t *testing.T) {
	p := writeFile(t, "x.toml", `[initial]
kind = "expr"
expr = "sin(pi*x)*sin(pi*y)"
[source]
kind = "expr"
expr = "t < 0.1 ? 0 : 1e3*exp(-((x-0.5)^2 + (y-0.5)^2)/0.01)"
`)
	c, err := resolve(t, "-c", p)
	require.NoError(t, err)
	require.Equal(t, "expr", c.Initial.Kind)
	require.Equal(t, "t < 0.1 ? 0 : 1e3*exp(-((x-0.5)^2 + (y-0.5)^2)/0.01)", c.Source.Expr)

	c, err = resolve(t, "--set", "initial.kind=file", "--set", "initial.path=runs/a/checkpoints/latest")
	require.NoError(t, err)
	require.Equal(t, "runs/a/checkpoints/latest", c.Initial.Path, "a path is taken as given (relative to where heat runs)")

	// The resolved config, as --dry-run prints it, loads back the same.
	var b strings.Builder
	require.NoError(t, toml.NewEncoder(&b).Encode(c))
	again, err := resolve(t, "-c", writeFile(t, "again.toml", b.String()))
	require.NoError(t, err)
	require.Equal(t, c.Initial, again.Initial)
	require.NotContains(t, b.String(), "expr =", "an empty expr is left out")
}

func TestFormulaBadInput(t *testing.T) {
	for _, r := range []struct {
		name string
		args []string
		key  string
		want string
	}{
		{"does not parse", []string{"--set", "source.kind=expr", "--set", `source.expr="x +* 2"`}, "source.expr",
			`--set source.expr="x +* 2": source.expr: column 4: unexpected token Operator("*")`},
		{"unknown variable", []string{"--set", "source.kind=expr", "--set", `source.expr="t < 0.1 ? 0 : tt"`}, "source.expr",
			"source.expr: column 15: unknown name tt (did you mean t?)"},
		{"not a number", []string{"--set", "initial.kind=expr", "--set", `initial.expr="x < 0.5"`}, "initial.expr",
			"initial.expr: gives true or false, not a number"},
		{"expr missing", []string{"--set", "initial.kind=expr"}, "initial.expr", "initial.expr: is missing"},
		{"path missing", []string{"--set", "initial.kind=file"}, "initial.path", "initial.path: is missing"},
		{"expr without its kind", []string{"--set", `initial.expr="x"`}, "initial.expr",
			`initial.expr: is read only with initial.kind = "expr" (the kind is "hotspot")`},
		{"path without its kind", []string{"--set", "initial.kind=expr", "--set", `initial.expr="x"`, "--set", "initial.path=a.npy"}, "initial.path",
			`initial.path: is read only with initial.kind = "file" (the kind is "expr")`},
		{"source file without its path", []string{"--set", "source.kind=file"}, "source.path", `source.path: is missing: source.kind = "file" reads the field`},
		{"poisson source in time", []string{"--set", "equation.kind=poisson", "--set", "source.kind=expr", "--set", `source.expr="t*x"`}, "source.expr",
			"reads t, but a poisson problem has no time"},
	} {
		t.Run(r.name, func(t *testing.T) {
			_, err := resolve(t, r.args...)
			var ce *Error
			require.ErrorAs(t, err, &ce)
			require.Equal(t, r.key, ce.Key, "%v", err)
			require.Contains(t, err.Error(), r.want)
		})
	}
}
