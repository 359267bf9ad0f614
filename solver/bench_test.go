package solver

import (
	"fmt"
	"slices"
	"testing"

	"heat/comm/local"
	"heat/stencil"
)

// BenchmarkStep times one heat step on one rank with every kernel set this
// build and CPU run (generic beside the SIMD sets): 2D n=256 (fits in L2),
// n=512 and 2048 (L3), n=4096 and 8192 (DRAM), and 3D n=64 (L3) and 256, with 1 and 2
// worker threads. n=8192 needs 1 GiB; run it with few iterations
// (-benchtime 20x).
func BenchmarkStep(b *testing.B) {
	for _, c := range []struct{ dims, n int }{{2, 256}, {2, 512}, {2, 2048}, {2, 4096}, {2, 8192}, {3, 64}, {3, 256}} {
		for _, ks := range stencil.Available() {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("dims=%d/n=%d/kernel=%s/threads=%d", c.dims, c.n, ks.Name, threads), func(b *testing.B) {
					s := heatSpec(slices.Repeat([]int{c.n}, c.dims))
					s.Initial = Random(s.Shape, 1, 1, 0)
					s.Threads = threads
					restore := stencil.Use(ks)
					sv, err := New(local.NewWorld(1).Comm(0), s)
					restore()
					if err != nil {
						b.Fatal(err)
					}
					defer sv.Close()
					cells := 1
					for _, n := range s.Shape {
						cells *= n
					}
					b.SetBytes(int64(16 * cells))
					b.ResetTimer()
					for b.Loop() {
						if err := sv.advance(false); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(cells)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
				})
			}
		}
	}
}

// BenchmarkWavefront3D tunes the 3D temporal-blocking tiles: the cache
// budget of a tile (waveTileBytes) against the block depth, on a grid far
// larger than the caches.
func BenchmarkWavefront3D(b *testing.B) {
	n := 512
	s := heatSpec([]int{n, n, n})
	s.Initial = Random(s.Shape, 1, 1, 0)
	s.Threads = 2
	for _, k := range []int{2, 4, 8} {
		s.Ghost = k
		sv, err := New(local.NewWorld(1).Comm(0), s)
		if err != nil {
			b.Fatal(err)
		}
		for _, mib := range []int{1, 2, 4, 8, 16} {
			b.Run(fmt.Sprintf("ghost=%d/tile=%dMiB", k, mib), func(b *testing.B) {
				defer func(v int) { waveTileBytes = v }(waveTileBytes)
				waveTileBytes = mib << 20
				for b.Loop() {
					if err := sv.block(k, false); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n*n*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
			})
		}
		sv.Close()
	}
}

// BenchmarkWavefront2D times 2D temporal blocks on a grid far larger than
// the caches, against the depth.
func BenchmarkWavefront2D(b *testing.B) {
	n := 8192
	s := heatSpec([]int{n, n})
	s.Initial = Random(s.Shape, 1, 1, 0)
	s.Threads = 2
	for _, k := range []int{1, 8} {
		s.Ghost = k
		sv, err := New(local.NewWorld(1).Comm(0), s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("ghost=%d", k), func(b *testing.B) {
			for b.Loop() {
				if k == 1 {
					if err := sv.advance(false); err != nil {
						b.Fatal(err)
					}
				} else if err := sv.block(k, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
		})
		sv.Close()
	}
}
