package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
)

// guard fills the ghost layers of every test field; a read that touches a
// ghost shows up as a changed guard.
var guard = math.Float64frombits(0x7ff4_dead_beef_0001)

// value is the test field at global cell idx of a grid of shape: distinct
// for every cell and every salt, with full mantissas so a lost bit shows.
func value(shape, idx []int, salt int) float64 {
	lin := 0
	for a, i := range idx {
		lin = lin*shape[a] + i
	}
	return float64(lin) + math.Sin(float64(lin)+0.5)/3 + 1e6*float64(salt)
}

// smooth is a smooth test field, compressible like a real solution.
func smooth(shape, idx []int, salt int) float64 {
	v := float64(salt)
	for a, i := range idx {
		v += math.Sin(3*float64(i)/float64(shape[a]) + float64(a))
	}
	return v
}

// rankField is a rank's box of the field f, with guard ghosts.
func rankField(g *decomp.Grid, rank, ghost int, f func(idx []int) float64) (decomp.Layout, []float64) {
	box := g.Box(rank)
	lay := decomp.NewLayout(box, ghost)
	u := make([]float64, lay.Len())
	for i := range u {
		u[i] = guard
	}
	eachIndex(box.Lo, box.Hi, func(idx []int) { u[field.Index(lay, idx)] = f(idx) })
	return lay, u
}

// writeField writes the test field (value with salt = step) as checkpoint
// step under root with ranks ranks.
func writeField(t testing.TB, root string, shape []int, ranks, step int, opt Options) []Info {
	t.Helper()
	infos, errs := writeRanks(root, shape, ranks, step, func(int) Options { return opt })
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	return infos
}

// writeRanks writes the test field with ranks ranks, rank r with options
// opt(r), and returns every rank's Info and error.
func writeRanks(root string, shape []int, ranks, step int, opt func(rank int) Options) ([]Info, []error) {
	return writeRanksAs(root, shape, ranks, step, opt, false)
}

// writeRanksAs is writeRanks, with background through Begin and Finish.
func writeRanksAs(root string, shape []int, ranks, step int, opt func(rank int) Options, background bool) ([]Info, []error) {
	infos := make([]Info, ranks)
	errs := make([]error, ranks)
	g, err := decomp.New(shape, ranks, nil, nil)
	if err != nil {
		for r := range errs {
			errs[r] = err
		}
		return infos, errs
	}
	meta := Meta{
		Step:   step,
		Time:   0.125 * float64(step),
		Config: []byte(fmt.Sprintf(`{"grid":{"shape":%s},"run":{"steps":%d}}`, strings.ReplaceAll(fmt.Sprint(shape), " ", ","), step)),
		Extra:  map[string]any{"equation": "heat", "converged": false},
	}
	runErr := local.Run(ranks, func(c comm.Comm) error {
		lay, u := rankField(g, c.Rank(), 1, func(idx []int) float64 { return value(shape, idx, step) })
		o := opt(c.Rank())
		if !background {
			infos[c.Rank()], errs[c.Rank()] = Write(c, g, lay, u, root, meta, o)
			return nil
		}
		// As a run writes in the background: Begin, the field changed
		// (the checkpoint holds its copy), a while later Finish.
		p, err := Begin(c, g, lay, u, root, meta, o)
		if err != nil {
			errs[c.Rank()] = err
			return nil
		}
		for i := range u {
			u[i] = -u[i]
		}
		time.Sleep(time.Millisecond)
		infos[c.Rank()], errs[c.Rank()] = p.Finish()
		return nil
	})
	if runErr != nil {
		for r := range errs {
			if errs[r] == nil {
				errs[r] = runErr
			}
		}
	}
	return infos, errs
}

// readRanks reads checkpoint path with ranks ranks into fields with guard
// ghosts, and checks on every rank that the box holds want and the ghosts
// are untouched. It returns every rank's error from Read, and fails the
// test on a wrong value.
func readRanks(t testing.TB, path string, ranks int, opt Options, want func(idx []int) float64) []error {
	t.Helper()
	ck, err := Open(path)
	if err != nil {
		return []error{err}
	}
	shape := ck.Shape()
	g, err := decomp.New(shape, ranks, nil, nil)
	require.NoError(t, err)
	errs := make([]error, ranks)
	var mismatch atomic.Value
	runErr := local.Run(ranks, func(c comm.Comm) error {
		box := g.Box(c.Rank())
		lay, u := rankField(g, c.Rank(), 2, func([]int) float64 { return guard })
		errs[c.Rank()] = Read(c, ck, g, lay, u, opt)
		if errs[c.Rank()] != nil {
			return nil
		}
		all := decomp.Box{Lo: make([]int, len(shape)), Hi: make([]int, len(shape))}
		for a := range shape {
			all.Lo[a], all.Hi[a] = box.Lo[a]-2, box.Hi[a]+2
		}
		eachIndex(all.Lo, all.Hi, func(idx []int) {
			got := u[field.Index(lay, idx)]
			exp := guard
			if box.Contains(idx) {
				exp = want(idx)
			}
			if math.Float64bits(got) != math.Float64bits(exp) {
				mismatch.CompareAndSwap(nil, fmt.Sprintf("rank %d cell %v: got %v, want %v", c.Rank(), idx, got, exp))
			}
		})
		return nil
	})
	require.NoError(t, runErr)
	if m := mismatch.Load(); m != nil {
		t.Fatalf("%s: %s", path, m)
	}
	return errs
}

