package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"heat/comm"
	"heat/decomp"
	"heat/field"
	"heat/internal/hugemem"
)

// tag is the message tag of every piece of a chunk sent to its writer.
// One tag serves all pieces: pieces between two ranks go in increasing
// chunk order on both sides, and (source, tag) matching is FIFO.
const tag = comm.TagCheckpoint

// Write stores the field u as checkpoint step-NNNNNNNN (meta.Step) under
// root. It is collective: every rank of c calls it with its own box of the
// grid g, laid out as lay (u holds the box with its ghosts; only the box is
// stored). The arrays of meta.Arrays (the media), laid out as u, are stored
// beside it, each in its own folder, chunked and written as u is; every
// rank passes the same names and types.
//
// Each chunk is written by the rank that owns its first cell: the other
// ranks whose boxes cross it send it their parts, and it compresses
// (opt.Workers goroutines) and writes the chunk, filling cells past the array
// with NaN. Then the ranks agree that every chunk is on disk and rank 0
// commits (see the package comment). If any rank fails, Write returns an
// error on every rank, naming the rank and cause where known, and leaves the
// previous checkpoints and latest as they were.
//
// Once committed, rank 0 removes leftovers of writers that died and the
// checkpoints beyond opt.Keep. An error after the commit (updating latest,
// removing old checkpoints) comes with a valid Info: the checkpoint itself is
// complete.
func Write(c comm.Comm, g *decomp.Grid, lay decomp.Layout, u []float64, root string, meta Meta, opt Options) (Info, error) {
	p, err := begin(c, g, lay, u, root, meta, opt, false)
	if err != nil {
		return Info{}, err
	}
	return p.Finish()
}

// Pending is a checkpoint Begin started: its chunks being compressed and
// written in the background, its commit still to come (Finish).
type Pending struct {
	w     *writer
	start time.Time
	done  chan struct{}
	notes []chunkNote
	ioErr error // this rank's first file or encoding error
	// Blocking is the time Begin took: what the caller waited for.
	Blocking time.Duration
}

// Begin is Write's first half, collective like Write: the ranks agree to
// write, every chunk's parts travel to its writer, which compresses its
// chunks (opt.Workers goroutines, reading u and the parts in place: u is
// free again when Begin returns), then writes them in the background. Finish, collective again, waits for that and commits; a
// failure of the background work surfaces there. One checkpoint in flight
// at a time: Finish one before the next Begin.
//
// The arrays of meta.Arrays are compressed later: a run's media never
// change, so their chunks are compressed from the arrays themselves (and
// the parts other ranks sent in Begin) in the background, each as it is
// written. They must stay as they are until Finish returns.
func Begin(c comm.Comm, g *decomp.Grid, lay decomp.Layout, u []float64, root string, meta Meta, opt Options) (*Pending, error) {
	return begin(c, g, lay, u, root, meta, opt, true)
}

// begin is Begin; with removeLater the commit leaves the old checkpoints'
// removal to the background (Settle).
func begin(c comm.Comm, g *decomp.Grid, lay decomp.Layout, u []float64, root string, meta Meta, opt Options, removeLater bool) (*Pending, error) {
	start := time.Now()
	w := &writer{c: c, g: g, lay: lay, u: u, fs: fsOf(opt), opt: opt, meta: meta, root: root, removeLater: removeLater}
	w.meta.Ranks = c.Size()
	if opt.RunID != "" {
		// Every checkpoint names the run that wrote it (what it owns).
		extra := make(map[string]any, len(meta.Extra)+1)
		maps.Copy(extra, meta.Extra)
		extra["run_id"] = opt.RunID
		w.meta.Extra = extra
	}
	w.name = StepName(meta.Step)
	w.final = filepath.Join(root, w.name)
	w.partial = w.final + partialSuffix
	if err := w.begin(); err != nil {
		return nil, err
	}
	var own []*ownChunk
	for a := range w.arrays {
		mine, cerr := w.exchange(a)
		if cerr != nil {
			w.abandon()
			return nil, w.fail(cerr)
		}
		own = append(own, mine...)
	}
	// The field's chunks are compressed now, by the rank's workers, from u
	// and the pieces the others sent: what stays for the background is
	// their compressed bytes, not a copy of the box (see encodeChunks).
	ar := &arena{}
	var jobs []chunkJob
	for _, oc := range own {
		if !w.arrays[oc.arr].static {
			oc.enc = &encoded{}
			jobs = append(jobs, w.job(oc, w.lay, oc.enc))
		}
	}
	encErr := encodeChunks(jobs, w.level, max(1, w.opt.Workers), ar)
	for _, oc := range own {
		if !w.arrays[oc.arr].static {
			oc.pieces = nil
		}
	}
	p := &Pending{w: w, start: start, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer ar.release()
		if encErr != nil {
			p.ioErr = encErr
			return
		}
		p.notes, p.ioErr = w.writeOwn(own)
		if w.c.Rank() == 0 {
			startRemoval(w.root) // the previous commit's, now the chunks are down
		}
	}()
	p.Blocking = time.Since(start)
	return p, nil
}

// Finish waits for the background writing and commits the checkpoint:
// the ranks agree every chunk is on disk, rank 0 writes the metadata,
// renames the folder and updates latest (see Write). Collective.
func (p *Pending) Finish() (Info, error) {
	<-p.done
	info, err := p.w.commitAll(p.notes, p.ioErr)
	info.WriteS = time.Since(p.start).Seconds()
	return info, err
}

