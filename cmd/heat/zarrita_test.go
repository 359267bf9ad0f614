package main

// Reads heat's checkpoints with zarrita (JavaScript, npm), a third-party
// Zarr v3 implementation, through interop/zarrita/read.mjs. It needs node
// and the packages of interop/zarrita/package-lock.json:
//
//	npm ci --prefix interop/zarrita
//
// Without them the test skips, unless HEAT_REQUIRE_INTEROP=1 (as in CI),
// where it fails instead.

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// zarritaResult is what read.mjs prints.
type zarritaResult struct {
	ZarrFormat     int    `json:"zarr_format"`
	GroupStep      *int   `json:"group_step"`
	Shape          []int  `json:"shape"`
	Chunks         []int  `json:"chunks"`
	DataType       string `json:"data_type"`
	FillValue      any    `json:"fill_value"`
	DimensionNames []any  `json:"dimension_names"`
	SHA256         string `json:"sha256"`
	NaNCount       int    `json:"nan_count"`
	Values         []any  `json:"values"`
}

// zarritaScript returns the path of read.mjs, or skips (fails under
// HEAT_REQUIRE_INTEROP=1) when node or the npm packages are missing.
func zarritaScript(t *testing.T) (node, script string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "interop", "zarrita"))
	require.NoError(t, err)
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("HEAT_REQUIRE_INTEROP") == "1" {
			t.Fatalf("HEAT_REQUIRE_INTEROP=1 but "+format, args...)
		}
		t.Skipf("skipping the zarrita interop check: "+format+" (set HEAT_REQUIRE_INTEROP=1 to make this a failure)", args...)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH (Node.js 20 or later is needed)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "zarrita", "package.json")); err != nil {
		missing("%s/node_modules has no zarrita; install it with: npm ci --prefix interop/zarrita", dir)
	}
	return node, filepath.Join(dir, "read.mjs")
}

func zarritaRead(t *testing.T, node, script, ckpt string) zarritaResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, ckpt, "--values")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node read.mjs %s failed:\n%s", ckpt, stderr.String())
	var res zarritaResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res), "read.mjs printed: %s", stdout.String())
	return res
}

func TestZarritaReadsCheckpoints(t *testing.T) {
	node, script := zarritaScript(t)
	cases := []struct {
		name         string
		shape, chunk []int
		ranks        int
		shard        string // checkpoint.shard: none, auto (the default) or a shape
	}{
		{"2d", []int{37, 29}, []int{8, 7}, 3, "none"},
		{"3d", []int{9, 11, 10}, []int{4, 5, 3}, 4, "none"},
		{"2d-tiny", []int{5, 4}, []int{2, 3}, 2, "none"},
		{"2d-auto", []int{37, 29}, []int{4, 8}, 3, "auto"},
		{"3d-auto", []int{9, 11, 10}, []int{3, 3, 5}, 4, "auto"},
		{"2d-sharded", []int{37, 29}, []int{4, 8}, 3, "[16,16]"},
		{"3d-sharded", []int{9, 11, 10}, []int{3, 3, 5}, 2, "[9,6,10]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const steps = 20
			extra := []string{"--set", "checkpoint.shard=" + tc.shard}
			out, dir := zarrWriteFinalCheckpoint(t, tc.shape, tc.chunk, tc.ranks, steps, 1, extra...)
			rep := readReport(t, filepath.Join(out, "report.json"))
			require.Len(t, rep.Field.SHA256, 64)

			res := zarritaRead(t, node, script, dir)
			require.Equal(t, tc.shape, res.Shape)
			require.Equal(t, tc.chunk, res.Chunks, "zarrita's chunks (a sharded array's: the inner chunks)")
			require.Equal(t, "float64", res.DataType)
			require.NotNil(t, res.GroupStep, "zarrita sees the group's attributes.heat.step")
			require.Equal(t, steps, *res.GroupStep)
			require.Len(t, res.DimensionNames, len(tc.shape))
			require.Zero(t, res.NaNCount, "no fill value (NaN) inside the array")
			require.Equal(t, rep.Field.SHA256, res.SHA256, "zarrita's SHA-256 of u vs report.json field.sha256")

			if tc.shard != "none" {
				return // the spec reader below reads unsharded arrays only
			}
			// Both independent readers agree value for value.
			r, err := newZarrReader(dir)
			require.NoError(t, err)
			defer r.Close()
			a, err := r.array("u")
			require.NoError(t, err)
			got, err := r.readAll("u", a)
			require.NoError(t, err)
			require.Len(t, res.Values, len(got.values))
			for i, v := range got.values {
				x, ok := res.Values[i].(float64)
				require.True(t, ok && !math.IsNaN(v), "value %d: zarrita %v, spec reader %v", i, res.Values[i], v)
				require.Equal(t, math.Float64bits(v), math.Float64bits(x), "value %d", i)
			}
		})
	}
}
