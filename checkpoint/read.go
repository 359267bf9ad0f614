package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"heat/comm"
	"heat/decomp"
	"heat/internal/safefile"
)

// Read fills this rank's box of u (laid out as lay; ghosts are left alone)
// from checkpoint ck. It is collective: every rank of c calls it with its
// own box of g, which may split the grid differently from the writer's.
// Each rank reads only the chunks that cross its box, with opt.Workers
// goroutines, and checks each chunk's size and CRC32-C against the metadata
// and its decompressed length against the chunk shape.
//
// A failure on any rank fails Read on every rank (they agree in one
// Allreduce): the failing rank returns its own error, the others one that
// names that rank and the chunk file, wrapping the same sentinel
// (ErrIncomplete, ErrChecksum, ErrIncompatible) where there is one.
func Read(c comm.Comm, ck *Checkpoint, g *decomp.Grid, lay decomp.Layout, u []float64, opt Options) error {
	return ReadArray(c, ck, arrayName, g, lay, u, opt)
}

// ReadArray is Read for the checkpoint's array name: "u" (the field), or
// one beside it (Checkpoint.Arrays: the media k, rho_c, mask), into dst
// laid out as lay; a uint8 array's values come as float64. Collective, on
// any number of ranks, as Read. A checkpoint without the array fails on
// every rank with ErrIncompatible, naming the arrays it holds.
func ReadArray(c comm.Comm, ck *Checkpoint, name string, g *decomp.Grid, lay decomp.Layout, dst []float64, opt Options) error {
	rank, n := c.Rank(), c.Size()
	bad := -1 // position of the failing chunk, C order
	err := checkRead(c, ck, g, lay, dst, opt)
	var a *arrayOf
	if err == nil {
		if a = ck.array(name); a == nil {
			err = fmt.Errorf("checkpoint: %s holds no array %q (it holds %s): %w", ck.Path(), name, strings.Join(ck.Arrays(), ", "), ErrIncompatible)
		}
	}
	if err == nil {
		bad, err = readChunks(ck, a, g.Box(rank), lay, dst, fsOf(opt), max(1, opt.Workers))
	}
	// Every rank learns every rank's failure: its kind and chunk.
	in := make([]float64, 2*n)
	if err != nil {
		in[2*rank], in[2*rank+1] = float64(errKind(err)), float64(bad+1)
	}
	out := make([]float64, 2*n)
	if cerr := c.Allreduce(comm.Max, in, out); cerr != nil {
		if err != nil {
			return err
		}
		return fmt.Errorf("checkpoint: reading: rank %d: %w", rank, cerr)
	}
	if err != nil {
		return err
	}
	for r := range n {
		kind := int(out[2*r])
		if kind == 0 {
			continue
		}
		where := ""
		if l := int(out[2*r+1]) - 1; l >= 0 && a != nil {
			where = " at chunk " + ck.ArrayChunkFile(a.name, ck.grid.key(ck.grid.index(l)))
		}
		what := "a checkpoint"
		if ck != nil {
			what = ck.Path()
		}
		msg := fmt.Sprintf("checkpoint: reading %s failed on rank %d%s", what, r, where)
		if s := sentinels[kind]; s != nil {
			return fmt.Errorf("%s: %w", msg, s)
		}
		return fmt.Errorf("%s (that rank's error says why)", msg)
	}
	return nil
}

// sentinels are the sentinel errors by the kind numbers ranks exchange.
var sentinels = []error{1: ErrIncomplete, 2: ErrChecksum, 3: ErrIncompatible, 4: nil}

// errKind is the kind number of err: its sentinel's index, or 4.
func errKind(err error) int {
	for k, s := range sentinels {
		if s != nil && errors.Is(err, s) {
			return k
		}
	}
	return 4
}