// writer is the state of one rank's Write.
type writer struct {
	c    comm.Comm
	g    *decomp.Grid
	lay  decomp.Layout
	u    []float64
	fs   FS
	opt  Options
	meta Meta
	root string

	name, final, partial string

	level  int
	grid   chunkGrid // the array's chunks: with sharding, its shards
	inner  []int     // the inner chunk shape of a sharded checkpoint, or nil
	arrays []wArray  // what is stored: u, then meta.Arrays

	made        bool     // rank 0: it created the .partial folder
	committed   bool     // rank 0: the checkpoint is at its final name
	foreign     []string // rank 0: what pruning left alone (Info.Foreign)
	commitErr   error    // rank 0: why committing failed
	removeLater bool     // remove the pruned checkpoints in the background
}

// wArray is one array a writer stores.
type wArray struct {
	name, dtype string
	data        []float64 // laid out as the field
	// static arrays (the media) do not change until Finish: their chunks
	// are compressed as they are written, not in Begin.
	static bool
}

// elem is the bytes a value of a takes in a chunk.
func (a wArray) elem() int { return elemSize(a.dtype) }

// outcome is what rank 0 tells every rank at the end of Write.
type outcome struct {
	Err       string `json:"err,omitempty"`
	Committed bool   `json:"committed"`
	Bytes     int64  `json:"bytes"`
}

// report is what every rank tells rank 0 about its chunks.
type report struct {
	Err    string      `json:"err,omitempty"`
	Chunks []chunkNote `json:"chunks"`
}

type chunkNote struct {
	Array string `json:"array,omitempty"` // "" is u
	Key   string `json:"key"`
	CRC   uint32 `json:"crc32c"`
	Bytes int    `json:"bytes"`
}

// begin is phase 1: check the arguments, rank 0 prepares the .partial
// directory, and everyone agrees before any chunk moves.
func (w *writer) begin() error {
	err := w.prepare()
	if w.c.Rank() == 0 && err == nil {
		err = w.preparePartial()
	}
	failed, who, cerr := agree(w.c, err)
	switch {
	case cerr != nil:
		w.abandon()
		return w.fail(cerr)
	case err != nil:
		w.abandon()
		return w.fail(err)
	case failed:
		w.abandon()
		return fmt.Errorf("checkpoint: writing %s: rank %d failed while preparing (its error says why)", w.name, who)
	}
	return nil
}

// commitAll is phase 3: rank 0 gathers every rank's chunks, everyone
// agrees on success, rank 0 commits (or cleans up) and tells the outcome.
func (w *writer) commitAll(notes []chunkNote, ioErr error) (Info, error) {
	rank := w.c.Rank()
	info := Info{Step: w.meta.Step, Path: w.final}
	for _, a := range w.arrays {
		info.Raw += int64(a.elem()) * int64(prod(w.g.Shape))
	}
	rep := report{Chunks: notes}
	if ioErr != nil {
		rep.Err = ioErr.Error()
	}
	repBytes, err := json.Marshal(rep)
	if err != nil {
		panic(err) // a report holds only strings and numbers
	}
	all, cerr := w.c.Gatherv(repBytes, 0)
	if cerr != nil {
		w.abandon()
		return Info{}, w.fail(cerr)
	}
	failed, who, cerr := agree(w.c, ioErr)
	if cerr != nil {
		w.abandon()
		return Info{}, w.fail(cerr)
	}
	var out outcome
	if rank == 0 {
		out = w.finish(all, failed)
	}
	cerr = bcastJSON(w.c, &out)
	if cerr != nil && rank != 0 {
		return Info{}, w.fail(cerr)
	}
	if out.Committed {
		info.Bytes = out.Bytes
	} else {
		info = Info{}
	}
	if rank == 0 && out.Committed {
		info.Foreign = w.foreign
	}
	switch {
	case cerr != nil:
		// Rank 0 knows the outcome but could not tell the others.
		if out.Err != "" {
			return info, &wrapped{fmt.Sprintf("%s (and telling the other ranks failed: %v)", out.Err, cerr), w.commitErr}
		}
		return info, w.fail(cerr)
	case ioErr != nil:
		return info, w.fail(ioErr)
	case out.Err != "":
		return info, &wrapped{out.Err, w.commitErr}
	case failed:
		return info, fmt.Errorf("checkpoint: writing %s: rank %d failed", w.name, who)
	}
	return info, nil
}

// fail is err as Write's error on this rank, naming the checkpoint and
// the rank.
func (w *writer) fail(err error) error {
	msg := fmt.Sprintf("checkpoint: writing %s: rank %d: %s", w.name, w.c.Rank(), strings.TrimPrefix(err.Error(), "checkpoint: "))
	return &wrapped{msg, err}
}

// wrapped is an error with its own message that still unwraps to its cause.
type wrapped struct {
	msg   string
	cause error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.cause }

// abandon removes the .partial directory on rank 0 when Write gives up
// before committing. Whatever it cannot remove is never read, and the next
// successful Write removes it.
func (w *writer) abandon() {
	if w.c.Rank() == 0 && w.made && !w.committed {
		_ = w.fs.RemoveAll(w.partial)
	}
}

