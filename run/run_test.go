package run

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"heat/io/config"
	"heat/io/report"
)

// runWith drives Run as heat run would with args.
func runWith(t *testing.T, restart string, args ...string) (*report.Report, error) {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	opt := Options{Flags: config.AddFlags(fs), Restart: restart, Quiet: true, Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}
	require.NoError(t, fs.Parse(args))
	err := Run(context.Background(), opt)
	cfg, rerr := opt.Flags.Resolve()
	if restart != "" || rerr != nil {
		return nil, err
	}
	data, ferr := os.ReadFile(filepath.Join(cfg.Output.Dir, "report.json"))
	require.NoError(t, ferr)
	var r report.Report
	require.NoError(t, json.Unmarshal(data, &r))
	return &r, err
}

// Run, driven directly: a run stopped halfway and continued from its
// output folder alone, on another rank count, ends with the bits of the
// straight run, and its report says so.
func TestRunRestartsFromItsFolder(t *testing.T) {
	dir := t.TempDir()
	problem := []string{"--set", "grid.shape=[40,28]", "--set", "initial.kind=random", "--set", "boundary.x_lo.kind=neumann"}
	straight, err := runWith(t, "", append(problem, "--steps", "30", "--out", filepath.Join(dir, "straight"))...)
	require.NoError(t, err)
	require.Equal(t, "completed", straight.Status)

	half := filepath.Join(dir, "half")
	_, err = runWith(t, "", append(problem, "--steps", "15", "--ranks", "2", "--out", half, "--set", "checkpoint.final=true")...)
	require.NoError(t, err)
	_, err = runWith(t, half, "--steps", "30", "--ranks", "3")
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(half, "report.json"))
	require.NoError(t, err)
	var r report.Report
	require.NoError(t, json.Unmarshal(data, &r))
	require.Equal(t, straight.Field.SHA256, r.Field.SHA256)
	require.Equal(t, 3, r.Ranks)
	require.Equal(t, 15, r.Restart.Step)
	require.Equal(t, "completed", r.Status)
}
