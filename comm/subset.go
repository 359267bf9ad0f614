package comm

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Subset is some of a world's ranks as a world of their own (what
// MPI_Comm_split makes, for any transport): rank i of it is rank
// members[i] of c. The multigrid agglomerates its coarse levels onto such
// a subset. Only the members may use it, and every member must build it
// with the same members.
//
// Its point-to-point messages travel as c's, under the same tags, so its
// users keep their tags apart from c's other traffic. Its collectives run
// over point-to-point messages through member 0 with the tags
// TagSubset..TagSubset+4, folding the operands in rank order, so every
// member gets the same bits, as from c's own collectives.
func Subset(c Comm, members []int) (Comm, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("comm: a subset needs at least one rank")
	}
	me := -1
	seen := make(map[int]bool, len(members))
	for i, r := range members {
		if r < 0 || r >= c.Size() {
			return nil, fmt.Errorf("comm: subset member %d is not a rank of a world of %d", r, c.Size())
		}
		if seen[r] {
			return nil, fmt.Errorf("comm: rank %d is twice in the subset", r)
		}
		seen[r] = true
		if r == c.Rank() {
			me = i
		}
	}
	if me < 0 {
		return nil, fmt.Errorf("comm: rank %d builds a subset it is not in", c.Rank())
	}
	return &subset{c: c, members: slices.Clone(members), me: me}, nil
}

const (
	tagReduceUp = TagSubset + iota
	tagReduceDown
	tagBcast
	tagGatherLen
	tagGatherData
)

type subset struct {
	c       Comm
	members []int
	me      int
}

func (s *subset) Rank() int { return s.me }
func (s *subset) Size() int { return len(s.members) }

// RanksHere is the parent world's: a subset shares its processes' cores.
func (s *subset) RanksHere() int { return min(RanksHere(s.c), len(s.members)) }

func (s *subset) world(rank int) (int, error) {
	if rank < 0 || rank >= len(s.members) {
		return 0, fmt.Errorf("comm: rank %d outside a subset of %d", rank, len(s.members))
	}
	return s.members[rank], nil
}

func (s *subset) Isend(buf []float64, dest, tag int) (Request, error) {
	w, err := s.world(dest)
	if err != nil {
		return nil, err
	}
	return s.c.Isend(buf, w, tag)
}

func (s *subset) Irecv(buf []float64, src, tag int) (Request, error) {
	w, err := s.world(src)
	if err != nil {
		return nil, err
	}
	return s.c.Irecv(buf, w, tag)
}

func (s *subset) Waitall(reqs []Request) error { return s.c.Waitall(reqs) }

func (s *subset) send(buf []float64, dest, tag int) error {
	q, err := s.Isend(buf, dest, tag)
	if err != nil {
		return err
	}
	return s.c.Waitall([]Request{q})
}

func (s *subset) recv(buf []float64, src, tag int) error {
	q, err := s.Irecv(buf, src, tag)
	if err != nil {
		return err
	}
	return s.c.Waitall([]Request{q})
}

// Allreduce folds the members' operands on member 0 in rank order and
// sends the result back to every member.
func (s *subset) Allreduce(op Op, in, out []float64) error {
	if len(out) != len(in) {
		return fmt.Errorf("comm: Allreduce: out has %d values, in %d", len(out), len(in))
	}
	if s.me != 0 {
		if err := s.send(in, 0, tagReduceUp); err != nil {
			return err
		}
		return s.recv(out, 0, tagReduceDown)
	}
	acc := slices.Clone(in)
	v := make([]float64, len(in))
	for r := 1; r < len(s.members); r++ {
		if err := s.recv(v, r, tagReduceUp); err != nil {
			return err
		}
		op.Combine(acc, v)
	}
	for r := 1; r < len(s.members); r++ {
		if err := s.send(acc, r, tagReduceDown); err != nil {
			return err
		}
	}
	copy(out, acc)
	return nil
}

func (s *subset) Barrier() error {
	x := []float64{0}
	return s.Allreduce(Sum, x, x)
}

// Bytes travel packed eight to a float64 (bit patterns are copied, never
// computed on, so every pattern arrives intact).
func packBytes(b []byte) []float64 {
	out := make([]float64, (len(b)+7)/8)
	var w [8]byte
	for i := range out {
		clear(w[:])
		copy(w[:], b[8*i:])
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(w[:]))
	}
	return out
}

func unpackBytes(f []float64, b []byte) {
	var w [8]byte
	for i, x := range f {
		binary.LittleEndian.PutUint64(w[:], math.Float64bits(x))
		copy(b[8*i:], w[:])
	}
}

func (s *subset) Bcast(buf []byte, root int) error {
	if _, err := s.world(root); err != nil {
		return err
	}
	f := make([]float64, (len(buf)+7)/8)
	if s.me != root {
		if err := s.recv(f, root, tagBcast); err != nil {
			return err
		}
		unpackBytes(f, buf)
		return nil
	}
	f = packBytes(buf)
	for r := range s.members {
		if r != root {
			if err := s.send(f, r, tagBcast); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *subset) Gatherv(send []byte, root int) ([][]byte, error) {
	if _, err := s.world(root); err != nil {
		return nil, err
	}
	if s.me != root {
		if err := s.send([]float64{float64(len(send))}, root, tagGatherLen); err != nil {
			return nil, err
		}
		return nil, s.send(packBytes(send), root, tagGatherData)
	}
	out := make([][]byte, len(s.members))
	n := []float64{0}
	for r := range s.members {
		if r == root {
			out[r] = slices.Clone(send)
			continue
		}
		if err := s.recv(n, r, tagGatherLen); err != nil {
			return nil, err
		}
		out[r] = make([]byte, int(n[0]))
		f := make([]float64, (len(out[r])+7)/8)
		if err := s.recv(f, r, tagGatherData); err != nil {
			return nil, err
		}
		unpackBytes(f, out[r])
	}
	return out, nil
}
