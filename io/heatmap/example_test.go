package heatmap_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"heat/io/heatmap"
)

// A snapshot of a 3D field: cut a plane, then write it as a PNG with a title,
// its physical axes and a labelled colour bar (.svg or .pdf for a paper).
func ExampleWrite() {
	out, err := os.MkdirTemp("", "heat-out")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)

	shape := []int{32, 48, 64} // [nz, ny, nx]
	field := make([]float64, 32*48*64)
	for k := range field {
		field[k] = float64(k % 64) // warmer towards +x
	}
	plane, ny, nx, label, err := heatmap.Slice(field, shape, "z=mid")
	if err != nil {
		log.Fatal(err)
	}
	// The plane z=mid spans x in [0, 2] and y in [0, 1.5]: cells 2/64 by 1.5/48.
	o := heatmap.Options{Cmap: "inferno", Title: "step 200  t = 0.0123  " + label, Label: "u", Width: 2, Height: 1.5}
	if err := heatmap.Write(filepath.Join(out, "u-000200.png"), plane, ny, nx, o); err != nil {
		log.Fatal(err)
	}
	fmt.Println(label, ny, nx)
	// Output: z=16 48 64
}