// prepare checks what this rank was given.
func (w *writer) prepare() error {
	g, lay, rank := w.g, w.lay, w.c.Rank()
	switch {
	case w.root == "":
		return errors.New("no checkpoint directory given")
	case w.meta.Step < 0:
		return fmt.Errorf("step %d is negative", w.meta.Step)
	case math.IsNaN(w.meta.Time) || math.IsInf(w.meta.Time, 0):
		return fmt.Errorf("simulated time %v is not finite", w.meta.Time)
	case g.Size() != w.c.Size():
		return fmt.Errorf("process grid %s has %d ranks but the world has %d", decomp.FormatDims(g.Dims), g.Size(), w.c.Size())
	case w.opt.Keep < 0:
		return fmt.Errorf("keep %d is negative", w.opt.Keep)
	case w.opt.Workers < 0:
		return fmt.Errorf("%d workers is negative", w.opt.Workers)
	}
	if err := sameBox(lay, g.Box(rank)); err != nil {
		return err
	}
	if len(w.u) != lay.Len() {
		return fmt.Errorf("field has %d values, its layout %d", len(w.u), lay.Len())
	}
	if err := w.prepareArrays(); err != nil {
		return err
	}
	level, err := zstdLevel(w.opt.Level)
	if err != nil {
		return err
	}
	w.level = level
	if len(w.opt.Shard) > 0 {
		shard, inner, err := shardShapes(g.Shape, w.opt.Shard, w.opt.Chunk)
		if err != nil {
			return err
		}
		w.grid, w.inner = newChunkGrid(g.Shape, shard), inner
		return nil
	}
	chunk, err := chunkShape(g.Shape, w.opt.Chunk)
	if err != nil {
		return err
	}
	w.grid = newChunkGrid(g.Shape, chunk)
	return nil
}

// prepareArrays checks the arrays of meta.Arrays and lists what the writer
// stores: u, then each of them.
func (w *writer) prepareArrays() error {
	w.arrays = []wArray{{name: arrayName, dtype: Float64, data: w.u}}
	box := w.g.Box(w.c.Rank())
	for _, a := range w.meta.Arrays {
		dtype := a.Type
		if dtype == "" {
			dtype = Float64
		}
		switch {
		case !slices.Contains(MediaArrays, a.Name):
			return fmt.Errorf("array %q: not one a checkpoint holds (%s)", a.Name, strings.Join(MediaArrays, ", "))
		case slices.ContainsFunc(w.arrays, func(b wArray) bool { return b.name == a.Name }):
			return fmt.Errorf("array %q given twice", a.Name)
		case dtype != Float64 && dtype != Uint8:
			return fmt.Errorf("array %q: type %q, want %q or %q", a.Name, a.Type, Float64, Uint8)
		case len(a.Data) != w.lay.Len():
			return fmt.Errorf("array %q has %d values, its layout %d", a.Name, len(a.Data), w.lay.Len())
		}
		if dtype == Uint8 {
			var bad error
			eachRow(box, func(lo []int, n int) {
				if bad != nil {
					return
				}
				i := field.Index(w.lay, lo)
				for k, v := range a.Data[i : i+n] {
					if !(v >= 0 && v <= 255 && v == math.Trunc(v)) {
						at := slices.Clone(lo)
						at[len(at)-1] += k
						bad = fmt.Errorf("array %q is uint8, but cell %v holds %v", a.Name, at, v)
						return
					}
				}
			})
			if bad != nil {
				return bad
			}
		}
		w.arrays = append(w.arrays, wArray{name: a.Name, dtype: dtype, data: a.Data, static: true})
	}
	// In the order Open lists them.
	slices.SortStableFunc(w.arrays[1:], func(a, b wArray) int {
		return slices.Index(MediaArrays, a.name) - slices.Index(MediaArrays, b.name)
	})
	return nil
}

// zstdLevel is the zstd level opt asks for (0 means 1).
func zstdLevel(l int) (int, error) {
	if l == 0 {
		return 1, nil
	}
	if l < -131072 || l > 22 {
		return 0, fmt.Errorf("checkpoint: zstd level %d outside -131072..22", l)
	}
	return l, nil
}

// sameBox checks that lay lays out box b.
func sameBox(lay decomp.Layout, b decomp.Box) error {
	if !slices.Equal(lay.Box.Lo, b.Lo) || !slices.Equal(lay.Box.Hi, b.Hi) {
		return fmt.Errorf("layout is of box %v but the grid gives this rank %v", lay.Box, b)
	}
	return nil
}

