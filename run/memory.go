package run

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"heat/checkpoint"
	"heat/decomp"
	"heat/io/config"
	"heat/io/expr"
	"heat/io/heatmap"
	"heat/multigrid"
	"heat/operator"
	"heat/solver"
)

// memory is what a process of the run is estimated to need, by part.
type memory struct {
	Fields     int64 // its ranks' fields, levels, halo buffers (solver.Memory)
	Gather     int64 // the final field gathered onto rank 0 (the fingerprint)
	Snapshot   int64 // a PNG's plane of pixel sums and its picture
	Checkpoint int64 // the checkpoint writers' chunk buffers
	Media      int64 // heterogeneous media: coefficients per cell (operator.BytesPerCell), and rank 0's algebraic multigrid
	Inputs     int64 // time tables as loaded, and the box a rank reads of a field from a file
	Runtime    int64 // the Go runtime and heat's own code
}

// algebraicBytesPerCell bounds the algebraic preconditioner's memory on
// rank 0 (multigrid/algebraic.go), per cell of the grid.
const algebraicBytesPerCell = 1536

// runtimeBytes is the resident memory of a heat process before its fields:
// the runtime, the binary's code and data, the worker goroutines' stacks
// (measured: 12.5–13 MB for a 64² run).
const runtimeBytes = 12 << 20

func (m memory) Total() int64 {
	return m.Fields + m.Gather + m.Snapshot + m.Checkpoint + m.Media + m.Inputs + m.Runtime
}

func (m memory) String() string {
	media := ""
	if m.Media > 0 {
		media = ", media " + bytesText(m.Media)
	}
	if m.Inputs > 0 {
		media += ", inputs " + bytesText(m.Inputs)
	}
	return fmt.Sprintf("%s (fields %s, final gather %s, snapshot %s, checkpoint buffers %s%s, runtime %s)",
		bytesText(m.Total()), bytesText(m.Fields), bytesText(m.Gather), bytesText(m.Snapshot), bytesText(m.Checkpoint), media, bytesText(m.Runtime))
}

