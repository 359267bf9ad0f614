package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"heat/checkpoint"
	"heat/decomp"
	"heat/run"
)

func inspectCommand() *cobra.Command {
	var verify, asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect PATH",
		Short: "print a checkpoint's metadata; --verify checks every chunk",
		Long: `Prints a checkpoint's metadata: step, time, shape, the arrays it holds (u, and of a run
in heterogeneous media k, rho_c and the mask of held cells), chunks, compression, the
ranks that wrote it and the config it was written with. PATH is a checkpoint (step-NNNNNNNN), a
checkpoints folder or its latest file, or a run's output folder. Of a folder it shows the
checkpoint latest names or, where latest is missing, not a plain file or names one that
does not open, the newest that opens, warning what it passed over and why. Only regular
files inside the checkpoints folder are read: a link, a FIFO or a device in place of a
checkpoint's file is refused at once. --verify also reads every chunk of every array
and checks its size and checksum, exiting 1 naming each bad one (and what a folder's
resolution passed over).`,
		Example: `  heat inspect heat-out/checkpoints/latest
  heat inspect heat-out/checkpoints/step-00000500 --verify --json`,
		Args: cobra.ExactArgs(1),
		RunE: body(func(cmd *cobra.Command, args []string) error {
			return inspect(args[0], verify, asJSON, cmd.OutOrStdout(), cmd.ErrOrStderr())
		}),
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "check every chunk's checksum and contents, of every array; exit 1 naming each bad one")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the metadata (and the verification) as JSON")
	return cmd
}

// inspection is what inspect prints, and its --json form.
type inspection struct {
	Path     string          `json:"path"`
	Step     int             `json:"step"`
	Time     float64         `json:"time"`
	Shape    []int           `json:"shape"`
	Arrays   []arrayInfo     `json:"arrays"` // u, then the media
	Chunk    []int           `json:"chunk"`
	Inner    []int           `json:"inner_chunk,omitempty"` // sharded: chunk is the shard, a file each
	Chunks   int             `json:"chunks"`                // of each array
	Level    int             `json:"zstd_level"`
	RawBytes int64           `json:"raw_bytes"` // of every array
	Stored   int64           `json:"stored_bytes"`
	Ranks    int             `json:"ranks"`
	Config   json.RawMessage `json:"config"`
	Verified *bool           `json:"verified,omitempty"` // with --verify
	Problems []string        `json:"problems,omitempty"`
}

// arrayInfo is one array of a checkpoint: its name and value type.
type arrayInfo struct {
	Name     string `json:"name"`
	DataType string `json:"data_type"`
}

// inspect prints checkpoint arg's metadata to stdout.
func inspect(arg string, verify, asJSON bool, stdout, stderr io.Writer) error {
	path, skipped, err := run.ResolveCheckpoint(arg)
	if err != nil {
		return run.UsageError{Err: fmt.Errorf("inspect: %w", err)}
	}
	// What the folder's latest should have been, if it was passed over:
	// the checkpoint shown is another.
	var passed []string
	for _, e := range skipped {
		passed = append(passed, e.Error())
		fmt.Fprintf(stderr, "heat: warning: inspect %s: passed over: %v\n", arg, e)
	}
	ck, err := checkpoint.Open(path)
	if err != nil {
		if verify {
			return fmt.Errorf("inspect: %w", err)
		}
		return run.UsageError{Err: fmt.Errorf("inspect: %w", err)}
	}
	m := ck.Meta()
	in := inspection{Path: ck.Path(), Step: m.Step, Time: m.Time, Shape: ck.Shape(), Chunk: ck.Chunk(), Inner: ck.InnerChunk(), Chunks: 1,
		Level: ck.Level(), RawBytes: ck.RawBytes(), Stored: ck.StoredBytes(), Ranks: m.Ranks, Config: m.Config}
	for a, n := range in.Shape {
		in.Chunks *= (n + in.Chunk[a] - 1) / in.Chunk[a]
	}
	for _, name := range ck.Arrays() {
		in.Arrays = append(in.Arrays, arrayInfo{Name: name, DataType: ck.ArrayType(name)})
	}
	if verify {
		// A folder whose latest names a bad checkpoint fails the
		// verification, whatever the older one shown holds.
		in.Problems = append(in.Problems, passed...)
		for _, e := range checkpoint.Verify(path) {
			in.Problems = append(in.Problems, e.Error())
		}
		ok := len(in.Problems) == 0
		in.Verified = &ok
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(in); err != nil {
			return err
		}
	} else {
		printInspection(stdout, in)
	}
	if len(in.Problems) > 0 {
		return fmt.Errorf("inspect: %s: %d problem(s) found", path, len(in.Problems))
	}
	return nil
}

func printInspection(w io.Writer, in inspection) {
	fmt.Fprintf(w, "checkpoint   %s\n", in.Path)
	fmt.Fprintf(w, "step         %d\n", in.Step)
	fmt.Fprintf(w, "time         %.9g\n", in.Time)
	if len(in.Arrays) <= 1 {
		fmt.Fprintf(w, "shape        %s float64 (%s raw)\n", decomp.FormatDims(in.Shape), mib(in.RawBytes))
	} else {
		var names []string
		for _, a := range in.Arrays {
			names = append(names, a.Name+" "+a.DataType)
		}
		fmt.Fprintf(w, "shape        %s (%s raw)\n", decomp.FormatDims(in.Shape), mib(in.RawBytes))
		fmt.Fprintf(w, "arrays       %s (the media: k = 0 a hole, mask 1 a held cell)\n", strings.Join(names, ", "))
	}
	if in.Inner != nil {
		fmt.Fprintf(w, "shards       %s, %d shard files of %s chunks, zstd level %d with checksums\n", decomp.FormatDims(in.Chunk), in.Chunks, decomp.FormatDims(in.Inner), in.Level)
	} else {
		fmt.Fprintf(w, "chunks       %s, %d chunks, zstd level %d with checksums\n", decomp.FormatDims(in.Chunk), in.Chunks, in.Level)
	}
	ratio := 0.0
	if in.Stored > 0 {
		ratio = float64(in.RawBytes) / float64(in.Stored)
	}
	fmt.Fprintf(w, "stored       %s, compression ratio %.2f\n", mib(in.Stored), ratio)
	fmt.Fprintf(w, "written by   %d rank(s)\n", in.Ranks)
	var cfg bytes.Buffer
	if err := json.Indent(&cfg, in.Config, "             ", "  "); err == nil {
		fmt.Fprintf(w, "config       %s\n", cfg.String())
	}
	if in.Verified == nil {
		return
	}
	if *in.Verified {
		if len(in.Arrays) > 1 {
			fmt.Fprintf(w, "verify       ok: %d chunks of each of %d arrays\n", in.Chunks, len(in.Arrays))
		} else {
			fmt.Fprintf(w, "verify       ok: %d chunks\n", in.Chunks)
		}
	}
	for _, p := range in.Problems {
		fmt.Fprintf(w, "verify       BAD: %s\n", p)
	}
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
