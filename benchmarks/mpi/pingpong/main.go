//go:build mpi && cgo

// Command pingpong measures benchmarks.PingPong through comm/mpi at 8 B and
// 8 MiB and prints the lines benchmarks/mpi/pingpong.c prints, so that
// compare.sh can set the Go binding against plain C.
//
//	go build -tags mpi -o pingpong-go ./benchmarks/mpi/pingpong
//	mpirun -np 2 ./pingpong-go [iters_8B [iters_8MiB]]
package main

import (
	"fmt"
	"os"
	"strconv"

	"heat/benchmarks"
	"heat/comm/mpi"
)

func main() {
	w, err := mpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(2)
	}
	code := 0
	if err := run(w, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		code = 1
	}
	if err := w.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		code = 1
	}
	os.Exit(code)
}

func run(w *mpi.World, args []string) error {
	c := w.Comm()
	bytes := []int{8, 8 << 20}
	iters := []int{20000, 200}
	for k, a := range args {
		if k >= len(iters) {
			return fmt.Errorf("usage: pingpong [iters_8B [iters_8MiB]], got %d arguments", len(args))
		}
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 {
			return fmt.Errorf("round trips must be >= 1, got %q", a)
		}
		iters[k] = n
	}
	if c.Rank() == 0 {
		fmt.Printf("# impl=go library=%s thread_level=%s\n", mpi.LibraryVersion(), mpi.ThreadLevel)
	}
	for k, b := range bytes {
		t, err := benchmarks.PingPong(c, b, iters[k])
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Printf("pingpong impl=go bytes=%d iters=%d latency_us=%.3f bandwidth_MBps=%.1f\n", b, iters[k], t*1e6, float64(b)/t/1e6)
		}
	}
	return nil
}
