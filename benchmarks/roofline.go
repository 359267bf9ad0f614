package benchmarks

import (
	"context"
	"fmt"
	"heat/operator"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"heat/comm"
	"heat/comm/local"
	"heat/solver"
)

// CopyBandwidth is the best of reps copies of a bytes-sized array into
// another by threads goroutines, in GB/s counted as STREAM counts copy (one
// read and one write per element, no write-allocate traffic).
func CopyBandwidth(threads, bytes, reps int) float64 {
	n := bytes / 8
	src, dst := make([]float64, n), make([]float64, n)
	for i := range src {
		src[i] = float64(i)
	}
	copyOnce := func() time.Duration {
		var wg sync.WaitGroup
		t0 := time.Now()
		for w := range threads {
			lo, hi := w*n/threads, (w+1)*n/threads
			wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
		}
		wg.Wait()
		return time.Since(t0)
	}
	copyOnce() // first touch
	best := time.Duration(1 << 62)
	for range reps {
		best = min(best, copyOnce())
	}
	return 2 * float64(n*8) / best.Seconds() / 1e9
}

// Point is one kernel measurement.
type Point struct {
	Dims, N, Threads, Ghost int
	Media                   bool // the variable-coefficient step (twoMaterials)
	Kernel                  string
	Steps                   int
	MUpdates                float64 // million cell updates per second
	GBs                     float64 // effective: BytesPerUpdate per update
	Ceiling                 float64 // one-sweep ceiling: copy GB/s ÷ 16 B, in Mupdates/s
	// InCache is the same kernel's one-sweep rate on a grid that fits in
	// the core's cache (2D 256², 3D 64³), same threads: near 1 the step is
	// compute-bound, well below it memory-bound.
	InCache float64
}

// BytesPerUpdate is what one update of a one-sweep step streams: the
// field read and written (16 B), and in media also the face coefficient of
// each axis and dt/ρc (refbench's count: 40 B in 2D, 48 in 3D).
func BytesPerUpdate(dims int, media bool) float64 {
	if !media {
		return 16
	}
	return float64(16 + 8*(dims+1))
}

// twoMaterials is refbench's variable-coefficient field: k = 1 on the low
// half of the last axis, 10 on the high half, ρc = 1, nothing held.
func twoMaterials(shape []int) solver.MediaFunc {
	nx := shape[len(shape)-1]
	return func(_ comm.Comm, lo, hi []int) (k, rhoC, held []float64, err error) {
		n := 1
		for a := range lo {
			n *= hi[a] - lo[a]
		}
		k, rhoC, held = make([]float64, n), make([]float64, n), make([]float64, n)
		w := hi[len(hi)-1] - lo[len(lo)-1]
		for i := range k {
			k[i], rhoC[i], held[i] = 1, 1, math.NaN()
			if lo[len(lo)-1]+i%w >= nx/2 {
				k[i] = 10
			}
		}
		return k, rhoC, held, nil
	}
}

// CacheFraction is the point's speed over its kernel's in-cache rate.
func (p Point) CacheFraction() float64 { return p.MUpdates / p.InCache }

// inCacheN is the size per axis whose two fields fit in a core's L2
// (256² is 1 MiB, 64³ 4 MiB over two cores' L2 here).
func inCacheN(dims int) int {
	if dims == 3 {
		return 64
	}
	return 256
}

// Fraction is the point's speed over the one-sweep memory ceiling; temporal
// blocking can pass 1.
func (p Point) Fraction() float64 { return p.MUpdates / p.Ceiling }