// requireAll checks that every rank's error is nil.
func requireAll(t testing.TB, errs []error) {
	t.Helper()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

// requireAllFail checks that every rank failed with an error wrapping
// sentinel (if not nil) whose message contains every one of parts.
func requireAllFail(t testing.TB, errs []error, sentinel error, parts ...string) {
	t.Helper()
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		if sentinel != nil {
			require.ErrorIs(t, err, sentinel, "rank %d", r)
		}
		for _, p := range parts {
			require.Contains(t, err.Error(), p, "rank %d", r)
		}
	}
}

// faultFS is the OS with a hook that can fail any operation.
type faultFS struct {
	OS
	fail func(op, path string) error
}

var errInjected = errors.New("injected failure")

func (f faultFS) check(op, path string) error {
	if f.fail == nil {
		return nil
	}
	return f.fail(op, path)
}

func (f faultFS) MkdirAll(path string) error {
	if err := f.check("MkdirAll", path); err != nil {
		return err
	}
	return f.OS.MkdirAll(path)
}

func (f faultFS) Mkdir(path string) error {
	if err := f.check("MkdirAll", path); err != nil {
		return err
	}
	return f.OS.Mkdir(path)
}

func (f faultFS) WriteFile(path string, src io.WriterTo) error {
	if err := f.check("WriteFile", path); err != nil {
		return err
	}
	return f.OS.WriteFile(path, src)
}

// encodeShardFile is a shard's file as Write stores it, and checks the
// CRC32-C and size the writer reports of it.
func encodeShardFile(raw []byte, shard, inner []int, level, workers int) ([]byte, error) {
	e, release, err := encodeRawShard(raw, shard, inner, level, workers)
	defer release()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := e.WriteTo(&b); err != nil {
		return nil, err
	}
	if e.CRC != crc32c(b.Bytes()) || e.Bytes != b.Len() || e.Len() != b.Len() {
		return nil, fmt.Errorf("shard file: reported CRC32-C %08x and %d bytes (Len %d), wrote %08x and %d", e.CRC, e.Bytes, e.Len(), crc32c(b.Bytes()), b.Len())
	}
	return b.Bytes(), nil
}

// encodeRawShard compresses raw, a whole shard of float64 values in C
// order, as Write does; release gives its frames' memory back.
func encodeRawShard(raw []byte, shard, inner []int, level, workers int) (e *encoded, release func(), err error) {
	full := decomp.Box{Lo: make([]int, len(shard)), Hi: shard}
	sv := decomp.NewLayout(full, 0)
	e = &encoded{}
	ar := &arena{}
	job := chunkJob{fill: func(dst []byte, b decomp.Box) { copyBytesAs(8, dst, decomp.NewLayout(b, 0), raw, sv, b) }, full: full, inner: inner, elem: 8, out: e}
	err = encodeChunks([]chunkJob{job}, level, workers, ar)
	return e, ar.release, err
}

func (f faultFS) ReadFile(path string, max int64, buf []byte) ([]byte, error) {
	if err := f.check("ReadFile", path); err != nil {
		return nil, err
	}
	return f.OS.ReadFile(path, max, buf)
}

func (f faultFS) Rename(oldpath, newpath string) error {
	if err := f.check("Rename", oldpath+" -> "+newpath); err != nil {
		return err
	}
	return f.OS.Rename(oldpath, newpath)
}

func (f faultFS) RemoveAll(path string) error {
	if err := f.check("RemoveAll", path); err != nil {
		return err
	}
	return f.OS.RemoveAll(path)
}

func (f faultFS) SyncDir(path string) error {
	if err := f.check("SyncDir", path); err != nil {
		return err
	}
	return f.OS.SyncDir(path)
}

func (f faultFS) ReadDir(path string) ([]os.DirEntry, error) {
	if err := f.check("ReadDir", path); err != nil {
		return nil, err
	}
	return f.OS.ReadDir(path)
}

// failNth fails the nth (from 1) operation op whose path contains part.
func failNth(op, part string, nth int) func(string, string) error {
	var mu sync.Mutex
	seen := 0
	return func(o, path string) error {
		if o != op || !strings.Contains(path, part) {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == nth {
			return fmt.Errorf("%s %s: %w", o, path, errInjected)
		}
		return nil
	}
}

// dirNames lists the names in dir.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// requireNoPartial checks that root holds no .partial or .old directory.
func requireNoPartial(t testing.TB, root string) {
	t.Helper()
	for _, n := range dirNames(t, root) {
		require.False(t, leftover(n), "leftover %s in %s", n, root)
	}
}

// latestName is the name root/latest holds.
func latestName(t testing.TB, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, latestFile))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}
