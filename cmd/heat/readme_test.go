package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readmeBlock is the first sh block after the README's heading, its
// command lines (comments and the lines that build heat dropped).
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "README has %q", heading)
	text = text[i:]
	start := strings.Index(text, "```sh\n")
	require.GreaterOrEqual(t, start, 0)
	text = text[start+len("```sh\n"):]
	text = text[:strings.Index(text, "```")]
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "go build") {
			continue
		}
		lines = append(lines, line)
	}
	return lines
}

// The README's Running block works as written, in order, in a fresh
// folder: every line exits 0, none prints a stack trace.
func TestReadmeRunningBlock(t *testing.T) {
	lines := readmeBlock(t, "## Running")
	require.GreaterOrEqual(t, len(lines), 10)
	dir := t.TempDir()
	bin := filepath.Join(dir, "heat")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	configs, err := filepath.Abs("../../configs")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(configs, filepath.Join(dir, "configs")))
	for _, line := range lines {
		require.True(t, strings.HasPrefix(line, "./heat "), "a command of the block: %q", line)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		require.NoError(t, err, "%s\n%s", line, out)
		require.NotContains(t, string(out), "goroutine ", line)
	}
	require.FileExists(t, filepath.Join(dir, "field.png"))
	require.FileExists(t, filepath.Join(dir, "hot.json"))
	r := readReport(t, filepath.Join(dir, "runs", "hot", "report.json"))
	require.Equal(t, 5000, r.Steps, "the restart continued the run to its new total")
	require.Equal(t, "completed", r.Status)
}
