package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/io/config"
)

// runErr runs args and returns the run's error (its report is not read).
func runErr(t *testing.T, args ...string) error {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	opt := Options{Flags: config.AddFlags(fs), Quiet: true, Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}
	require.NoError(t, fs.Parse(args))
	return Run(context.Background(), opt)
}

// A run whose initial.path names another run's checkpoints (its output
// folder, checkpoints folder or latest) whose newest checkpoint does not
// open — its seal broken by an edited step — is refused (exit 2) naming
// it, instead of starting without a word from the older checkpoint; named
// itself, the broken one is refused as --restart refuses it; and a
// missing chunk of the older one, named, is refused as well.
func TestInitialFromBrokenCheckpointRefused(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	_, err := runWith(t, "", "--set", "grid.shape=[16,12]", "--set", "initial.kind=random", "--steps", "4",
		"--set", "checkpoint.every=2", "--set", "checkpoint.chunk=[8,6]", "--set", "checkpoint.shard=\"none\"", "--out", first)
	require.NoError(t, err)
	root := filepath.Join(first, "checkpoints")
	newest, older := filepath.Join(root, checkpoint.StepName(4)), filepath.Join(root, checkpoint.StepName(2))
	meta := filepath.Join(newest, "zarr.json")
	b, err := os.ReadFile(meta)
	require.NoError(t, err)
	require.Contains(t, string(b), `"step": 4`)
	require.NoError(t, os.WriteFile(meta, []byte(strings.Replace(string(b), `"step": 4`, `"step": 5`, 1)), 0o644))

	problem := []string{"--set", "grid.shape=[16,12]", "--set", "initial.kind=file", "--steps", "1", "--ranks", "2"}
	for i, from := range []string{first, root, filepath.Join(root, "latest"), newest} {
		err := runErr(t, append(problem, "--set", "initial.path="+from, "--out", filepath.Join(dir, "from", string(rune('a'+i))))...)
		require.Equal(t, 2, ExitCode(err), "%s: %v", from, err)
		require.ErrorContains(t, err, "initial.path: ", from)
		require.ErrorContains(t, err, meta, from)
	}
	require.NoError(t, os.Remove(filepath.Join(older, "u", "c", "1", "1")))
	err = runErr(t, append(problem, "--set", "initial.path="+older, "--out", filepath.Join(dir, "from", "older"))...)
	require.Equal(t, 2, ExitCode(err), "%v", err)
	require.ErrorContains(t, err, filepath.Join(older, "u", "c", "1", "1")+" is missing")
}