// preparePartial (rank 0) checks the metadata can be encoded, then creates
// a fresh root/step-N.partial with a folder per array (u, and the media).
func (w *writer) preparePartial() error {
	if len(w.meta.Config) > 0 && !json.Valid(w.meta.Config) {
		return errors.New("the config to store is not valid JSON")
	}
	if _, err := encodeGroup(w.meta, nil, nil, nil); err != nil {
		return fmt.Errorf("the solver state cannot be stored: %w", err)
	}
	if err := w.held(); err != nil {
		return err
	}
	if err := w.recoverSetAside(); err != nil {
		return err
	}
	// A .partial of the same step left by a writer of this run that died,
	// or one that holds nothing (a writer killed before it marked the
	// folder: no one's data); another run's is not this writer's to remove.
	if _, err := w.fs.ReadDir(w.partial); err == nil {
		if !w.owns(w.partial) && !holdsNothing(w.fs, w.partial, 3) {
			return fmt.Errorf("%s is another run's checkpoint being written (or left by one that died): left alone; give this run another checkpoint.dir", w.partial)
		}
		if err := w.fs.RemoveAll(w.partial); err != nil {
			return err
		}
	}
	w.made = true
	// The marker first, so that whatever a kill leaves of the folder is
	// either marked as this run's or holds nothing. A run's root holds its
	// lock: deleted under the run, it is not made anew here.
	mkdir := w.fs.MkdirAll
	if w.opt.Lock != nil {
		mkdir = w.fs.Mkdir
	}
	if err := mkdir(w.partial); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the checkpoint folder %s no longer exists (deleted under the run?): %w", w.root, err)
		}
		return err
	}
	if w.opt.RunID != "" {
		if err := w.fs.WriteFile(filepath.Join(w.partial, writerFile), strings.NewReader(w.opt.RunID+"\n")); err != nil {
			return err
		}
	}
	for _, a := range w.arrays {
		if err := w.fs.Mkdir(filepath.Join(w.partial, a.name)); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("the checkpoint folder %s no longer holds %s (deleted under the run?): %w", w.root, filepath.Base(w.partial), err)
			}
			return err
		}
	}
	return nil
}