// estimateMemory is the memory of the process holding ranks (all of them
// in-process; one under MPI) of a run of cfg, split as g.
func estimateMemory(cfg *config.Config, spec solver.Spec, g *decomp.Grid, ranks []int) memory {
	m := memory{Runtime: runtimeBytes}
	global := int64(8)
	for _, n := range cfg.Grid.Shape {
		global *= int64(n)
	}
	biggest := int64(0)
	mediaPerCell := 0
	if spec.Media != nil {
		mediaPerCell = operator.BytesPerCell(len(cfg.Grid.Shape), cfg.UsesMultigrid())
	}
	if spec.Media != nil && cfg.UsesMultigrid() && global/8 <= multigrid.AlgebraicCells && slices.Contains(ranks, 0) {
		// Where the medium turns out mixed, rank 0 holds the algebraic
		// preconditioner's hierarchy: at most the bytes its setup
		// allocates, measured 0.9 KB a cell for a Poisson problem and 1.4
		// KB for implicit steps (the conduction and the capacities kept per
		// level to scale to each step length; a random 2D map, 256²,
		// amg's BenchmarkScale), with the gathered entries beside it.
		m.Media += algebraicBytesPerCell * global / 8
	}
	m.Inputs = inputBytes(cfg, g, ranks)
	for _, r := range ranks {
		m.Fields += solver.Memory(spec, g, r)
		m.Media += int64(mediaPerCell) * int64(g.Box(r).Size())
		box := 8 * int64(g.Box(r).Size())
		biggest = max(biggest, box)
		if cfg.Output.Fingerprint {
			if r == 0 {
				// The gathered field, and a receive buffer per other rank;
				// in media the gathered conductivity too (the holes the
				// statistics leave out).
				m.Gather += global + global - box
				if spec.Media != nil {
					m.Gather += global
				}
			} else {
				m.Gather += box // its send buffer
			}
		}
	}
	if len(cfg.Output.Formats) > 0 {
		long := int64(max(cfg.Grid.Shape[len(cfg.Grid.Shape)-1], cfg.Grid.Shape[len(cfg.Grid.Shape)-2]))
		size := int64(cfg.Output.ImageSize)
		f := int64(heatmap.Factor(int(long), 1, int(size)))
		px := (long + f - 1) / f // the plane's long side: at least size, under twice it
		// The picture: a field drawn cell for cell grows by a whole factor
		// to at least output.image_size, and its axes, title and colour bar
		// take about as much again around it (1.4² of it).
		pic := px
		if long < size {
			pic = (size + long - 1) / long * long
		}
		// The ranks' pixel sums (8 B a pixel, a plane's worth together),
		// rank 0's sum of them (several ranks), its RGBA picture and the
		// paletted image encoded.
		m.Snapshot = 8*px*px + 5*pic*pic*2
		if g.Size() > 1 && slices.Contains(ranks, 0) {
			m.Snapshot += 8 * px * px
		}
	}
	if cfg.Checkpoint.Every > 0 || cfg.Checkpoint.Final {
		// Each writer's chunks assembled (about its box of the field) and a
		// compressed chunk (about 2 MiB) per writer goroutine.
		// Sharded, each writer goroutine holds a scratch inner chunk and up
		// to two compressed ones waiting for the file (at most the raw
		// size each). The estimate takes the shards over the ranks' boxes
		// (under MPI "auto" writes one per node, and the node's writer
		// assembles the node's shard).
		frames := int64(spec.Threads) * (2 << 20) // a compressed chunk per writer goroutine
		if opt, err := ckptOptions(cfg, spec.Threads, g.Dims); err == nil && len(opt.Shard) > 0 {
			frames = 3 * 8 * int64(spec.Threads)
			for a, n := range opt.Chunk {
				frames *= int64(min(n, cfg.Grid.Shape[a]))
			}
		}
		// And a staging buffer per file being written around the page
		// cache (at most one per writer goroutine).
		frames += int64(spec.Threads) * checkpoint.StageBytes
		for _, r := range ranks {
			m.Checkpoint += 8*int64(g.Box(r).Size()) + frames
		}
	}
	return m
}

// available is the memory this process may still use: the host's
// MemAvailable, or less where a cgroup limit (memory.max, v1
// memory.limit_in_bytes) leaves less; 0 and "" when unknown.
func available() (bytes int64, what string) {
	if v, ok := procKB("/proc/meminfo", "MemAvailable"); ok {
		bytes, what = v, "MemAvailable in /proc/meminfo"
	}
	for _, c := range []struct{ limit, usage string }{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		limit, ok1 := readInt(c.limit)
		usage, ok2 := readInt(c.usage)
		if ok1 && ok2 && limit < 1<<60 && (bytes == 0 || limit-usage < bytes) {
			bytes, what = limit-usage, "the cgroup's limit ("+c.limit+") less its usage"
		}
	}
	return bytes, what
}

// procKB is the value of "key: N kB" in the /proc file path, in bytes.
func procKB(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return n << 10, err == nil
	}
	return 0, false
}

func readInt(path string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n, err == nil
}

// peakRSS is the process's peak resident memory (VmHWM), 0 if unknown.
func peakRSS() int64 {
	n, _ := procKB("/proc/self/status", "VmHWM")
	return n
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
}

// inputBytes is what the run's inputs hold in the process of ranks: each
// time table once (loaded tables are shared), and a field read from a file
// (initial or source), the box each rank reads before it lays it out.
func inputBytes(cfg *config.Config, g *decomp.Grid, ranks []int) int64 {
	var n int64
	seen := map[string]bool{}
	for _, in := range inputsOf(cfg, nil) {
		if seen[in.path] {
			continue
		}
		seen[in.path] = true
		switch in.key {
		case "initial.path", "source.path":
			for _, r := range ranks {
				n += 8 * int64(g.Box(r).Size())
			}
		case "maps.k", "maps.rho_c":
			// Read a box at a time into the media (Media counts those).
		default:
			if tb, err := expr.LoadTable(in.key, in.path); err == nil {
				n += tb.Bytes()
			}
		}
	}
	return n
}
