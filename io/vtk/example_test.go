package vtk_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"heat/io/vtk"
)

// One parallel snapshot per step: every rank writes its box (interior cells
// only, no ghosts) as a .vti, rank 0 writes the .pvti that joins them and
// adds it to the run's .pvd, which ParaView plays as an animation.
func ExampleWritePVTI() {
	out, err := os.MkdirTemp("", "heat-out")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)

	g := vtk.Grid{Shape: []int{4, 6}, Spacing: []float64{0.25, 1.0 / 6}} // [ny, nx], length 1×1
	boxes := [][2][]int{{{0, 0}, {4, 3}}, {{0, 3}, {4, 6}}}              // two ranks split x
	series := vtk.NewSeries(filepath.Join(out, "snapshots.pvd"))
	o := vtk.Options{Compress: true}

	for step, time := range []float64{0, 0.01} {
		var pieces []vtk.Piece
		for rank, b := range boxes {
			lo, hi := b[0], b[1]
			field := make([]float64, (hi[0]-lo[0])*(hi[1]-lo[1])) // this rank's interior, C order
			src := filepath.Join(out, fmt.Sprintf("u-%06d-r%d.vti", step, rank))
			if err := vtk.WriteVTI(src, g, lo, hi, field, o); err != nil {
				log.Fatal(err)
			}
			pieces = append(pieces, vtk.Piece{Lo: lo, Hi: hi, Source: src})
		}
		pvti := filepath.Join(out, fmt.Sprintf("u-%06d.pvti", step))
		if err := vtk.WritePVTI(pvti, g, pieces, o); err != nil {
			log.Fatal(err)
		}
		if err := series.Add(time, pvti); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(series.Entries())
	// Output: [{0 u-000000.pvti} {0.01 u-000001.pvti}]
}
