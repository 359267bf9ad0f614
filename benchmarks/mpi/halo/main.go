//go:build mpi && cgo

// Command halo times one ghost exchange of heat's halo package over
// comm/mpi: an n×n field (default 4096²) split over the ranks by decomp,
// one ghost layer, faces only, no periodic wrap. It prints the line
// benchmarks/mpi/halo.c prints for the same exchange in plain C, so that
// compare.sh can set them side by side. The first exchange is checked: every
// ghost must hold its neighbour's cell. Time per exchange is the slowest
// rank's mean over reps exchanges, after 10 warm-up ones.
//
//	go build -tags mpi -o halo-go ./benchmarks/mpi/halo
//	mpirun -np 4 ./halo-go [n [reps]]
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"heat/comm"
	"heat/comm/mpi"
	"heat/decomp"
	"heat/field"
	"heat/halo"
)

func main() {
	w, err := mpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "halo:", err)
		os.Exit(2)
	}
	code := 0
	if err := run(w.Comm(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "halo:", err)
		code = 1
	}
	if err := w.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "halo:", err)
		code = 1
	}
	os.Exit(code)
}

func run(c comm.Comm, args []string) error {
	n, reps := 4096, 200
	for k, p := range []*int{&n, &reps} {
		if k < len(args) {
			v, err := strconv.Atoi(args[k])
			if err != nil || v < 1 {
				return fmt.Errorf("usage: halo [n [reps]], got %q", args)
			}
			*p = v
		}
	}
	g, err := decomp.New([]int{n, n}, c.Size(), nil, nil)
	if err != nil {
		return err
	}
	f := field.New(decomp.NewLayout(g.Box(c.Rank()), 1))
	geo := field.Geometry{Shape: g.Shape}
	cell := make([]int, 2)
	f.Rows(func(start, count int) {
		for i := start; i < start+count; i++ {
			f.Cell(i, cell)
			f.Data[i] = float64(geo.Index(cell))
		}
	})
	u := f.Data
	p, err := halo.NewPlan(c, g, f.Layout, halo.Options{})
	if err != nil {
		return err
	}
	exchange := func() error {
		if err := p.Start(u); err != nil {
			return err
		}
		return p.Finish(u)
	}
	if err := exchange(); err != nil {
		return err
	}
	bad := []float64{float64(badGhosts(f, geo))}
	if err := c.Allreduce(comm.Sum, bad, bad); err != nil {
		return err
	}
	if bad[0] != 0 {
		return fmt.Errorf("%.0f ghosts do not hold their neighbour's cell", bad[0])
	}
	for range 10 {
		if err := exchange(); err != nil {
			return err
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	t0 := time.Now()
	for range reps {
		if err := exchange(); err != nil {
			return err
		}
	}
	slowest := []float64{time.Since(t0).Seconds() / float64(reps)}
	if err := c.Allreduce(comm.Max, slowest, slowest); err != nil {
		return err
	}
	if c.Rank() == 0 {
		fmt.Printf("halo impl=go n=%d ranks=%d dims=%s reps=%d us_per_exchange=%.1f\n", n, c.Size(), decomp.FormatDims(g.Dims), reps, slowest[0]*1e6)
	}
	return nil
}

// badGhosts counts the face ghosts of f inside the grid geo that do not
// hold the global index of their cell.
func badGhosts(f field.Field, geo field.Geometry) int {
	bad, lay := 0, f.Layout
	for y := -1; y <= lay.N[0]; y++ {
		for x := -1; x <= lay.N[1]; x++ {
			outY, outX := y < 0 || y >= lay.N[0], x < 0 || x >= lay.N[1]
			gy, gx := lay.Box.Lo[0]+y, lay.Box.Lo[1]+x
			if outY == outX || gy < 0 || gy >= geo.Shape[0] || gx < 0 || gx >= geo.Shape[1] {
				continue // a cell of the box, a corner, or past the grid's edge
			}
			if f.Data[f.Index(gy, gx)] != float64(geo.Index([]int{gy, gx})) {
				bad++
			}
		}
	}
	return bad
}