// checkRead checks that ck fits the grid and that this rank's arguments fit
// each other.
func checkRead(c comm.Comm, ck *Checkpoint, g *decomp.Grid, lay decomp.Layout, u []float64, opt Options) error {
	rank := c.Rank()
	switch {
	case ck == nil:
		return errors.New("checkpoint: no checkpoint to read")
	case g.Size() != c.Size():
		return fmt.Errorf("checkpoint: process grid %s has %d ranks but the world has %d", decomp.FormatDims(g.Dims), g.Size(), c.Size())
	case !slices.Equal(ck.grid.shape, g.Shape):
		return fmt.Errorf("checkpoint: %s holds a grid of shape %v, this run has %v: %w", ck.Path(), ck.grid.shape, g.Shape, ErrIncompatible)
	case opt.Workers < 0:
		return fmt.Errorf("checkpoint: %d workers is negative", opt.Workers)
	}
	if err := sameBox(lay, g.Box(rank)); err != nil {
		return fmt.Errorf("checkpoint: rank %d: %w", rank, err)
	}
	if len(u) != lay.Len() {
		return fmt.Errorf("checkpoint: rank %d: field has %d values, its layout %d", rank, len(u), lay.Len())
	}
	return nil
}

// readChunks fills box my of u from every chunk of array a crossing it,
// with workers goroutines. On failure, bad is the position (C order) of the
// first chunk that failed.
func readChunks(ck *Checkpoint, a *arrayOf, my decomp.Box, lay decomp.Layout, u []float64, fsys FS, workers int) (bad int, err error) {
	cg := ck.grid
	var todo [][]int
	lo, hi := cg.crossing(my)
	eachIndex(lo, hi, func(idx []int) { todo = append(todo, slices.Clone(idx)) })
	errs := make([]error, len(todo))
	var (
		wg     sync.WaitGroup
		jobs   = make(chan int)
		mu     sync.Mutex
		failed bool
	)
	for range min(workers, max(1, len(todo))) {
		wg.Go(func() {
			var bufs chunkBufs
			for i := range jobs {
				mu.Lock()
				skip := failed
				mu.Unlock()
				if skip {
					continue
				}
				idx := todo[i]
				raw, err := ck.loadChunk(fsys, a, idx, &bufs, my, workers)
				if err != nil {
					errs[i] = err
					mu.Lock()
					failed = true
					mu.Unlock()
					continue
				}
				// Chunks hold disjoint cells, so workers never write the
				// same element of u.
				getBoxAs(a.elem(), u, lay, raw, decomp.NewLayout(cg.full(idx), 0), cg.box(idx).Intersect(my))
			}
		})
	}
	for i := range todo {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return cg.linear(todo[i]), err
		}
	}
	return -1, nil
}

// chunkBufs is a worker's storage for the chunks it loads one after another:
// a restart then needs no new memory per chunk (it used to take twice the
// field's size, page faults included, for buffers dropped at once).
type chunkBufs struct{ file, raw []byte }

// loadChunk reads the chunk of array a with the given key, checks its size
// and CRC32-C against the metadata, and decompresses it to the full chunk's
// bytes, all in bufs' storage, which it keeps for the next chunk.
//
// A sharded chunk (a shard) decodes only the inner chunks that hold a cell
// of need (global coordinates), with workers goroutines.
func (ck *Checkpoint) loadChunk(fsys FS, a *arrayOf, idx []int, bufs *chunkBufs, need decomp.Box, workers int) ([]byte, error) {
	key := ck.grid.key(idx)
	file := ck.ArrayChunkFile(a.name, key)
	full := ck.grid.full(idx)
	if err := ck.inside(fsys, file); err != nil {
		return nil, err
	}
	if in := ck.grid.box(idx); ck.inner != nil && need.Intersect(in).Size() < in.Size() {
		// A part of a shard: read only what it takes.
		return ck.loadShardPart(fsys, a, file, key, full, bufs, need, workers)
	}
	// No more than the metadata records (which Open bounded by the chunk's
	// shape); a larger file is refused by its size, unread.
	data, err := fsys.ReadFile(file, int64(a.sums[key].Bytes), bufs.file)
	if data != nil {
		bufs.file = data
	}
	if err := checkSize(a, file, key, int64(len(data)), err); err != nil {
		return nil, err
	}
	sum := a.sums[key]
	if crc := crc32c(data); crc != sum.CRC32C {
		return nil, fmt.Errorf("checkpoint: chunk %s has CRC32-C %08x, the metadata records %08x: %w", file, crc, sum.CRC32C, ErrChecksum)
	}
	var raw []byte
	if ck.inner != nil {
		raw, err = decodeShardAs(a.elem(), data, ck.grid.chunk, ck.inner, localBox(need, full), workers, bufs.raw)
	} else {
		raw, err = decompress(data, a.elem()*ck.grid.cells(), bufs.raw)
	}
	if raw != nil {
		bufs.raw = raw
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: chunk %s does not decode: %v: %w", file, err, ErrChecksum)
	}
	return raw, nil
}

