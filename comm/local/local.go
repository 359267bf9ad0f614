// Package local runs a world of N ranks as goroutines in one process: the
// embedded default transport of heat, with the same semantics as comm/mpi.
//
// Point-to-point messages are matched on (source, tag), first posted first
// matched among equal pairs, and copied once, straight from the send buffer
// into the receive buffer (a send waits for its receive; there is no eager
// buffering). Collectives meet in one generation-counted rendezvous; their
// inputs are copied when deposited. When a rank fails, the world is aborted
// and every blocking call on every rank returns comm.ErrAborted. When a rank
// returns while another waits for it in Waitall or a collective, the waiter
// gets an error instead of hanging.
//
// Point-to-point methods and Waitall are safe for concurrent use by the
// goroutines of one rank; collectives must be called by one goroutine per
// rank, in the same order on every rank.
package local

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"heat/comm"
	"heat/internal/wait"
)

// Run starts n ranks as goroutines, calls fn on each with that rank's Comm,
// and waits for all of them. It returns the error of the lowest rank that
// really failed, exactly as that rank returned it; the comm.ErrAborted errors
// that a failure causes on the other ranks never hide it. A panic (or a
// runtime.Goexit, such as t.FailNow) in fn becomes an error naming the rank.
// Any failure aborts the world so that the other ranks stop promptly.
func Run(n int, fn func(c comm.Comm) error) error {
	if n < 1 {
		return fmt.Errorf("local: need at least 1 rank, got %d", n)
	}
	w := NewWorld(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { w.runRank(r, fn, errs) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, comm.ErrAborted) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runRank calls fn as rank r and stores its outcome in errs[r]. It records
// the outcome from a deferred call so that panics and runtime.Goexit are
// reported too, and aborts the world on failure or marks the rank as
// returned on success.
func (w *World) runRank(r int, fn func(c comm.Comm) error, errs []error) {
	returned := false
	var err error
	defer func() {
		if p := recover(); p != nil {
			verb := "%v"
			if _, ok := p.(error); ok {
				verb = "%w"
			}
			err = fmt.Errorf("local: rank %d panicked: "+verb+"\n\n%s", r, p, debug.Stack())
		} else if !returned {
			err = fmt.Errorf("local: rank %d exited without returning (runtime.Goexit, e.g. t.FailNow called on a rank)", r)
		}
		errs[r] = err
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			w.Abort(fmt.Errorf("rank %d failed: %s", r, first))
		} else {
			w.markReturned(r)
		}
	}()
	err = fn(w.comms[r])
	returned = true
}

// World is one set of n ranks that can talk to each other. Run creates one
// per call; tests and callers that manage their own goroutines use NewWorld.
type World struct {
	n     int
	comms []*rankComm
	boxes []*mailbox // boxes[r] holds the messages to rank r

	aborted chan struct{} // closed by Abort

	mu       sync.Mutex // guards everything below and the rounds
	cond     *sync.Cond // signalled when a round completes, on abort and on return
	cause    error      // why the world was aborted; set before aborted is closed
	returned []bool     // ranks whose function has returned (set by Run only)
	exitCh   chan struct{}
	cur      *round // the collective round being filled

	spin *wait.Site // Waitall's polls
}

// NewWorld returns a world of n ranks; it panics if n < 1. Each rank's Comm
// must be driven by its own goroutine(s), since collectives block until every
// rank has entered them.
func NewWorld(n int) *World {
	if n < 1 {
		panic(fmt.Sprintf("local: need at least 1 rank, got %d", n))
	}
	w := &World{
		n:        n,
		comms:    make([]*rankComm, n),
		boxes:    make([]*mailbox, n),
		aborted:  make(chan struct{}),
		returned: make([]bool, n),
		exitCh:   make(chan struct{}),
		cur:      newRound(n),
		spin:     wait.NewSite(waitSpin, n <= runtime.GOMAXPROCS(0)),
	}
	w.cond = sync.NewCond(&w.mu)
	for r := range n {
		w.comms[r] = &rankComm{w: w, rank: r}
		w.boxes[r] = &mailbox{
			sends: make(map[matchKey][]*request),
			recvs: make(map[matchKey][]*request),
		}
	}
	return w
}

// Comm returns the Comm of the given rank; it panics if rank is out of range.
func (w *World) Comm(rank int) comm.Comm {
	if rank < 0 || rank >= w.n {
		panic(fmt.Sprintf("local: rank %d out of range for a world of %d", rank, w.n))
	}
	return w.comms[rank]
}

// Abort makes every blocking operation of every rank, now and later, return
// comm.ErrAborted, with err as the stated cause. Only the first call counts.
func (w *World) Abort(err error) {
	if err == nil {
		err = errors.New("world aborted")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cause != nil {
		return
	}
	w.cause = err
	close(w.aborted)
	w.cond.Broadcast()
}

// isAborted reports, without blocking, whether the world has been aborted.
func (w *World) isAborted() bool {
	select {
	case <-w.aborted:
		return true
	default:
		return false
	}
}

// abortErr is the error a blocking call op on rank returns after an abort;
// only call it once w.aborted is closed.
func (w *World) abortErr(rank int, op string) error {
	return fmt.Errorf("local: rank %d: %s: %w (%v)", rank, op, comm.ErrAborted, w.cause)
}

// markReturned records that rank r's function has returned, and wakes the
// waiters that may now know they can never complete.
func (w *World) markReturned(r int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.returned[r] = true
	close(w.exitCh)
	w.exitCh = make(chan struct{})
	w.cond.Broadcast()
}

// rankComm is one rank's comm.Comm.
type rankComm struct {
	w    *World
	rank int
}

func (c *rankComm) Rank() int { return c.rank }
func (c *rankComm) Size() int { return c.w.n }

// ---- point to point ----

// matchKey is what a receive matches a send on.
type matchKey struct{ src, tag int }

// mailbox holds the unmatched sends to one rank and its unmatched receives,
// each a FIFO queue per (source, tag).
type mailbox struct {
	mu    sync.Mutex
	sends map[matchKey][]*request
	recvs map[matchKey][]*request
}

// request is a pending Isend or Irecv. err is written before done is closed
// and read only after.
type request struct {
	buf   []float64
	owner int // rank that posted it
	peer  int // destination of a send, source of a receive
	tag   int
	send  bool
	err   error
	done  chan struct{}
}

// waitSpin caps how long Waitall polls a request before it blocks.
const waitSpin = 50 * time.Microsecond

// Done reports whether the request has completed.
func (q *request) Done() bool {
	select {
	case <-q.done:
		return true
	default:
		return false
	}
}

func (q *request) describe() string {
	if q.send {
		return fmt.Sprintf("send to rank %d with tag %d", q.peer, q.tag)
	}
	return fmt.Sprintf("receive from rank %d with tag %d", q.peer, q.tag)
}

// push appends q to the queue of k.
func push(m map[matchKey][]*request, k matchKey, q *request) {
	m[k] = append(m[k], q)
}

// pop removes and returns the oldest request queued under k, or nil.
func pop(m map[matchKey][]*request, k matchKey) *request {
	qs := m[k]
	if len(qs) == 0 {
		return nil
	}
	q := qs[0]
	if len(qs) == 1 {
		delete(m, k)
	} else {
		qs[0] = nil
		m[k] = qs[1:]
	}
	return q
}

// deliver copies a matched send into its receive and completes both. It runs
// outside the mailbox lock: once popped, the pair belongs to the caller alone.
func deliver(s, r *request) {
	if len(s.buf) != len(r.buf) {
		err := fmt.Errorf("local: message from rank %d to rank %d with tag %d: send has %d values but receive expects %d",
			s.owner, r.owner, s.tag, len(s.buf), len(r.buf))
		s.err, r.err = err, err
	} else {
		copy(r.buf, s.buf)
	}
	close(s.done)
	close(r.done)
}

// checkPeer validates a point-to-point peer rank and tag.
func (c *rankComm) checkPeer(op, role string, peer, tag int) error {
	if peer < 0 || peer >= c.w.n {
		return fmt.Errorf("local: rank %d: %s: invalid %s rank %d (world size %d)", c.rank, op, role, peer, c.w.n)
	}
	if tag < 0 {
		return fmt.Errorf("local: rank %d: %s: invalid tag %d (must be >= 0)", c.rank, op, tag)
	}
	return nil
}

// Isend hands buf to the matching receive if one is posted, copying it
// there at once; otherwise it queues buf, which the caller must leave alone
// until the request completes.
func (c *rankComm) Isend(buf []float64, dest, tag int) (comm.Request, error) {
	if err := c.checkPeer("Isend", "destination", dest, tag); err != nil {
		return nil, err
	}
	if c.w.isAborted() {
		return nil, c.w.abortErr(c.rank, "Isend")
	}
	s := &request{buf: buf, owner: c.rank, peer: dest, tag: tag, send: true, done: make(chan struct{})}
	box := c.w.boxes[dest]
	k := matchKey{src: c.rank, tag: tag}
	box.mu.Lock()
	r := pop(box.recvs, k)
	if r == nil {
		push(box.sends, k, s)
	}
	box.mu.Unlock()
	if r != nil {
		deliver(s, r)
	}
	return s, nil
}

// Irecv takes the oldest queued matching send if there is one, copying it
// into buf at once; otherwise it posts buf for the matching Isend to fill.
func (c *rankComm) Irecv(buf []float64, src, tag int) (comm.Request, error) {
	if err := c.checkPeer("Irecv", "source", src, tag); err != nil {
		return nil, err
	}
	if c.w.isAborted() {
		return nil, c.w.abortErr(c.rank, "Irecv")
	}
	r := &request{buf: buf, owner: c.rank, peer: src, tag: tag, done: make(chan struct{})}
	box := c.w.boxes[c.rank]
	k := matchKey{src: src, tag: tag}
	box.mu.Lock()
	s := pop(box.sends, k)
	if s == nil {
		push(box.recvs, k, r)
	}
	box.mu.Unlock()
	if s != nil {
		deliver(s, r)
	}
	return r, nil
}

// Waitall waits for every non-nil request and returns the first error among
// them. It returns early with comm.ErrAborted if the world aborts, and with
// an error if a request's peer rank has returned without matching it.
func (c *rankComm) Waitall(reqs []comm.Request) error {
	var first error
	for i, rq := range reqs {
		if rq == nil {
			continue
		}
		q, ok := rq.(*request)
		if !ok {
			if first == nil {
				first = fmt.Errorf("local: rank %d: Waitall: request %d is a %T, not one of comm/local", c.rank, i, rq)
			}
			continue
		}
		if q == nil {
			continue
		}
		if err := c.wait(q); err != nil {
			if errors.Is(err, comm.ErrAborted) {
				return err
			}
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// wait blocks until q completes, the world aborts, or q's peer has returned
// (then q can never complete: every match a rank makes completes before its
// function returns).
func (c *rankComm) wait(q *request) error {
	w := c.w
	// Poll a little before blocking: a message from a rank that is still
	// computing usually arrives within microseconds, and waking a blocked
	// goroutine costs tens of them. How long adapts (package wait), and
	// not at all where the ranks outnumber the Ps.
	ok, start := w.spin.Until(q.Done)
	if ok {
		return q.err
	}
	defer w.spin.Woke(start)
	for {
		select {
		case <-q.done:
			return q.err
		default:
		}
		w.mu.Lock()
		exitCh := w.exitCh
		gone := q.peer != c.rank && w.returned[q.peer]
		w.mu.Unlock()
		if gone {
			if q.Done() {
				return q.err
			}
			return fmt.Errorf("local: rank %d: Waitall: %s can never complete: rank %d has returned", c.rank, q.describe(), q.peer)
		}
		select {
		case <-q.done:
			return q.err
		case <-w.aborted:
			if q.Done() {
				return q.err
			}
			return w.abortErr(c.rank, "Waitall")
		case <-exitCh:
		}
	}
}

// ---- collectives ----

// deposit is what one rank brings to a collective: its call and a private
// copy of its input, which other ranks may read after the round completes.
type deposit struct {
	comm.Call
	outLen int
	vals   []float64 // Allreduce input
	bytes  []byte    // Bcast root's buffer, Gatherv input
}

// round is one generation of the rendezvous. Once done, its slots are only
// read.
type round struct {
	slots   []*deposit
	arrived int
	done    bool
}

func newRound(n int) *round { return &round{slots: make([]*deposit, n)} }

// meet deposits d for this rank in the current round and waits until every
// rank has deposited, returning all deposits in rank order.
func (c *rankComm) meet(name string, d *deposit) ([]*deposit, error) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cause != nil {
		return nil, w.abortErr(c.rank, name)
	}
	r := w.cur
	if r.slots[c.rank] != nil {
		return nil, fmt.Errorf("local: rank %d: %s: called while this rank is still in %v (collectives must not run concurrently on one rank)",
			c.rank, name, r.slots[c.rank])
	}
	r.slots[c.rank] = d
	r.arrived++
	if r.arrived == w.n {
		r.done = true
		w.cur = newRound(w.n)
		w.cond.Broadcast()
		return r.slots, nil
	}
	for !r.done {
		if w.cause != nil {
			return nil, w.abortErr(c.rank, name)
		}
		for i, ok := range w.returned {
			if ok && r.slots[i] == nil {
				return nil, fmt.Errorf("local: rank %d: %s can never complete: rank %d has returned without entering it", c.rank, name, i)
			}
		}
		w.cond.Wait()
	}
	return r.slots, nil
}

// agree checks that every rank made the same call (as far as match says);
// since every rank checks the same deposits, they all fail or none does.
func (c *rankComm) agree(name string, slots []*deposit, match func(a, b *deposit) bool) error {
	for i, d := range slots {
		if d.Kind != slots[0].Kind || !match(slots[0], d) {
			return fmt.Errorf("local: rank %d: %s: ranks disagree: rank 0 called %v, rank %d called %v", c.rank, name, slots[0], i, d)
		}
	}
	return nil
}

// Allreduce combines in over all ranks in rank order, (((in0 op in1) op
// in2) ...), on every rank from the same copies, so all ranks get the same
// bits. out may alias in. Max and Min return NaN where any operand is NaN.
func (c *rankComm) Allreduce(op comm.Op, in, out []float64) error {
	d := &deposit{Call: comm.Call{Kind: comm.Allreduce, Op: op, Len: len(in)}, outLen: len(out), vals: append([]float64(nil), in...)}
	slots, err := c.meet("Allreduce", d)
	if err != nil {
		return err
	}
	if err := c.agree("Allreduce", slots, func(a, b *deposit) bool { return a.Op == b.Op && a.Len == b.Len }); err != nil {
		return err
	}
	for i, d := range slots {
		if d.outLen != d.Len {
			return fmt.Errorf("local: rank %d: Allreduce: rank %d passed len(in) = %d but len(out) = %d", c.rank, i, d.Len, d.outLen)
		}
	}
	if op != comm.Sum && op != comm.Max && op != comm.Min {
		return fmt.Errorf("local: rank %d: Allreduce: unknown op %d", c.rank, int(op))
	}
	out = out[:len(in)]
	copy(out, slots[0].vals)
	for _, d := range slots[1:] {
		op.Combine(out, d.vals)
	}
	return nil
}

// Bcast copies root's buf into buf on every other rank. Root's bytes are
// copied when deposited, so root may reuse buf as soon as it returns.
func (c *rankComm) Bcast(buf []byte, root int) error {
	d := &deposit{Call: comm.Call{Kind: comm.Bcast, Root: root, Len: len(buf)}}
	if root == c.rank {
		d.bytes = append([]byte(nil), buf...)
	}
	slots, err := c.meet("Bcast", d)
	if err != nil {
		return err
	}
	if err := c.agree("Bcast", slots, func(a, b *deposit) bool { return a.Root == b.Root && a.Len == b.Len }); err != nil {
		return err
	}
	if root < 0 || root >= c.w.n {
		return fmt.Errorf("local: rank %d: Bcast: invalid root %d (world size %d)", c.rank, root, c.w.n)
	}
	if root != c.rank {
		copy(buf, slots[root].bytes)
	}
	return nil
}

// Barrier returns once every rank has entered it.
func (c *rankComm) Barrier() error {
	slots, err := c.meet("Barrier", &deposit{Call: comm.Call{Kind: comm.Barrier}})
	if err != nil {
		return err
	}
	return c.agree("Barrier", slots, func(a, b *deposit) bool { return true })
}

// Gatherv returns, on root, a copy of every rank's send indexed by rank;
// other ranks get nil.
func (c *rankComm) Gatherv(send []byte, root int) ([][]byte, error) {
	d := &deposit{Call: comm.Call{Kind: comm.Gatherv, Root: root, Len: len(send)}, bytes: append(make([]byte, 0, len(send)), send...)}
	slots, err := c.meet("Gatherv", d)
	if err != nil {
		return nil, err
	}
	if err := c.agree("Gatherv", slots, func(a, b *deposit) bool { return a.Root == b.Root }); err != nil {
		return nil, err
	}
	if root < 0 || root >= c.w.n {
		return nil, fmt.Errorf("local: rank %d: Gatherv: invalid root %d (world size %d)", c.rank, root, c.w.n)
	}
	if root != c.rank {
		return nil, nil
	}
	// The deposits are private copies that only root reads the bytes of.
	all := make([][]byte, c.w.n)
	for i, d := range slots {
		all[i] = d.bytes
	}
	return all, nil
}
