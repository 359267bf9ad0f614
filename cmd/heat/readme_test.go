package main

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The README as a user follows it: its sh blocks, top to bottom, in one
// fresh copy of the module, the setup block's first command (the default
// run) first. A line the test does not run is one of the kinds below, each
// with its reason, so a new command in the README is run unless it is
// one of them.
var readmeNotRun = []struct {
	pattern *regexp.Regexp
	why     string
}{
	{regexp.MustCompile(`^go test -race \./\.\.\.`), "the test suite itself (this test is part of it; .ci/run runs it)"},
	{regexp.MustCompile(`^(sudo |mpirun |srun |CC=mpicc |go build -tags mpi)`), "MPI: the cmd/heat MPI tests run heat under mpirun"},
	{regexp.MustCompile(`big\.toml|--restart big|big/checkpoints`), "big.toml stands for the user's own large problem"},
	{regexp.MustCompile(`^(\./)?heat bench |^(HEAT_KERNEL=\w+ )?(\./)?heat bench |^go test -run XXX -bench|^benchmarks/`), "benchmarks: minutes each; their code has tests of its own"},
}

// manualPages are the manual's pages under docs/, in the order the README
// lists them and a user reads them.
var manualPages = []string{"getting-started", "running", "configuration", "inputs", "solvers", "media",
	"boundaries", "checkpoints", "outputs", "report", "mpi", "performance", "how-it-works"}

// readmeLines is every command line of the sh blocks of the README, then
// of each manual page in order, comments dropped and `a && b` split.
func readmeLines(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, f := range append([]string{"README.md"}, pageFiles()...) {
		lines = append(lines, shLines(t, "../../"+f)...)
	}
	return lines
}

func pageFiles() []string {
	var out []string
	for _, p := range manualPages {
		out = append(out, "docs/"+p+".md")
	}
	return out
}

// shLines is every command line of the sh blocks of one file.
func shLines(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var lines []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		case !in:
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, part := range strings.Split(line, " && ") {
			lines = append(lines, strings.TrimSpace(part))
		}
	}
	return lines
}

// copyModule copies the module's tracked sources (no tests, no test data)
// into dir: a fresh clone as a user has it.
func copyModule(t *testing.T, dir string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "heat-out" || name == "results") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() || name == "heat" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	}))
}

// Every line of the README works when followed in order in a fresh copy:
// the default run first (it prints the README's reference sha256), then
// each block's commands, each exiting 0 without a stack trace.
func TestReadmeTopToBottom(t *testing.T) {
	lines := readmeLines(t)
	require.GreaterOrEqual(t, len(lines), 20)
	require.Equal(t, "go run ./cmd/heat run", lines[0], "the README's first command runs the default problem")
	require.Equal(t, "go test -race ./...", lines[1], "its second runs the tests")
	ci, err := os.ReadFile("../../.ci/run")
	require.NoError(t, err)
	require.Contains(t, string(ci), "go test -race -count=1 ./...", "CI runs the README's test command")

	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	sha := regexp.MustCompile(`(?m)^sha256 ([0-9a-f]{64})$`).FindSubmatch(readme)
	require.NotNil(t, sha, "the README shows the default run's sha256")

	dir := t.TempDir()
	copyModule(t, dir)
	run := func(line string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HEAT_BENCH_CHILD=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s\n%s", line, out)
		require.NotContains(t, string(out), "goroutine ", line)
		return string(out)
	}
	ran := 0
	for _, line := range lines {
		skip := ""
		for _, n := range readmeNotRun {
			if n.pattern.MatchString(line) {
				skip = n.why
			}
		}
		if skip != "" {
			t.Logf("not run: %s (%s)", line, skip)
			continue
		}
		out := run(line)
		if line == lines[0] {
			require.Contains(t, out, "sha256 "+string(sha[1]), "the default run prints the README's reference value")
		}
		ran++
	}
	require.GreaterOrEqual(t, ran, 20)
	for _, f := range []string{"field.png", "line.png", "hot.json", "t.png", "field.pdf", "run.gif"} {
		require.FileExists(t, filepath.Join(dir, f))
	}
	r := readReport(t, filepath.Join(dir, "runs", "hot", "report.json"))
	require.Equal(t, 5000, r.Steps, "the restart continued the run to its new total")
	require.Equal(t, "completed", r.Status)
}

// The README links every page of the manual, in order, and docs/ holds no
// page the manual leaves out.
func TestManualPagesLinked(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	rest := string(readme[strings.Index(string(readme), "## The manual"):])
	for _, f := range pageFiles() {
		i := strings.Index(rest, "]("+f+")")
		require.GreaterOrEqual(t, i, 0, "the README's manual links %s after the pages before it", f)
		rest = rest[i:]
	}
	found, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.Len(t, found, len(manualPages), "docs/ holds a page the manual does not list: %v", found)
}
