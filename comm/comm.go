// Package comm is the rank transport of heat: one small interface that the
// in-process goroutine ranks (comm/local) and MPI (comm/mpi, -tags mpi) both
// implement. Everything above it (halo, solver, checkpoint) talks only to Comm.
package comm

import (
	"errors"
	"fmt"
)

// Op is a reduction operator for Allreduce.
type Op int

const (
	Sum Op = iota
	Max
	Min
)

func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return "unknown"
}

// Combine folds v into acc element by element: acc[i] = acc[i] op v[i].
// Transports fold the ranks' operands into rank 0's in rank order with it,
// so that every rank and every transport gets the same bits. Max and Min
// give NaN where either operand is NaN (Go's max and min).
func (o Op) Combine(acc, v []float64) {
	v = v[:len(acc)]
	switch o {
	case Sum:
		for i := range acc {
			acc[i] += v[i]
		}
	case Max:
		for i := range acc {
			acc[i] = max(acc[i], v[i])
		}
	case Min:
		for i := range acc {
			acc[i] = min(acc[i], v[i])
		}
	}
}

// Call names a collective call for the errors of ranks that disagree about
// one (another collective, another length or root): every transport
// describes them alike.
type Call struct {
	Kind CallKind
	Op   Op  // Allreduce
	Len  int // Allreduce: len(in); Bcast, Gatherv: len(buf)
	Root int // Bcast, Gatherv
}

// CallKind is which collective a Call is; the zero value is none.
type CallKind int

const (
	Allreduce CallKind = iota + 1
	Bcast
	Barrier
	Gatherv
)

func (c Call) String() string {
	switch c.Kind {
	case Allreduce:
		return fmt.Sprintf("Allreduce(%v, len %d)", c.Op, c.Len)
	case Bcast:
		return fmt.Sprintf("Bcast(len %d, root %d)", c.Len, c.Root)
	case Barrier:
		return "Barrier"
	case Gatherv:
		return fmt.Sprintf("Gatherv(root %d)", c.Root)
	}
	return fmt.Sprintf("unknown collective %d", int(c.Kind))
}

// ErrAborted is returned by blocking operations on every rank once any rank
// of the world has failed, so that a failure ends the job instead of hanging it.
var ErrAborted = errors.New("comm: aborted because another rank failed")

// Request is a pending nonblocking operation; complete it with Comm.Waitall.
type Request interface {
	// Done reports whether the operation has completed (it does not block).
	Done() bool
}

// Comm is one rank's view of the world of ranks.
//
// Point-to-point messages carry float64 values and match on (source, tag) in
// the order they were posted, like MPI. A send buffer may be reused as soon as
// the Isend request has completed; a receive buffer is written only by its own
// request. Collectives must be called by every rank in the same order.
type Comm interface {
	// Rank is this rank's number, 0 <= Rank < Size.
	Rank() int
	// Size is the number of ranks in the world.
	Size() int
	// Isend starts sending buf to rank dest with the given tag (>= 0).
	Isend(buf []float64, dest, tag int) (Request, error)
	// Irecv starts receiving exactly len(buf) values from rank src with tag.
	Irecv(buf []float64, src, tag int) (Request, error)
	// Waitall blocks until every request has completed.
	Waitall(reqs []Request) error
	// Allreduce combines in element-wise over all ranks with op and stores
	// the result in out (len(out) == len(in)) on every rank. The operands are
	// combined in rank order 0, 1, ..., Size-1 on every rank, so every rank
	// gets identical bits.
	Allreduce(op Op, in, out []float64) error
	// Bcast copies root's buf into buf on every other rank (same length).
	Bcast(buf []byte, root int) error
	// Barrier returns once every rank has entered it.
	Barrier() error
	// Gatherv collects every rank's send on root, indexed by rank; other
	// ranks get nil.
	Gatherv(send []byte, root int) ([][]byte, error)
}

// RanksHere is how many of c's ranks run in this process: all of them for
// in-process ranks (comm/local), or what c's own RanksHere method says
// (comm/mpi: one per process). Code sizing its threads to the cores it
// shares with the other ranks asks it.
func RanksHere(c Comm) int {
	if h, ok := c.(interface{ RanksHere() int }); ok {
		return h.RanksHere()
	}
	return c.Size()
}

// Agree tells every rank of c the outcome of a phase that may fail on some
// ranks only: first is the lowest failing rank (-1 if none failed) — by
// heat's one rule the rank that reports the failure, the others staying
// quiet — and code the largest of the failing ranks' codes. Collective: one
// Allreduce.
func Agree(c Comm, failed bool, code int) (first, maxCode int, err error) {
	in := []float64{0, 0}
	if failed {
		in[0], in[1] = float64(c.Size()-c.Rank()), float64(code)
	}
	out := make([]float64, 2)
	if err := c.Allreduce(Max, in, out); err != nil {
		return -1, 0, err
	}
	if out[0] == 0 {
		return -1, 0, nil
	}
	return c.Size() - int(out[0]), int(out[1]), nil
}
