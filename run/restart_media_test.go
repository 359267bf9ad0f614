package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/io/config"
	"heat/io/report"
	"heat/solver"
)

// twoMaterials is a random medium of two materials (k 1, ρc 1 and k 40,
// ρc 2.5) with insulating holes (k 0) and cells held at 1.5 sprinkled in,
// given cell by cell over the whole grid (C order).
type twoMaterials struct {
	shape         []int
	k, rhoC, held []float64
}

func newTwoMaterials(shape []int, seed uint64) *twoMaterials {
	n := 1
	for _, s := range shape {
		n *= s
	}
	r := rand.New(rand.NewPCG(seed, 7))
	m := &twoMaterials{shape: shape}
	for range n {
		k, rc, h := 1.0, 1.0, math.NaN()
		switch x := r.Float64(); {
		case x < 0.45:
			k, rc = 40, 2.5
		case x < 0.52:
			k = 0 // a hole
		case x < 0.57:
			h = 1.5 // held
		}
		m.k, m.rhoC, m.held = append(m.k, k), append(m.rhoC, rc), append(m.held, h)
	}
	return m
}

// at is the position of global cell idx.
func (m *twoMaterials) at(idx []int) int {
	i := 0
	for a, x := range idx {
		i = i*m.shape[a] + x
	}
	return i
}

// fn is the medium as a solver reads it, box by box.
func (m *twoMaterials) fn() solver.MediaFunc {
	return func(_ comm.Comm, lo, hi []int) (k, rhoC, held []float64, err error) {
		eachCell(lo, hi, func(idx []int) {
			i := m.at(idx)
			k, rhoC, held = append(k, m.k[i]), append(rhoC, m.rhoC[i]), append(held, m.held[i])
		})
		return k, rhoC, held, nil
	}
}

// eachCell calls f with every cell of box [lo, hi), C order.
func eachCell(lo, hi []int, f func(idx []int)) {
	idx := slices.Clone(lo)
	for {
		f(idx)
		a := len(idx) - 1
		for ; a >= 0; a-- {
			if idx[a]++; idx[a] < hi[a] {
				break
			}
			idx[a] = lo[a]
		}
		if a < 0 {
			return
		}
	}
}

// mediaSpec is an explicit heat run of 40 steps in medium m, its time step
// the media's (automatic).
func mediaSpec(m *twoMaterials) solver.Spec {
	return solver.Spec{
		Shape: m.shape, Length: []float64{1.2, 1}, Ghost: 1, Alpha: 1,
		Steps: 40, CheckEvery: 10, Faces: make([][2]solver.Face, 2),
		Initial: solver.Gaussian([]float64{0.5, 0.4}, 0.2, 3, 0.25),
		Source:  solver.Constant(0.5),
		Threads: 1, Media: m.fn(),
	}
}

// fieldSHA is the report's field.sha256 of the solver's field. Collective;
// "" on ranks other than 0.
func fieldSHA(c comm.Comm, s *solver.Solver) (string, error) {
	g, err := s.Gather()
	if err != nil || c.Rank() != 0 {
		return "", err
	}
	return report.Summarise(g, true).SHA256, nil
}

// writeMediaCheckpoint runs spec on ranks ranks to step, checkpoints it as
// a run does (beginCheckpoint, finishCheckpoint: in the background, the
// chunks across the boxes) and returns the checkpoint.
func writeMediaCheckpoint(t *testing.T, spec solver.Spec, ranks, step int) *checkpoint.Checkpoint {
	t.Helper()
	root := t.TempDir()
	cfg := config.Default()
	cfg.Grid.Shape = spec.Shape
	cfg.Checkpoint.Dir = root
	cfg.Checkpoint.Chunk = []int{7, 6}
	j := &job{cfg: cfg, given: cfg, rep: &report.Report{}, log: newLogger(io.Discard, true), runID: "media-test"}
	require.NoError(t, local.Run(ranks, func(c comm.Comm) error {
		s, err := solver.New(c, spec)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.RunTo(context.Background(), step); err != nil {
			return err
		}
		p, err := beginCheckpoint(c, s, j, s.Grid().Dims)
		if err != nil {
			return err
		}
		return finishCheckpoint(c, j, step, p)
	}))
	path, err := checkpoint.Resolve(root)
	require.NoError(t, err)
	ck, err := checkpoint.Open(path)
	require.NoError(t, err)
	require.Equal(t, step, ck.Meta().Step)
	return ck
}

