package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
)

// mediaCheckpoint writes, on 2 ranks, a checkpoint of a 24×20 field with
// media beside it as a run in media does: k over 6 decades with holes (a
// 4×4 block at the origin among them), rho_c, and a mask of held cells.
// It returns the checkpoint's folder.
func mediaCheckpoint(t *testing.T) string {
	t.Helper()
	shape := []int{24, 20}
	root := t.TempDir()
	g, err := decomp.New(shape, 2, nil, nil)
	require.NoError(t, err)
	cfg := []byte(`{"grid":{"shape":[24,20],"length":[1.2,1]},"output":{"image_size":64}}`)
	require.NoError(t, local.Run(2, func(c comm.Comm) error {
		lay := decomp.NewLayout(g.Box(c.Rank()), 1)
		u, k, rc, mask := make([]float64, lay.Len()), make([]float64, lay.Len()), make([]float64, lay.Len()), make([]float64, lay.Len())
		b := lay.Box
		for y := b.Lo[0]; y < b.Hi[0]; y++ {
			for x := b.Lo[1]; x < b.Hi[1]; x++ {
				i, cell := field.Index(lay, []int{y, x}), y*20+x
				u[i] = math.Sin(float64(cell))
				switch {
				case y < 4 && x < 4, cell%9 == 4:
					k[i] = 0
				case cell%2 == 0:
					k[i] = 5000
				default:
					k[i] = 0.004
				}
				rc[i] = 1 + float64(cell%3)
				if cell%7 == 1 {
					mask[i] = 1
				}
			}
		}
		meta := checkpoint.Meta{Step: 7, Time: 0.25, Config: cfg, Arrays: []checkpoint.Array{
			{Name: "k", Data: k}, {Name: "rho_c", Data: rc}, {Name: "mask", Type: checkpoint.Uint8, Data: mask}}}
		_, err := checkpoint.Write(c, g, lay, u, root, meta, checkpoint.Options{Chunk: []int{7, 6}})
		return err
	}))
	return filepath.Join(root, checkpoint.StepName(7))
}

// heat inspect lists a checkpoint's arrays; --verify checks the chunks of
// every one and names a damaged k chunk (exit 1).
func TestInspectMediaArrays(t *testing.T) {
	dir := mediaCheckpoint(t)
	code, stdout, stderr := heat(t, "inspect", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "arrays       u float64, k float64, rho_c float64, mask uint8")
	code, stdout, stderr = heat(t, "inspect", dir, "--verify")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "verify       ok: 16 chunks of each of 4 arrays")

	code, stdout, stderr = heat(t, "inspect", dir, "--json")
	require.Equal(t, 0, code, stderr)
	var in struct {
		Arrays []struct {
			Name     string `json:"name"`
			DataType string `json:"data_type"`
		} `json:"arrays"`
		RawBytes int64 `json:"raw_bytes"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &in))
	require.Len(t, in.Arrays, 4)
	require.Equal(t, "mask", in.Arrays[3].Name)
	require.Equal(t, "uint8", in.Arrays[3].DataType)
	require.Equal(t, int64(24*20*(8+8+8+1)), in.RawBytes)

	file := filepath.Join(dir, "k", "c", "2", "1")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	b[len(b)/2] ^= 1
	require.NoError(t, os.WriteFile(file, b, 0o644))
	code, stdout, _ = heat(t, "inspect", dir, "--verify")
	require.Equal(t, 1, code)
	require.Contains(t, stdout, "verify       BAD: checkpoint: chunk "+file)
	require.Contains(t, stdout, "checkpoint corrupted")
}
