package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/configs"
	"heat/run"
)

// Help goes to stdout when asked for, in every form, with examples.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"run", "--help"}, {"help", "run"}, {"run", "-h"},
		{"bench", "kernel", "--help"}, {"help", "config", "show"}, {"inspect", "--help"}} {
		code, stdout, stderr := heat(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.Empty(t, stderr, "%v", args)
		require.Contains(t, stdout, "Usage:", "%v", args)
	}
	_, runHelp, _ := heat(t, "help", "run")
	require.Contains(t, runHelp, "--restart")
	require.Contains(t, runHelp, "Examples:")
	require.Contains(t, runHelp, "run.steps is the total step count")
	_, top, _ := heat(t, "help")
	for _, c := range []string{"run", "inspect", "render", "bench", "config", "completion", "version"} {
		require.Contains(t, top, "  "+c+" ", "the top-level help lists %s", c)
	}
}

// A mistyped command or flag exits 2 and suggests the nearest one.
func TestSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rn"}, "run"},
		{[]string{"inspcet", "x"}, "inspect"},
		{[]string{"run", "--stpes", "3"}, "--steps"},
		{[]string{"run", "--thread=2"}, "--threads"},
		{[]string{"bench", "kernal"}, `"kernel"`},
		{[]string{"config", "lst"}, `"list"`},
	} {
		code, _, stderr := heat(t, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want, "%v", c.args)
		require.NotContains(t, stderr, "goroutine ", "no stack trace")
	}
}

// heat completion prints a script for each shell that names heat's
// commands; the dynamic completion of config show lists the examples.
func TestCompletionScripts(t *testing.T) {
	marks := map[string]string{"bash": "complete -o default -F __start_heat heat", "zsh": "#compdef heat", "fish": "complete -c heat"}
	for shell, mark := range marks {
		code, stdout, stderr := heat(t, "completion", shell)
		require.Equal(t, 0, code, "%s: %s", shell, stderr)
		require.Contains(t, stdout, mark, shell)
	}
	code, stdout, _ := heat(t, "__complete", "config", "show", "pois")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "poisson-2d")
	require.Contains(t, stdout, "poisson-3d")
	code, stdout, _ = heat(t, "__complete", "r")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "run")
	require.Contains(t, stdout, "render")
}

// config list names every embedded example, config show prints one as
// embedded, and an unknown name exits 2 naming those there are.
func TestConfigListAndShow(t *testing.T) {
	code, stdout, _ := heat(t, "config", "list")
	require.Equal(t, 0, code)
	for _, ex := range configs.Examples() {
		require.Contains(t, stdout, ex.Name)
		require.NotEmpty(t, ex.Title, ex.Name)
		code, shown, _ := heat(t, "config", "show", ex.Name)
		require.Equal(t, 0, code)
		require.Equal(t, string(ex.Text), shown)
	}
	require.GreaterOrEqual(t, len(strings.Split(strings.TrimSpace(stdout), "\n")), 7)
	code, _, stderr := heat(t, "config", "show", "nope")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `"nope"`)
	require.Contains(t, stderr, "poisson-2d")
	code, _, stderr = heat(t, "config")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "list or show")
}

func TestVersionJSON(t *testing.T) {
	code, stdout, _ := heat(t, "version", "--json")
	require.Equal(t, 0, code)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))
	require.Equal(t, run.Version, v["version"])
	require.Contains(t, v["kernels"], "generic")
}