// A run in media checkpoints its media beside the field (written on 2
// ranks), and checkpointMedia gives them back exactly, cell by cell, on
// other rank counts and process grids: k, ρc, and the held value where a
// cell is held (NaN where free). Continuing from the checkpoint on 3
// ranks, with only the checkpoint's media, ends with the bits of the run
// that went straight through on 1.
func TestRestartMediaFromCheckpoint(t *testing.T) {
	m := newTwoMaterials([]int{24, 20}, 3)
	spec := mediaSpec(m)

	// Straight through on 1 rank.
	var straight string
	require.NoError(t, local.Run(1, func(c comm.Comm) error {
		s, err := solver.New(c, spec)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.Run(context.Background()); err != nil {
			return err
		}
		straight, err = fieldSHA(c, s)
		return err
	}))
	require.NotEmpty(t, straight)

	ck := writeMediaCheckpoint(t, spec, 2, 20)
	require.Equal(t, []string{"u", "k", "rho_c", "mask"}, ck.Arrays())
	require.Empty(t, checkpoint.Verify(ck.Path()))
	mf := checkpointMedia(ck)
	require.NotNil(t, mf)

	// The media back, on grids unlike the writer's.
	for _, tc := range []struct {
		ranks int
		dims  []int
	}{{3, nil}, {3, []int{1, 3}}, {3, []int{3, 1}}, {4, []int{2, 2}}, {1, nil}} {
		t.Run(fmt.Sprintf("ranks=%d/dims=%v", tc.ranks, tc.dims), func(t *testing.T) {
			g, err := decomp.New(m.shape, tc.ranks, tc.dims, nil)
			require.NoError(t, err)
			require.NoError(t, local.Run(tc.ranks, func(c comm.Comm) error {
				b := g.Box(c.Rank())
				k, rhoC, held, err := mf(c, b.Lo, b.Hi)
				if err != nil {
					return err
				}
				if len(k) != b.Size() || len(rhoC) != b.Size() || len(held) != b.Size() {
					return fmt.Errorf("rank %d: %d, %d, %d values for a box of %d", c.Rank(), len(k), len(rhoC), len(held), b.Size())
				}
				n := 0
				var bad error
				eachCell(b.Lo, b.Hi, func(idx []int) {
					i := m.at(idx)
					for _, v := range [][3]float64{{k[n], m.k[i], 0}, {rhoC[n], m.rhoC[i], 1}, {held[n], m.held[i], 2}} {
						if math.Float64bits(v[0]) != math.Float64bits(v[1]) && !(math.IsNaN(v[0]) && math.IsNaN(v[1])) && bad == nil {
							bad = fmt.Errorf("rank %d cell %v: %s is %v, want %v", c.Rank(), idx, []string{"k", "rho_c", "held"}[int(v[2])], v[0], v[1])
						}
					}
					n++
				})
				return bad
			}))
		})
	}

	// Continued on 3 ranks from the checkpoint alone.
	for _, dims := range [][]int{nil, {3, 1}} {
		re := spec
		re.Dims = dims
		re.Media = checkpointMedia(ck)
		var continued string
		require.NoError(t, local.Run(3, func(c comm.Comm) error {
			s, err := solver.New(c, re)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := checkpoint.Read(c, ck, s.Grid(), s.Layout(), s.Field(), checkpoint.Options{}); err != nil {
				return err
			}
			s.Restore(ck.Meta().Step, math.NaN(), false, 0)
			if err := s.Run(context.Background()); err != nil {
				return err
			}
			if s.Step() != 40 {
				return fmt.Errorf("ended at step %d", s.Step())
			}
			sha, err := fieldSHA(c, s)
			if c.Rank() == 0 {
				continued = sha
			}
			return err
		}))
		require.Equal(t, straight, continued, "dims %v", dims)
	}
}

// A uniform run's checkpoint holds no media: a restart from it keeps the
// config's (none). A damaged k chunk fails the restart's media on every
// rank, as a usage error naming the checkpoint and the chunk.
func TestRestartMediaRefused(t *testing.T) {
	m := newTwoMaterials([]int{24, 20}, 5)
	uniform := mediaSpec(m)
	uniform.Media, uniform.DT = nil, 0.0005
	require.Nil(t, checkpointMedia(writeMediaCheckpoint(t, uniform, 2, 10)))
	require.Nil(t, checkpointMedia(nil))

	ck := writeMediaCheckpoint(t, mediaSpec(m), 2, 10)
	keys := ck.ChunkKeys()
	key := keys[len(keys)-1]
	file := ck.ArrayChunkFile("k", key)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	b[len(b)/2] ^= 4
	require.NoError(t, os.WriteFile(file, b, 0o644))
	re := mediaSpec(m)
	re.Media = checkpointMedia(ck)
	errs := make([]error, 3)
	require.NoError(t, local.Run(3, func(c comm.Comm) error {
		s, err := solver.New(c, re)
		if err == nil {
			s.Close()
		}
		errs[c.Rank()] = err
		return nil
	}))
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		var ue UsageError
		require.True(t, errors.As(err, &ue), "rank %d: %v", r, err)
		require.ErrorIs(t, err, checkpoint.ErrChecksum, "rank %d", r)
		require.ErrorContains(t, err, "cannot restart from "+ck.Path(), "rank %d", r)
		require.ErrorContains(t, err, filepath.Join("k", filepath.FromSlash(key)), "rank %d", r)
	}

	// Boxes that are no process grid's are refused on every rank.
	require.NoError(t, local.Run(2, func(c comm.Comm) error {
		lo, hi := []int{0, 0}, []int{24, 20}
		if c.Rank() == 1 {
			lo, hi = []int{0, 5}, []int{24, 20}
		}
		_, err := boxGrid(c, m.shape, lo, hi)
		if err == nil {
			return fmt.Errorf("rank %d: no error", c.Rank())
		}
		return nil
	}))
}
