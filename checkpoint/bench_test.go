package checkpoint

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"testing"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
)

var benchShape = []int{1024, 1024}

// BenchmarkWrite writes a smooth 1024² field (default 512² chunks) per
// iteration, reporting MB/s of raw field and the compression ratio.
func BenchmarkWrite(b *testing.B) {
	for _, ranks := range []int{1, 4} {
		for _, level := range []int{1, 3} {
			b.Run(fmt.Sprintf("ranks=%d/level=%d", ranks, level), func(b *testing.B) {
				root := b.TempDir()
				g, fields := benchFields(b, ranks)
				b.SetBytes(int64(8 * prod(benchShape)))
				var info Info
				step := 0
				for b.Loop() {
					step++
					err := local.Run(ranks, func(c comm.Comm) error {
						lay, u := fields(c.Rank())
						in, err := Write(c, g, lay, u, root, Meta{Step: step}, Options{Level: level, Keep: 1, Workers: 2})
						if c.Rank() == 0 {
							info = in
						}
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(info.Raw)/float64(info.Bytes), "ratio")
			})
		}
	}
}

// BenchmarkWriteFirst writes a smooth 2048² field on one rank as a run
// does (one shard, 2 workers, in the background, then committed): "first"
// is a process's first checkpoint (no spare buffers, no zstd encoder yet,
// the heap given back to the system before each), "next" one of the later
// ones. The first write cost 0.4–0.8 s more at 4096² when it copied the
// box into fresh memory.
func BenchmarkWriteFirst(b *testing.B) {
	shape := []int{2048, 2048}
	g, err := decomp.New(shape, 1, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	lay, u := rankField(g, 0, 1, func(idx []int) float64 { return smooth(shape, idx, 0) })
	shard, inner, err := WriterShards(shape, g.Dims, nil)
	if err != nil {
		b.Fatal(err)
	}
	opt := Options{Shard: shard, Chunk: inner, Keep: 1, Workers: 2}
	for _, first := range []bool{true, false} {
		name := map[bool]string{true: "first", false: "next"}[first]
		b.Run(name, func(b *testing.B) {
			root := b.TempDir()
			b.SetBytes(int64(8 * prod(shape)))
			step := 0
			var info Info
			write := func() {
				step++
				err := local.Run(1, func(c comm.Comm) error {
					p, err := Begin(c, g, lay, u, root, Meta{Step: step}, opt)
					if err != nil {
						return err
					}
					info, err = p.Finish()
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			write() // the encoders and buffers of "next"
			for b.Loop() {
				if first {
					b.StopTimer()
					forgetWriters()
					b.StartTimer()
				}
				write()
			}
			b.ReportMetric(float64(info.Raw)/float64(info.Bytes), "ratio")
		})
	}
}

// forgetWriters drops what checkpoints keep between writes in a process
// (the spare buffers, the zstd encoders) and gives the heap back to the
// system, so that the next write is as a process's first.
func forgetWriters() {
	encodersMu.Lock()
	for k, e := range encoders {
		_ = e.Close()
		delete(encoders, k)
	}
	encodersMu.Unlock()
	spare.mu.Lock()
	spare.bufs, spare.held, spare.peak = nil, 0, 0
	spare.mu.Unlock()
	debug.FreeOSMemory()
}

// BenchmarkRead reads a smooth 1024² checkpoint per iteration.
func BenchmarkRead(b *testing.B) {
	for _, ranks := range []int{1, 4} {
		for _, level := range []int{1, 3} {
			b.Run(fmt.Sprintf("ranks=%d/level=%d", ranks, level), func(b *testing.B) {
				root := b.TempDir()
				g, fields := benchFields(b, ranks)
				err := local.Run(ranks, func(c comm.Comm) error {
					lay, u := fields(c.Rank())
					_, err := Write(c, g, lay, u, root, Meta{Step: 1}, Options{Level: level})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				ck, err := Open(filepath.Join(root, StepName(1)))
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(ck.RawBytes())
				for b.Loop() {
					err := local.Run(ranks, func(c comm.Comm) error {
						lay, u := fields(c.Rank())
						return Read(c, ck, g, lay, u, Options{Workers: 2})
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(ck.Ratio(), "ratio")
			})
		}
	}
}

// benchFields is the process grid of ranks ranks over benchShape and each
// rank's box of the smooth field.
func benchFields(b *testing.B, ranks int) (*decomp.Grid, func(rank int) (decomp.Layout, []float64)) {
	g, err := decomp.New(benchShape, ranks, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	lays := make([]decomp.Layout, ranks)
	us := make([][]float64, ranks)
	for r := range ranks {
		lays[r], us[r] = rankField(g, r, 1, func(idx []int) float64 { return smooth(benchShape, idx, 0) })
	}
	return g, func(rank int) (decomp.Layout, []float64) { return lays[rank], us[rank] }
}
