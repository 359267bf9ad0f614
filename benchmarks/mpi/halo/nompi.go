//go:build !(mpi && cgo)

package main

import (
	"fmt"
	"os"
)

// Without MPI there is nothing to measure: say how to build it.
func main() {
	fmt.Fprintln(os.Stderr, "halo: built without MPI: rebuild with `go build -tags mpi ./benchmarks/mpi/halo` (cgo and an MPI library such as libopenmpi-dev are needed)")
	os.Exit(2)
}