// loadShardPart reads of a shard file only what box need takes from it:
// its index (checked by its CRC32-C), then each inner chunk that crosses
// need (checked by its zstd frame checksum and size), by range reads. The
// file's own CRC32-C needs the whole file; its size is checked instead.
func (ck *Checkpoint) loadShardPart(fsys FS, a *arrayOf, file, key string, full decomp.Box, bufs *chunkBufs, need decomp.Box, workers int) ([]byte, error) {
	size, err := fsys.Size(file)
	if err := checkSize(a, file, key, size, err); err != nil {
		return nil, err
	}
	n := innerGrid(ck.grid.chunk, ck.inner).len()
	if size < int64(16*n+4) {
		return nil, fmt.Errorf("checkpoint: shard %s of %d bytes is too short for its index: %w", file, size, ErrChecksum)
	}
	index, err := fsys.ReadRange(file, size-int64(16*n+4), 16*n+4, nil)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: chunk %s: %w", file, err)
	}
	raw, err := decodeShardFrom(a.elem(), func(off, length uint64) ([]byte, error) {
		return fsys.ReadRange(file, int64(off), int(length), nil)
	}, index, uint64(size)-uint64(16*n+4), ck.grid.chunk, ck.inner, localBox(need, full), workers, bufs.raw)
	if raw != nil {
		bufs.raw = raw
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: chunk %s does not decode: %v: %w", file, err, ErrChecksum)
	}
	return raw, nil
}

// checkSize turns the read (or stat) error of a chunk file of array a, or a
// size other than the metadata records, into the checkpoint's error: a
// file missing or anything but a regular file in its place (a FIFO, a
// directory, a link) makes the checkpoint incomplete, a file of another
// size damaged.
func checkSize(a *arrayOf, file, key string, size int64, err error) error {
	var big *safefile.TooLargeError
	if errors.As(err, &big) {
		size, err = big.Size, nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("checkpoint: chunk %s is missing: %w", file, ErrIncomplete)
	case errors.Is(err, safefile.ErrNotRegular):
		return fmt.Errorf("checkpoint: chunk %w: %w", err, ErrIncomplete)
	case err != nil:
		return fmt.Errorf("checkpoint: chunk %s: %w", file, err)
	case size != int64(a.sums[key].Bytes):
		return fmt.Errorf("checkpoint: chunk %s has %d bytes, the metadata records %d: %w", file, size, a.sums[key].Bytes, ErrChecksum)
	}
	return nil
}

