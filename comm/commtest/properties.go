package commtest

import (
	"fmt"

	"heat/comm"
)

// The point-to-point properties below hold for every transport. Each is
// run by every rank of c, as its part of the check, and returns what went
// wrong on that rank. Messages travel round a ring (to the right, from the
// left), so they work on any number of ranks, one included. sizes are the
// message lengths to try: a transport names the ones where its paths
// change (comm/mpi: through C memory up to 128 values, pinned above).

// neighbours are the ranks to the left and right of c's rank on a ring.
func neighbours(c comm.Comm) (left, right int) {
	n := c.Size()
	return (c.Rank() + n - 1) % n, (c.Rank() + 1) % n
}

// SelfSend: a rank sends to itself, the receive posted first or second.
func SelfSend(c comm.Comm, sizes []int) error {
	me := c.Rank()
	for _, m := range sizes {
		for _, recvFirst := range []bool{true, false} {
			out, in := Fill(make([]float64, m), me, 9, m), make([]float64, m)
			var rq, sq comm.Request
			var err error
			if recvFirst {
				if rq, err = c.Irecv(in, me, 9); err != nil {
					return err
				}
			}
			if sq, err = c.Isend(out, me, 9); err != nil {
				return err
			}
			if !recvFirst {
				if rq, err = c.Irecv(in, me, 9); err != nil {
					return err
				}
			}
			if err := c.Waitall([]comm.Request{sq, rq}); err != nil {
				return err
			}
			if err := Verify(me, in, me, 9, m); err != nil {
				return fmt.Errorf("m=%d recvFirst=%v: %w", m, recvFirst, err)
			}
		}
	}
	return nil
}

// TagsMatchOutOfOrder: receives posted in the reverse order of the sends
// still match on tag, whether they are posted before the messages are sent
// or after.
func TagsMatchOutOfOrder(c comm.Comm) error {
	const tags, m = 6, 7
	me := c.Rank()
	left, right := neighbours(c)
	for _, recvFirst := range []bool{true, false} {
		var reqs []comm.Request
		bufs := make([][]float64, tags)
		post := func() error {
			for tag := tags - 1; tag >= 0; tag-- {
				bufs[tag] = make([]float64, m)
				q, err := c.Irecv(bufs[tag], left, tag)
				if err != nil {
					return err
				}
				reqs = append(reqs, q)
			}
			return nil
		}
		if recvFirst {
			if err := post(); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		for tag := range tags {
			q, err := c.Isend(Fill(make([]float64, m), me, tag, 0), right, tag)
			if err != nil {
				return err
			}
			reqs = append(reqs, q)
		}
		if !recvFirst {
			if err := c.Barrier(); err != nil { // the sends are posted everywhere first
				return err
			}
			if err := post(); err != nil {
				return err
			}
		}
		if err := c.Waitall(reqs); err != nil {
			return err
		}
		for tag := range tags {
			if err := Verify(me, bufs[tag], left, tag, 0); err != nil {
				return fmt.Errorf("recvFirst=%v: %w", recvFirst, err)
			}
		}
	}
	return nil
}

// FIFOSameTag: messages with the same source and tag arrive in the order
// they were sent, whether the receives are posted before the sends or after.
func FIFOSameTag(c comm.Comm, sizes []int) error {
	const k = 20
	me := c.Rank()
	left, right := neighbours(c)
	for _, m := range sizes {
		for _, recvFirst := range []bool{true, false} {
			var reqs []comm.Request
			in := make([][]float64, k)
			recv := func() error {
				for i := range in {
					in[i] = make([]float64, m)
					q, err := c.Irecv(in[i], left, 4)
					if err != nil {
						return err
					}
					reqs = append(reqs, q)
				}
				return nil
			}
			send := func() error {
				for i := range k {
					q, err := c.Isend(Fill(make([]float64, m), me, 4, i), right, 4)
					if err != nil {
						return err
					}
					reqs = append(reqs, q)
				}
				return nil
			}
			first, second := send, recv
			if recvFirst {
				first, second = recv, send
			}
			if err := first(); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil { // the first half is posted everywhere
				return err
			}
			if err := second(); err != nil {
				return err
			}
			if err := c.Waitall(reqs); err != nil {
				return err
			}
			for i := range k {
				if err := Verify(me, in[i], left, 4, i); err != nil {
					return fmt.Errorf("m=%d recvFirst=%v: message %d: %w", m, recvFirst, i, err)
				}
			}
		}
	}
	return nil
}

// SendBufferReuse: a send buffer may be overwritten as soon as its Isend
// has completed; the receiver still gets what it held when it was sent.
func SendBufferReuse(c comm.Comm, sizes []int) error {
	const rounds = 5
	me := c.Rank()
	left, right := neighbours(c)
	for _, m := range sizes {
		in := make([][]float64, rounds)
		var recvs []comm.Request
		for round := range in {
			in[round] = make([]float64, m)
			q, err := c.Irecv(in[round], left, 2)
			if err != nil {
				return err
			}
			recvs = append(recvs, q)
		}
		out := make([]float64, m)
		for round := range rounds {
			q, err := c.Isend(Fill(out, me, 2, round), right, 2)
			if err != nil {
				return err
			}
			if err := c.Waitall([]comm.Request{q}); err != nil {
				return err
			}
			for i := range out {
				out[i] = -1
			}
		}
		if err := c.Waitall(recvs); err != nil {
			return err
		}
		for round := range rounds {
			if err := Verify(me, in[round], left, 2, round); err != nil {
				return fmt.Errorf("m=%d: %w", m, err)
			}
		}
	}
	return nil
}

// Property is one named check of a transport.
type Property struct {
	Name  string
	Check func(comm.Comm) error
}

// PointToPoint are the point-to-point properties, with messages of the
// given sizes where a property takes sizes.
func PointToPoint(sizes []int) []Property {
	return []Property{
		{"Ring", func(c comm.Comm) error { return Ring(c, 20, 7) }},
		{"SelfSend", func(c comm.Comm) error { return SelfSend(c, sizes) }},
		{"TagsMatchOutOfOrder", TagsMatchOutOfOrder},
		{"FIFOSameTag", func(c comm.Comm) error { return FIFOSameTag(c, sizes) }},
		{"SendBufferReuse", func(c comm.Comm) error { return SendBufferReuse(c, sizes) }},
	}
}
