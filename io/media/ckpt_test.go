package media

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
)

// writeSteps writes checkpoints of steps under a fresh root on one rank, in
// chunks of chunk, each holding u = the test field + step and k = the test
// field, and returns the root.
func writeSteps(t *testing.T, shape, chunk []int, steps ...int) string {
	t.Helper()
	root := t.TempDir()
	g, err := decomp.New(shape, 1, nil, nil)
	require.NoError(t, err)
	lay := decomp.NewLayout(g.Box(0), 0)
	for _, step := range steps {
		u := fieldValues(shape)
		for i := range u {
			u[i] += float64(step)
		}
		meta := checkpoint.Meta{Step: step, Config: fmt.Appendf(nil, `{"grid":{"shape":%s}}`, strings.ReplaceAll(fmt.Sprint(shape), " ", ",")),
			Arrays: []checkpoint.Array{{Name: "k", Data: fieldValues(shape)}}}
		require.NoError(t, local.Run(1, func(c comm.Comm) error {
			_, err := checkpoint.Write(c, g, lay, u, root, meta, checkpoint.Options{Chunk: chunk})
			return err
		}))
	}
	return root
}

// replaceText replaces the first old in file p with repl.
func replaceText(t *testing.T, p, old, repl string) {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), old, repl, 1)), 0o644))
}

// A heat checkpoint read as a field or a map is checked as a restart
// checks it: chunks swapped between two files, a fill_value edited with a
// chunk deleted, and a seal broken by an edited step are each refused,
// naming the file at fault — by the field reader (CheckField, else
// ReadField) and the map reader (Check and Fill) alike, whether the
// checkpoint folder or its array's folder is named. (They read as wrong
// fields with exit 0 when a second Zarr reader skipped those checks.)
func TestCheckpointCorruptionsRefused(t *testing.T) {
	shape := []int{8, 6}
	for _, c := range []struct {
		name   string
		break_ func(t *testing.T, ck string)
		file   string // the file the message names, under the checkpoint
	}{
		{"chunks swapped", func(t *testing.T, ck string) {
			for _, arr := range []string{"u", "k"} {
				a, b := filepath.Join(ck, arr, "c", "0", "0"), filepath.Join(ck, arr, "c", "1", "1")
				require.NoError(t, os.Rename(a, a+".tmp"))
				require.NoError(t, os.Rename(b, a))
				require.NoError(t, os.Rename(a+".tmp", b))
			}
		}, "c/0/0"},
		{"fill_value edited, a chunk deleted", func(t *testing.T, ck string) {
			for _, arr := range []string{"u", "k"} {
				replaceText(t, filepath.Join(ck, arr, "zarr.json"), `"fill_value": "NaN"`, `"fill_value": 0`)
				require.NoError(t, os.Remove(filepath.Join(ck, arr, "c", "0", "1")))
			}
		}, "zarr.json"},
		{"seal broken: step edited", func(t *testing.T, ck string) {
			replaceText(t, filepath.Join(ck, "zarr.json"), `"step": 3`, `"step": 4`)
		}, "zarr.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := writeSteps(t, shape, []int{4, 3}, 3)
			ck := filepath.Join(root, checkpoint.StepName(3))
			c.break_(t, ck)
			for _, p := range []string{ck, filepath.Join(ck, "u"), filepath.Join(root, "latest"), root} {
				err := CheckField("initial.path", p, shape)
				if err == nil {
					_, err = ReadField("initial.path", p, shape, []int{0, 0}, shape)
				}
				require.ErrorContains(t, err, "media: initial.path: "+p+": ", p)
				require.ErrorContains(t, err, ck+string(filepath.Separator), "names the file at fault: %v", err)
				require.ErrorContains(t, err, filepath.FromSlash(c.file))
			}
			for _, p := range []string{ck, filepath.Join(ck, "k")} {
				s := &Spec{Shape: shape, KMap: p}
				err := s.Check()
				require.ErrorContains(t, err, "media: maps.k: "+p+": ", p)
				require.ErrorContains(t, err, filepath.FromSlash(c.file))
				_, err = s.Fill([]int{0, 0}, shape)
				require.ErrorContains(t, err, "media: maps.k: "+p+": ", p)
			}
		})
	}
}

// A sound checkpoint reads back exactly as a field (its u) and a map (its
// k), box by box, named by its folder, an array folder, its checkpoints
// folder or that folder's latest (the newest checkpoint).
func TestCheckpointInputReadsBack(t *testing.T) {
	shape := []int{8, 6}
	root := writeSteps(t, shape, []int{4, 3}, 1, 2)
	newest := filepath.Join(root, checkpoint.StepName(2))
	want := fieldValues(shape)
	for i := range want {
		want[i] += 2
	}
	for _, p := range []string{newest, filepath.Join(newest, "u"), root, filepath.Join(root, "latest")} {
		require.NoError(t, CheckField("source.path", p, shape))
		for _, b := range append(boxes(shape), [2][]int{{0, 0}, shape}) {
			got, err := ReadField("source.path", p, shape, b[0], b[1])
			require.NoError(t, err, p)
			require.Equal(t, sliceOf(want, shape, b[0], b[1]), got, "%s %v", p, b)
		}
		resolved, err := ResolveCheckpoint("source.path", p)
		require.NoError(t, err)
		if p == root || filepath.Base(p) == "latest" {
			require.Equal(t, newest, resolved)
		} else {
			require.Equal(t, p, resolved, "a path that names no checkpoints folder is left as it is")
		}
	}
	s := &Spec{Shape: shape, KMap: filepath.Join(root, "latest")}
	require.NoError(t, s.Check())
	c, err := s.Fill([]int{0, 0}, shape)
	require.NoError(t, err)
	require.Equal(t, fieldValues(shape), c.K)
}

// A checkpoints folder whose newest checkpoint does not open is refused
// (naming it and why) rather than read as the older one — a field from
// another step without a word — which can still be named.
func TestCheckpointNewestBrokenNotFallenBack(t *testing.T) {
	shape := []int{8, 6}
	root := writeSteps(t, shape, []int{4, 3}, 1, 2)
	newest := filepath.Join(root, checkpoint.StepName(2))
	replaceText(t, filepath.Join(newest, "zarr.json"), `"step": 2`, `"step": 7`)
	for _, p := range []string{root, filepath.Join(root, "latest")} {
		_, err := ReadField("initial.path", p, shape, []int{0, 0}, shape)
		require.ErrorContains(t, err, fmt.Sprintf("media: initial.path: %s: the newest checkpoint %s does not open (", p, newest))
		require.ErrorContains(t, err, "heat reads no older one in its place")
		_, err = ResolveCheckpoint("initial.path", p)
		var me *MapError
		require.ErrorAs(t, err, &me)
		require.Equal(t, "initial.path", me.Key)
	}
	older, err := ReadField("initial.path", filepath.Join(root, checkpoint.StepName(1)), shape, []int{0, 0}, shape)
	require.NoError(t, err)
	want := fieldValues(shape)
	for i := range want {
		want[i]++
	}
	require.Equal(t, want, older)
}