// holdsNothing says whether dir holds only folders (depth levels at most)
// and at most an empty writer marker: a .partial whose writer died before
// it wrote its run's id into the marker.
func holdsNothing(fsys FS, dir string, depth int) bool {
	ents, err := fsys.ReadDir(dir)
	if err != nil || depth == 0 {
		return false
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type().IsDir():
			if !holdsNothing(fsys, p, depth-1) {
				return false
			}
		case e.Type().IsRegular() && e.Name() == writerFile:
			if st, err := fsys.Lstat(p); err != nil || st.Size() != 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// held (rank 0) checks that the root is still the one whose lock the run
// holds: a root deleted under the run, or its lock file removed, fails the
// checkpoint rather than have it written into a folder made anew.
func (w *writer) held() error {
	if err := w.opt.Lock.Held(); err != nil {
		return fmt.Errorf("the checkpoint folder %s lost its lock: %w", w.root, err)
	}
	return nil
}

// recoverSetAside (rank 0) puts back under its name every step-N.prev
// whose step-N does not exist: a writer died between setting it aside and
// committing the rewrite of its step (see commit).
func (w *writer) recoverSetAside() error {
	steps, leftovers, err := scan(w.fs, w.root)
	if err != nil {
		return err
	}
	moved := false
	for _, name := range leftovers {
		base, ok := strings.CutSuffix(name, prevSuffix)
		if !ok || slices.ContainsFunc(steps, func(e entry) bool { return e.name == base }) || !w.owns(filepath.Join(w.root, name)) {
			continue
		}
		if err := w.fs.Rename(filepath.Join(w.root, name), filepath.Join(w.root, base)); err != nil {
			return err
		}
		moved = true
	}
	if moved {
		return w.fs.SyncDir(w.root)
	}
	return nil
}

// agree tells every rank whether any rank failed (err != nil there), and
// the lowest such rank (comm.Agree's rule).
func agree(c comm.Comm, err error) (failed bool, who int, cerr error) {
	who, _, cerr = comm.Agree(c, err != nil, 1)
	return who >= 0, who, cerr
}

// bcastJSON sends rank 0's v to every rank: its length, then its JSON.
func bcastJSON(c comm.Comm, v any) error {
	var body []byte
	if c.Rank() == 0 {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err) // v holds only strings, booleans and numbers
		}
		body = b
	}
	n := binary.LittleEndian.AppendUint64(nil, uint64(len(body)))
	if err := c.Bcast(n, 0); err != nil {
		return err
	}
	if c.Rank() == 0 {
		return c.Bcast(body, 0)
	}
	body = make([]byte, binary.LittleEndian.Uint64(n))
	if err := c.Bcast(body, 0); err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// piece is the part of a chunk that one rank holds.
type piece struct {
	box decomp.Box
	buf []float64
}

// ownChunk is a chunk this rank writes, with the pieces it receives.
type ownChunk struct {
	arr    int // of writer.arrays
	idx    []int
	pieces []piece
	reqs   []comm.Request
	enc    *encoded // compressed in Begin (u), or nil until written (static)
}

// exchange is phase 2's collective half for array arr of the writer: this
// rank sends its parts of other ranks' chunks and receives the parts of its
// own, which stay as pieces until the chunk is compressed. Sends go in increasing chunk order,
// receives are posted in the same order, and one tag serves them all (FIFO
// per source and tag); one array's exchange ends before the next one's.
func (w *writer) exchange(arr int) (own []*ownChunk, cerr error) {
	c, g, cg := w.c, w.g, w.grid
	rank := c.Rank()
	my := g.Box(rank)
	data := w.arrays[arr].data

	var sends []comm.Request
	lo, hi := cg.crossing(my)
	eachIndex(lo, hi, func(idx []int) {
		if cerr != nil {
			return
		}
		cb := cg.box(idx)
		dest := g.Owner(cb.Lo)
		if dest == rank {
			return
		}
		part := cb.Intersect(my)
		buf := make([]float64, part.Size())
		copyBox(buf, decomp.NewLayout(part, 0), data, w.lay, part)
		req, err := c.Isend(buf, dest, tag)
		if err != nil {
			cerr = err
			return
		}
		sends = append(sends, req)
	})
	if cerr != nil {
		return nil, cerr
	}

	lo, hi = cg.starting(my)
	eachIndex(lo, hi, func(idx []int) {
		if cerr != nil {
			return
		}
		oc := &ownChunk{arr: arr, idx: slices.Clone(idx)}
		cb := cg.box(idx)
		last := make([]int, len(cb.Hi))
		for a := range last {
			last[a] = cb.Hi[a] - 1
		}
		plo, phi := g.Coords(g.Owner(cb.Lo)), g.Coords(g.Owner(last))
		for a := range phi {
			phi[a]++
		}
		eachIndex(plo, phi, func(pc []int) {
			src := g.RankOf(pc)
			if src == rank || cerr != nil {
				return
			}
			p := piece{box: cb.Intersect(g.Box(src))}
			p.buf = make([]float64, p.box.Size())
			req, err := c.Irecv(p.buf, src, tag)
			if err != nil {
				cerr = err
				return
			}
			oc.pieces = append(oc.pieces, p)
			oc.reqs = append(oc.reqs, req)
		})
		own = append(own, oc)
	})
	if cerr != nil {
		return nil, cerr
	}
	for _, oc := range own {
		if err := c.Waitall(oc.reqs); err != nil {
			return nil, err
		}
		oc.reqs = nil
	}
	if err := c.Waitall(sends); err != nil {
		return nil, err
	}
	return own, nil
}

// job is chunk oc of its array to compress: the cells of this rank's box
// from the array itself (laid out as fv), the others' from their pieces,
// the fill value past the array's edge. Its frames go to out.
func (w *writer) job(oc *ownChunk, fv decomp.Layout, out *encoded) chunkJob {
	a := w.arrays[oc.arr]
	elem := a.elem()
	inside := w.grid.box(oc.idx)
	mine := inside.Intersect(w.g.Box(w.c.Rank()))
	fill := func(dst []byte, b decomp.Box) {
		dv := decomp.NewLayout(b, 0)
		if inside.Intersect(b).Size() < b.Size() {
			fillRaw(dst, elem)
		}
		putBoxAs(elem, dst, dv, a.data, fv, mine.Intersect(b))
		for _, p := range oc.pieces {
			putBoxAs(elem, dst, dv, p.buf, decomp.NewLayout(p.box, 0), p.box.Intersect(b))
		}
	}
	return chunkJob{fill: fill, full: w.grid.full(oc.idx), inner: w.inner, elem: elem, out: out}
}

// writeOwn is phase 2's local half, which may run in the background: the
// rank's opt.Workers goroutines write its compressed chunks (compressing
// the static arrays' first), then the new directories are fsynced. ioErr
// is the first file or encoding error.
func (w *writer) writeOwn(own []*ownChunk) (notes []chunkNote, ioErr error) {
	notes = make([]chunkNote, len(own))
	var (
		mu    sync.Mutex
		dirs  = map[string]bool{}
		wg    sync.WaitGroup
		jobs  = make(chan int)
		first error
	)
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return first != nil }
	outer := max(1, w.opt.Workers)
	if w.inner != nil {
		outer = 1 // a shard at a time (its inner chunks spread over the workers): one in memory
	}
	for range outer {
		wg.Go(func() {
			for i := range jobs {
				if failed() {
					continue
				}
				note, dir, err := w.writeChunk(own[i], dirs, &mu)
				own[i].pieces, own[i].enc = nil, nil
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if dir != "" {
					dirs[dir] = true
				}
				mu.Unlock()
				notes[i] = note
			}
		})
	}
	for i := range own {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	// Make the new directory entries durable: every directory that holds a
	// chunk file of this rank, and their parents up to the array.
	if err := w.syncDirs(dirs); err != nil {
		return nil, err
	}
	return notes, nil
}

// writeChunk writes chunk oc, compressing it first if Begin did not (a
// static array's: with the workers this goroutine stands for). dir is the
// directory it created for the file ("" if another chunk did); dirs and mu
// guard that set.
func (w *writer) writeChunk(oc *ownChunk, dirs map[string]bool, mu *sync.Mutex) (note chunkNote, dir string, err error) {
	cg := w.grid
	a := w.arrays[oc.arr]
	enc := oc.enc
	if enc == nil {
		ar := &arena{}
		defer ar.release()
		enc = &encoded{}
		workers := 1
		if w.inner != nil {
			workers = max(1, w.opt.Workers)
		}
		if err := encodeChunks([]chunkJob{w.job(oc, w.lay, enc)}, w.level, workers, ar); err != nil {
			return note, "", err
		}
	}
	key := cg.key(oc.idx)
	file := filepath.Join(w.partial, a.name, filepath.FromSlash(key))
	parent := filepath.Dir(file)
	mu.Lock()
	made := dirs[parent]
	mu.Unlock()
	if !made {
		// Only below the array's folder, which rank 0 made, one folder
		// at a time: a root deleted under the run (even between these
		// calls) is not made anew by a chunk's folders.
		array := filepath.Join(w.partial, a.name)
		_, err := w.fs.ReadDir(array)
		if err == nil {
			err = w.mkdirBelow(array, parent)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return note, "", fmt.Errorf("the checkpoint folder %s no longer holds %s (deleted under the run?): %w", w.root, filepath.Base(w.partial), err)
		}
		if err != nil {
			return note, "", err
		}
		dir = parent
	}
	if err := w.fs.WriteFile(file, enc); err != nil {
		return note, dir, err
	}
	name := a.name
	if oc.arr == 0 {
		name = "" // u, as reports always named it
	}
	return chunkNote{Array: name, Key: key, CRC: enc.CRC, Bytes: enc.Bytes}, dir, nil
}

// mkdirBelow makes the folders below array down to dir, each with its
// parent already there.
func (w *writer) mkdirBelow(array, dir string) error {
	if dir == array || len(dir) <= len(array) {
		return nil
	}
	if err := w.mkdirBelow(array, filepath.Dir(dir)); err != nil {
		return err
	}
	return w.fs.Mkdir(dir)
}

// syncDirs fsyncs every directory in dirs and each of their parents up to
// their array's directory, deepest first, each once.
func (w *writer) syncDirs(dirs map[string]bool) error {
	all := map[string]bool{}
	for d := range dirs {
		for _, a := range w.arrays {
			array := filepath.Join(w.partial, a.name)
			if !strings.HasPrefix(d, array+string(filepath.Separator)) {
				continue
			}
			for ; len(d) > len(array) && strings.HasPrefix(d, array); d = filepath.Dir(d) {
				all[d] = true
			}
		}
	}
	list := make([]string, 0, len(all))
	for d := range all {
		list = append(list, d)
	}
	// Deeper paths first, so a parent is synced after its children's entries.
	sort.Slice(list, func(i, j int) bool {
		if len(list[i]) != len(list[j]) {
			return len(list[i]) > len(list[j])
		}
		return list[i] < list[j]
	})
	for _, d := range list {
		if err := w.fs.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// finish (rank 0) commits the checkpoint if every rank succeeded, or
// removes the .partial directory and composes the error if not.
func (w *writer) finish(reports [][]byte, failed bool) outcome {
	sums := map[string]map[string]chunkSum{} // by array ("" is u), by key
	for _, a := range w.arrays {
		sums[w.noteName(a.name)] = map[string]chunkSum{}
	}
	var errs []string
	for r, b := range reports {
		var rep report
		if err := json.Unmarshal(b, &rep); err != nil {
			errs = append(errs, fmt.Sprintf("rank %d: unreadable report: %v", r, err))
			continue
		}
		if rep.Err != "" {
			errs = append(errs, fmt.Sprintf("rank %d: %s", r, rep.Err))
		}
		for _, n := range rep.Chunks {
			if sums[n.Array] == nil {
				errs = append(errs, fmt.Sprintf("rank %d: reports a chunk of array %q, which is not written", r, n.Array))
				continue
			}
			sums[n.Array][n.Key] = chunkSum{CRC32C: n.CRC, Bytes: n.Bytes}
		}
	}
	if len(errs) == 0 && failed {
		errs = append(errs, "a rank failed without saying why")
	}
	for _, a := range w.arrays {
		if n := len(sums[w.noteName(a.name)]); len(errs) == 0 && n != w.grid.len() {
			what := ""
			if a.name != arrayName {
				what = " of " + a.name
			}
			errs = append(errs, fmt.Sprintf("%d chunks%s written, want %d", n, what, w.grid.len()))
		}
	}
	if len(errs) > 0 {
		w.abandon()
		return outcome{Err: fmt.Sprintf("checkpoint: writing %s failed on %s; previous checkpoints are untouched", w.name, strings.Join(errs, "; "))}
	}
	bytes, err := w.commit(sums)
	if err != nil {
		w.commitErr = err
		w.abandon()
		if w.committed {
			return outcome{Err: fmt.Sprintf("checkpoint: %s is complete, but: %v", w.name, err), Committed: true, Bytes: bytes}
		}
		return outcome{Err: fmt.Sprintf("checkpoint: writing %s failed on rank 0: %v; previous checkpoints are untouched", w.name, err)}
	}
	return outcome{Committed: true, Bytes: bytes}
}

// noteName is how a chunk note names array name: "" for u.
func (w *writer) noteName(name string) string {
	if name == arrayName {
		return ""
	}
	return name
}

// commit (rank 0) makes the written chunks a checkpoint. The order keeps
// root/latest naming a complete checkpoint (or absent) at every point:
//
//  1. write u/zarr.json (and each other array's zarr.json) and zarr.json
//     into .partial, fsync them and the directories;
//  2. if step-N exists already (a rerun writing the same step): if latest
//     names it and another checkpoint exists, point latest at the newest
//     other one; then rename step-N to step-N.prev (set aside, complete);
//  3. rename step-N.partial to step-N, fsync the root: the commit point;
//  4. write latest atomically;
//  5. remove step-N.prev, the leftovers of writers that died, and the
//     checkpoints beyond Keep (renamed to .old first, so a crash midway
//     never leaves a half-removed directory under a checkpoint's name).
//
// Plain renames cannot replace a directory atomically, so in step 2 the
// name step-N is briefly absent. Where step N is the only checkpoint,
// latest keeps naming it then, and Resolve finds it set aside as
// step-N.prev; the next Write puts it back if the writer died there.
func (w *writer) commit(all map[string]map[string]chunkSum) (int64, error) {
	fsys := w.fs
	// The last commit's removals end before this one lists the root (what
	// they could not remove, this one's prune tries again).
	_ = Settle(w.root)
	if err := w.held(); err != nil {
		return 0, err
	}
	sums := all[""]
	arrayDoc, err := encodeArray(w.g.Shape, w.grid.chunk, w.inner, w.level)
	if err != nil {
		return 0, err
	}
	// The arrays beside u: their documents, recorded in the group's.
	var (
		records map[string]arrayRecord
		docs    = [][]byte{arrayDoc}
		stored  int64
	)
	for _, a := range w.arrays[1:] {
		doc, err := encodeArrayOf(a.dtype, w.g.Shape, w.grid.chunk, w.inner, w.level)
		if err != nil {
			return 0, err
		}
		if records == nil {
			records = map[string]arrayRecord{}
		}
		records[a.name] = arrayRecord{DataType: a.dtype, ArrayCRC: fmt.Sprintf("%08x", crc32c(doc)), Chunks: all[a.name]}
		docs = append(docs, doc)
	}
	groupDoc, err := encodeGroup(w.meta, sums, arrayDoc, records)
	if err != nil {
		return 0, err
	}
	stored += int64(len(groupDoc))
	for _, s := range all {
		for _, c := range s {
			stored += int64(c.Bytes)
		}
	}
	var arrayDirs []string
	for i, a := range w.arrays {
		dir := filepath.Join(w.partial, a.name)
		arrayDirs = append(arrayDirs, dir)
		stored += int64(len(docs[i]))
		if err := fsys.WriteFile(filepath.Join(dir, metaFile), bytes.NewReader(docs[i])); err != nil {
			return 0, err
		}
	}
	if err := fsys.WriteFile(filepath.Join(w.partial, metaFile), bytes.NewReader(groupDoc)); err != nil {
		return 0, err
	}
	if w.opt.RunID != "" {
		// The metadata names the run now; no complete checkpoint keeps the
		// marker.
		if err := fsys.RemoveAll(filepath.Join(w.partial, writerFile)); err != nil {
			return 0, err
		}
	}
	for _, d := range append(arrayDirs, w.partial) {
		if err := fsys.SyncDir(d); err != nil {
			return 0, err
		}
	}

	steps, leftovers, err := scan(fsys, w.root)
	if err != nil {
		return 0, err
	}
	prev := w.final + prevSuffix
	replaced, movedLatest := false, false
	if slices.ContainsFunc(steps, func(e entry) bool { return e.name == w.name }) {
		if movedLatest, err = w.moveLatestAway(steps); err != nil {
			return 0, err
		}
		if err := fsys.RemoveAll(prev); err != nil {
			return 0, err
		}
		if err := fsys.Rename(w.final, prev); err != nil {
			return 0, err
		}
		replaced = true
	}
	if err := fsys.Rename(w.partial, w.final); err != nil {
		// Put the checkpoint being replaced back, best effort.
		if replaced && fsys.Rename(prev, w.final) == nil && movedLatest {
			_ = writeLatest(fsys, w.root, w.name)
		}
		return 0, err
	}
	w.committed = true
	if err := fsys.SyncDir(w.root); err != nil {
		return stored, err
	}
	if st, err := fsys.Lstat(filepath.Join(w.root, latestFile)); err == nil && st.IsDir() {
		// Not heat's to replace, and no rename can: latest is an index,
		// and Resolve finds the newest checkpoint without it.
		w.foreign = append(w.foreign, latestFile+" (a directory: not updated; a restart finds the newest checkpoint without it)")
	} else if err := writeLatest(fsys, w.root, w.name); err != nil {
		return stored, fmt.Errorf("updating %s: %w", filepath.Join(w.root, latestFile), err)
	}
	return stored, w.prune(steps, leftovers)
}

// moveLatestAway points latest at the newest checkpoint other than the one
// being replaced, if latest names that one and there is another; moved says
// whether it did.
func (w *writer) moveLatestAway(steps []entry) (moved bool, err error) {
	cur, err := readLatest(w.fs, w.root)
	if err != nil || cur != w.name {
		return false, nil // latest does not name it (or is unreadable; it is replaced soon)
	}
	for _, e := range steps {
		if e.name != w.name {
			return true, writeLatest(w.fs, w.root, e.name)
		}
	}
	return false, nil
}

// prune removes the leftovers of writers that died and the checkpoints
// beyond Keep: the one just written counts first, then the others newest
// step first. steps and leftovers are the root as it was before the commit.
//
// Only this run's checkpoints count and go (Options.RunID), and only those
// that hold nothing but a checkpoint's files: the rest is left alone and
// named in w.foreign.
func (w *writer) prune(steps []entry, leftovers []string) error {
	var doomed []string
	kept := 1
	for _, e := range steps {
		if e.name == w.name {
			continue
		}
		dir := filepath.Join(w.root, e.name)
		if !w.owns(dir) {
			w.foreign = append(w.foreign, e.name+" (another run's checkpoint)")
			continue
		}
		if w.opt.Keep == 0 || kept < w.opt.Keep {
			kept++
			continue
		}
		if _, foreign, err := contents(dir); err == nil && len(foreign) > 0 {
			w.foreign = append(w.foreign, fmt.Sprintf("%s (holds files heat did not write: %s)", e.name, strings.Join(firstFew(foreign), ", ")))
			continue
		}
		doomed = append(doomed, e.name)
	}
	leftovers = slices.DeleteFunc(slices.Clone(leftovers), func(name string) bool {
		if name == w.name+prevSuffix || w.owns(filepath.Join(w.root, name)) {
			return false
		}
		if _, err := w.fs.ReadDir(filepath.Join(w.root, name)); errors.Is(err, fs.ErrNotExist) {
			return true // gone meanwhile: this checkpoint's own .partial, now committed
		}
		w.foreign = append(w.foreign, name+" (another run's)")
		return true
	})
	var errs []error
	for _, name := range doomed {
		dir := filepath.Join(w.root, name)
		if err := w.fs.Rename(dir, dir+oldSuffix); err != nil {
			errs = append(errs, err)
			continue
		}
		leftovers = append(leftovers, name+oldSuffix)
	}
	if len(doomed) > 0 {
		if err := w.fs.SyncDir(w.root); err != nil {
			errs = append(errs, err)
		}
	}
	// The set-aside copy of this step goes now (the next Begin looks for
	// one); the rest — nobody's checkpoints any more — in the background
	// when removeLater, and at once after a failure.
	if err := w.fs.RemoveAll(filepath.Join(w.root, w.name+prevSuffix)); err != nil {
		errs = append(errs, err)
	}
	slices.Sort(leftovers)
	leftovers = slices.Compact(slices.DeleteFunc(leftovers, func(n string) bool { return n == w.name+prevSuffix }))
	remove := func() error {
		var errs []error
		for _, name := range leftovers {
			if err := removeCheckpoint(w.fs, filepath.Join(w.root, name)); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	if w.removeLater && len(errs) == 0 {
		removeLater(w.root, func() error {
			if err := remove(); err != nil {
				return fmt.Errorf("removing old checkpoints: %w", err)
			}
			return nil
		})
		return nil
	}
	if err := errors.Join(append(errs, remove())...); err != nil {
		return fmt.Errorf("removing old checkpoints: %w", err)
	}
	return nil
}

// removals are the old checkpoints (renamed .old, no longer anyone's
// checkpoint) to remove in the background, by root: a large one took
// 25–40 ms to unlink here, all of it the run's wait in a commit. A removal
// waits to start until the next checkpoint's Begin has compressed its chunks
// and written them (startRemoval), or until Settle: run beside that Begin,
// it made its folder's creation 1–8 ms slower and its compression a few ms.
var removals struct {
	mu sync.Mutex
	m  map[string]*removal
}

// removal is one root's pending removal of old checkpoints.
type removal struct {
	once   sync.Once
	remove func() error
	done   chan error
}

// start starts the removal if it has not started.
func (r *removal) start() {
	r.once.Do(func() { go func() { r.done <- r.remove() }() })
}

// removeLater leaves remove for root to the background (see removals),
// after any removal there still pending, which it waits for.
func removeLater(root string, remove func() error) {
	_ = Settle(root) // one removal at a time under a root
	removals.mu.Lock()
	if removals.m == nil {
		removals.m = map[string]*removal{}
	}
	removals.m[filepath.Clean(root)] = &removal{remove: remove, done: make(chan error, 1)}
	removals.mu.Unlock()
}

// startRemoval starts the pending removal under root, if any; Settle waits
// for it.
func startRemoval(root string) {
	removals.mu.Lock()
	r := removals.m[filepath.Clean(root)]
	removals.mu.Unlock()
	if r != nil {
		r.start()
	}
}

// Settle removes the old checkpoints that a commit (Pending.Finish) left to
// remove in the background under root, or waits until their removal ends,
// and returns its error (the checkpoints themselves are committed either
// way; what was not removed goes at the next commit). A run calls it when
// it ends; the next commit under root calls it too.
func Settle(root string) error {
	removals.mu.Lock()
	r, ok := removals.m[filepath.Clean(root)]
	delete(removals.m, filepath.Clean(root))
	removals.mu.Unlock()
	if !ok {
		return nil
	}
	r.start()
	return <-r.done
}

// prod is the product of the lengths in shape.
func prod(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// spare keeps the buffers of the checkpoint written last (compressed
// frames, scratch chunks, staging) for the next one's: fresh memory costs
// a page fault per page at its first touch (on a virtual machine 5–7 ms a
// MB, in the host). It holds at most as much as was ever taken at once,
// which the memory estimate counts anyway.
var spare bufferPool

type bufferPool struct {
	mu          sync.Mutex
	bufs        [][]byte
	held, inUse int // bytes kept; bytes taken and not given back
	peak        int // the most bytes ever taken at once
}

// take returns a buffer of n bytes, not cleared: a kept one of capacity at
// least n (the smallest), or a new one, advised for huge pages (a 2 MiB
// page's fault costs far less than 512 small ones).
func (p *bufferPool) take(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, b := range p.bufs {
		if cap(b) >= n && (best < 0 || cap(b) < cap(p.bufs[best])) {
			best = i
		}
	}
	b := []byte(nil)
	if best < 0 {
		b = hugemem.Bytes(n)
	} else {
		b = p.bufs[best][:n]
		p.bufs = slices.Delete(p.bufs, best, best+1)
		p.held -= cap(b)
	}
	p.inUse += cap(b)
	p.peak = max(p.peak, p.inUse)
	return b
}

// give keeps b, which take returned, for a later take, unless the pool
// would then hold more than the peak.
func (p *bufferPool) give(b []byte) {
	if cap(b) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse -= cap(b)
	if p.held+cap(b) <= p.peak {
		p.bufs = append(p.bufs, b)
		p.held += cap(b)
	}
}
