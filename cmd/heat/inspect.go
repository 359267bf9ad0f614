package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"heat/checkpoint"
	"heat/decomp"
	"heat/run"
)

// inspectCmd prints a checkpoint's metadata; --verify checks every chunk.
func inspectCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("heat inspect", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	verify := fs.Bool("verify", false, "check every chunk's checksum and contents; exit 1 naming each bad one")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: heat inspect PATH [--verify]\n\nPATH is a checkpoint (step-NNNNNNNN), a checkpoint directory or its `latest` file.\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return run.UsageError{Err: err}
	}
	if fs.NArg() != 1 {
		return usagef("inspect: need one checkpoint path, got %d arguments", fs.NArg())
	}
	path, err := checkpointPath(fs.Arg(0))
	if err != nil {
		return run.UsageError{Err: fmt.Errorf("inspect: %w", err)}
	}
	ck, err := checkpoint.Open(path)
	if err != nil {
		if *verify {
			return fmt.Errorf("inspect: %w", err)
		}
		return run.UsageError{Err: fmt.Errorf("inspect: %w", err)}
	}
	m := ck.Meta()
	shape := ck.Shape()
	raw := int64(8)
	for _, n := range shape {
		raw *= int64(n)
	}
	stored := ck.StoredBytes()
	chunks := 1
	chunk := ck.Chunk()
	for a, n := range shape {
		chunks *= (n + chunk[a] - 1) / chunk[a]
	}
	fmt.Fprintf(stdout, "checkpoint   %s\n", ck.Path())
	fmt.Fprintf(stdout, "step         %d\n", m.Step)
	fmt.Fprintf(stdout, "time         %.9g\n", m.Time)
	fmt.Fprintf(stdout, "shape        %s float64 (%s raw)\n", decomp.FormatDims(shape), mib(raw))
	fmt.Fprintf(stdout, "chunks       %s, %d chunks, zstd level %d with checksums\n", decomp.FormatDims(chunk), chunks, ck.Level())
	ratio := 0.0
	if stored > 0 {
		ratio = float64(raw) / float64(stored)
	}
	fmt.Fprintf(stdout, "stored       %s, compression ratio %.2f\n", mib(stored), ratio)
	fmt.Fprintf(stdout, "written by   %d rank(s)\n", m.Ranks)
	var cfg bytes.Buffer
	if err := json.Indent(&cfg, m.Config, "             ", "  "); err == nil {
		fmt.Fprintf(stdout, "config       %s\n", cfg.String())
	}
	if !*verify {
		return nil
	}
	bad := checkpoint.Verify(path)
	if len(bad) == 0 {
		fmt.Fprintf(stdout, "verify       ok: %d chunks\n", chunks)
		return nil
	}
	for _, e := range bad {
		fmt.Fprintf(stdout, "verify       BAD: %v\n", e)
	}
	return fmt.Errorf("inspect: %s: %d problem(s) found", path, len(bad))
}

// checkpointPath accepts a checkpoint, a checkpoint directory (its newest
// complete checkpoint) or a `latest` file.
func checkpointPath(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%s: no such checkpoint", p)
	}
	if !st.IsDir() && filepath.Base(p) == "latest" {
		return checkpoint.Resolve(filepath.Dir(p))
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(p, "zarr.json")); err != nil {
			if _, err := os.Stat(filepath.Join(p, "latest")); err == nil {
				return checkpoint.Resolve(p)
			}
		}
	}
	return strings.TrimSuffix(p, string(filepath.Separator)), nil
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