// inside checks that file, a file of checkpoint ck, lies in folders of the
// checkpoint: every folder between ck's and file (u, u/c, u/c/<i>, …) must
// be a directory, not a link, so that no read leaves the checkpoint. Each
// folder is looked at once per Checkpoint. A folder that is missing passes:
// the file's read says it is missing.
func (ck *Checkpoint) inside(fsys FS, file string) error {
	rel, err := filepath.Rel(ck.path, filepath.Dir(file))
	if err != nil || rel == "." {
		return err
	}
	dir := ck.path
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		dir = filepath.Join(dir, part)
		if v, ok := ck.dirs.Load(dir); ok {
			if err := v.(dirCheck).err; err != nil {
				return err
			}
			continue
		}
		st, err := fsys.Lstat(dir)
		var bad error
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			bad = fmt.Errorf("checkpoint: %w", err)
		case !st.IsDir():
			bad = fmt.Errorf("checkpoint: %s is %s, not a folder: not followed out of the checkpoint: %w", dir, safefile.Kind(st.Mode()), ErrIncomplete)
		}
		ck.dirs.Store(dir, dirCheck{bad})
		if bad != nil {
			return bad
		}
	}
	return nil
}

// dirCheck is what inside found of a folder.
type dirCheck struct{ err error }

// localBox is need in the coordinates of the box full starts.
func localBox(need, full decomp.Box) decomp.Box {
	local := need.Intersect(full)
	for a := range local.Lo {
		local.Lo[a] -= full.Lo[a]
		local.Hi[a] -= full.Lo[a]
	}
	return local
}

// Verify checks the checkpoint in directory path completely: its metadata
// (as Open does), then every chunk of every array (u, then the media): that
// it exists, has the size and CRC32-C the metadata records, and
// decompresses to the chunk's size. It returns one error per problem, each
// naming its file, in array and then chunk order; nil means the checkpoint
// is sound.
func Verify(path string) []error {
	ck, err := Open(path)
	if err != nil {
		return []error{err}
	}
	n := len(ck.keys)
	errs := make([]error, len(ck.arrays)*n)
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(errs)) {
		wg.Go(func() {
			var bufs chunkBufs
			for i := range jobs {
				a, idx := ck.arrays[i/n], ck.grid.index(i%n)
				_, errs[i] = ck.loadChunk(OS{}, a, idx, &bufs, ck.grid.full(idx), 1)
			}
		})
	}
	for i := range errs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	var bad []error
	for _, err := range errs {
		if err != nil {
			bad = append(bad, err)
		}
	}
	return bad
}

// ReadBox reads the box [lo, hi) (global cells, C order) of the
// checkpoint's array name into dst, which holds exactly the box, dense in
// C order. It is Read for one reader alone, not collective: what reads a
// checkpoint as an input (an initial field, a map, a source: heat/io/media)
// goes through it, so a checkpoint is checked the same way however it is
// read. Every chunk that crosses the box is checked as Read checks it —
// its size and CRC32-C against the metadata and its decoding (of a shard
// read in part, the index's CRC32-C and each inner chunk's frame) — and
// one that fails is an error naming its file, wrapping ErrIncomplete,
// ErrChecksum or ErrIncompatible.
func ReadBox(ck *Checkpoint, name string, lo, hi []int, dst []float64) error {
	if ck == nil {
		return errors.New("checkpoint: no checkpoint to read")
	}
	a := ck.array(name)
	if a == nil {
		return fmt.Errorf("checkpoint: %s holds no array %q (it holds %s): %w", ck.Path(), name, strings.Join(ck.Arrays(), ", "), ErrIncompatible)
	}
	nd := len(ck.grid.shape)
	if len(lo) != nd || len(hi) != nd {
		return fmt.Errorf("checkpoint: box %v to %v for an array of %d axes", lo, hi, nd)
	}
	box := decomp.Box{Lo: slices.Clone(lo), Hi: slices.Clone(hi)}
	for ax := range nd {
		if lo[ax] < 0 || lo[ax] > hi[ax] || hi[ax] > ck.grid.shape[ax] {
			return fmt.Errorf("checkpoint: box %v to %v is not inside the array's shape %v", lo, hi, ck.grid.shape)
		}
	}
	if len(dst) != box.Size() {
		return fmt.Errorf("checkpoint: %d values for a box of %d cells", len(dst), box.Size())
	}
	if box.Empty() {
		return nil
	}
	_, err := readChunks(ck, a, box, decomp.NewLayout(box, 0), dst, OS{}, 1)
	return err
}