// MeasureKernel runs the heat step on one rank: an n^dims grid, threads
// workers, ghost width (temporal-blocking depth) ghost, for about target
// seconds after a warm-up, and returns the best of three timings.
func MeasureKernel(dims, n, threads, ghost int, media bool, target time.Duration) (Point, error) {
	if dims != 2 && dims != 3 {
		return Point{}, fmt.Errorf("a grid of %d axes: heat solves 2D and 3D", dims)
	}
	shape := slices.Repeat([]int{n}, dims)
	length := slices.Repeat([]float64{1}, dims)
	faces := make([][2]solver.Face, dims)
	cells := 1
	for _, x := range shape {
		cells *= x
	}
	spec := solver.Spec{Shape: shape, Length: length, Ghost: ghost, Equation: solver.Heat, Alpha: 1,
		Faces: faces, Initial: solver.Random(shape, 1, 1, 0), Threads: threads}
	spec.DT = 0.9 * operator.NewUniform(1, spec.Spacing()).StableDT()
	if media {
		spec.Media, spec.DT = twoMaterials(shape), 0 // 0.9× the media's limit
	}
	spec.Steps = 1 << 40
	spec.CheckEvery = 1 << 40
	s, err := solver.New(local.NewWorld(1).Comm(0), spec)
	if err != nil {
		return Point{}, err
	}
	defer s.Close()
	ctx := context.Background()
	// Calibrate: double the steps until a run takes a fifth of the target.
	steps := max(ghost, 1)
	var el time.Duration
	for {
		t0 := time.Now()
		if err := s.RunTo(ctx, s.Step()+steps); err != nil {
			return Point{}, err
		}
		el = time.Since(t0)
		if el >= target/5 || steps >= 1<<20 {
			break
		}
		steps *= 2
	}
	steps = max(steps, int(float64(steps)*target.Seconds()/el.Seconds()/3))
	steps = (steps + ghost - 1) / ghost * ghost
	best := time.Duration(1 << 62)
	for range 3 {
		t0 := time.Now()
		if err := s.RunTo(ctx, s.Step()+steps); err != nil {
			return Point{}, err
		}
		best = min(best, time.Since(t0))
	}
	mups := float64(cells) * float64(steps) / best.Seconds() / 1e6
	return Point{Dims: dims, N: n, Threads: threads, Ghost: ghost, Media: media, Kernel: solver.KernelName(), Steps: steps,
		MUpdates: mups, GBs: mups * BytesPerUpdate(dims, media) / 1e3}, nil
}

// RooflineOptions choose the points of a roofline report.
type RooflineOptions struct {
	Dims    int
	Sizes   []int
	Threads []int
	Ghosts  []int
	Target  time.Duration // per point
	CopyMiB int           // array size of the bandwidth measurement
	Media   bool          // the variable-coefficient step (refbench's two materials), ghost 1 only
}

// Roofline measures the copy bandwidth for each thread count, then every
// point, writing a table to w as it goes.
func Roofline(w io.Writer, o RooflineOptions) ([]Point, error) {
	ceiling := map[int]float64{}
	for _, t := range o.Threads {
		bw := CopyBandwidth(t, o.CopyMiB<<20, 5)
		ceiling[t] = bw * 1e3 / BytesPerUpdate(o.Dims, o.Media)
		fmt.Fprintf(w, "copy bandwidth, %d thread(s): %.1f GB/s → one-sweep ceiling %.0f Mupdates/s (%.0f B an update)\n", t, bw, ceiling[t], BytesPerUpdate(o.Dims, o.Media))
	}
	inCache := map[int]float64{}
	for _, t := range o.Threads {
		p, err := MeasureKernel(o.Dims, inCacheN(o.Dims), t, 1, o.Media, o.Target)
		if err != nil {
			return nil, fmt.Errorf("dims=%d in-cache n=%d threads=%d: %w", o.Dims, inCacheN(o.Dims), t, err)
		}
		inCache[t] = p.MUpdates
		fmt.Fprintf(w, "in cache (n=%d), %d thread(s), kernel %s: %.0f Mupdates/s\n", p.N, t, p.Kernel, p.MUpdates)
	}
	fmt.Fprintf(w, "%-5s %-6s %-8s %-6s %-8s %12s %10s %9s %9s\n", "dims", "n", "threads", "ghost", "kernel", "Mupdates/s", "eff GB/s", "ceiling", "in-cache")
	var out []Point
	for _, n := range o.Sizes {
		for _, t := range o.Threads {
			for _, g := range o.Ghosts {
				if o.Media && g != 1 {
					continue // temporal blocking is the uniform medium's
				}
				p, err := MeasureKernel(o.Dims, n, t, g, o.Media, o.Target)
				if err != nil {
					return out, fmt.Errorf("dims=%d n=%d threads=%d ghost=%d: %w", o.Dims, n, t, g, err)
				}
				p.Ceiling, p.InCache = ceiling[t], inCache[t]
				out = append(out, p)
				fmt.Fprintf(w, "%-5d %-6d %-8d %-6d %-8s %12.0f %10.1f %8.2f× %8.2f×\n", p.Dims, p.N, p.Threads, p.Ghost, p.Kernel, p.MUpdates, p.GBs, p.Fraction(), p.CacheFraction())
			}
		}
	}
	fmt.Fprintf(w, "ceiling: over the one-sweep memory ceiling (temporal blocking passes 1); in-cache: over the same kernel's rate in cache (near 1: compute-bound)\n")
	return out, nil
}
