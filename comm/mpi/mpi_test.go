//go:build mpi && cgo

package mpi

// These tests run on every rank of an MPI job:
//
//	go test -tags mpi -exec "mpirun -np 4 --oversubscribe" ./comm/mpi/
//
// (and with -np 1, 2, 3; tests that need more ranks skip). Each test is one
// function per rank, run through each, which agrees on the outcome across
// ranks so that a failure anywhere fails every rank instead of hanging it.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
	"weak"

	"heat/comm"
	"heat/comm/commtest"
	"heat/decomp"
	"heat/halo"
)

var world *World

// smallest is the length of the smallest message that does not travel
// through C memory but from or into its pinned Go buffer.
const smallest = 129

func TestMain(m *testing.M) {
	w, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	world = w
	code := m.Run()
	// Every rank exits with the worst code of all, so mpirun reports a
	// failure on any rank.
	worst := []float64{float64(code)}
	if err := w.Comm().Allreduce(comm.Max, worst, worst); err != nil {
		fmt.Fprintln(os.Stderr, err)
		w.Abort(1)
	}
	if err := w.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(int(worst[0]))
}

// each runs fn as this rank's part of a test, then agrees with the other
// ranks on whether any failed. It skips, on every rank alike, when the world
// has fewer than minRanks ranks.
func each(t *testing.T, minRanks int, fn func(c comm.Comm) error) {
	t.Helper()
	c := world.Comm()
	if c.Size() < minRanks {
		t.Skipf("needs %d ranks, the world has %d", minRanks, c.Size())
	}
	err := fn(c)
	failed := []float64{0}
	if err != nil {
		failed[0] = 1
	}
	if aerr := c.Allreduce(comm.Max, failed, failed); aerr != nil {
		t.Fatalf("rank %d: agreeing on the outcome: %v (own outcome: %v)", c.Rank(), aerr, err)
	}
	if err != nil {
		t.Fatalf("rank %d: %v", c.Rank(), err)
	}
	if failed[0] != 0 {
		t.Fatalf("rank %d: another rank failed", c.Rank())
	}
}

func check(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// neighbours are the ranks to the left and right on a ring.
func neighbours(c comm.Comm) (left, right int) {
	n := c.Size()
	return (c.Rank() + n - 1) % n, (c.Rank() + 1) % n
}

func TestWorld(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		if n, src := LauncherSize(); n > 0 && n != c.Size() {
			return fmt.Errorf("size %d but %s", c.Size(), src)
		}
		if c.Rank() < 0 || c.Rank() >= c.Size() {
			return fmt.Errorf("rank %d outside 0..%d", c.Rank(), c.Size()-1)
		}
		all, err := c.Gatherv([]byte{byte(c.Rank())}, 0)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			for r, b := range all {
				if !slices.Equal(b, []byte{byte(r)}) {
					return fmt.Errorf("rank %d sent %v", r, b)
				}
			}
		}
		v := LibraryVersion()
		return check(strings.Contains(v, "MPI") && !strings.Contains(v, "\n"), "LibraryVersion() = %q", v)
	})
}

// Every MPI rank is a process of its own.
func TestRanksHere(t *testing.T) {
	if n := comm.RanksHere(world.Comm()); n != 1 {
		t.Fatalf("comm.RanksHere = %d, want 1", n)
	}
}

// Init leaves the scheduler a P to spare while the rank waits in MPI,
// unless GOMAXPROCS was chosen.
func TestSpareP(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set")
	}
	if n := runtime.GOMAXPROCS(0); n < 2 {
		t.Fatalf("GOMAXPROCS is %d after Init, want at least 2", n)
	}
}

func TestInitTwice(t *testing.T) {
	w, err := Init()
	if w != nil || err == nil || err.Error() != "mpi: Init called twice: MPI can be initialised once per process" {
		t.Fatalf("second Init: got (%v, %v)", w, err)
	}
}

// A Go nil dereference is still a recoverable panic after MPI_Init: the
// signal handlers the MPI stack installs must not have replaced Go's.
func TestGoPanicsSurviveMPI(t *testing.T) {
	recovered := func() (r any) {
		defer func() { r = recover() }()
		var p *int
		return *p
	}()
	if err, ok := recovered.(runtime.Error); !ok || !strings.Contains(err.Error(), "nil pointer") {
		t.Fatalf("recovered %v, want a nil pointer runtime error", recovered)
	}
}

// Many rounds of a ring exchange both ways with reused buffers.
func TestRing(t *testing.T) {
	each(t, 1, func(c comm.Comm) error { return commtest.Ring(c, 100, 33) })
}

// A rank sends to itself, receive first or send first, small and large.
func TestSelfSend(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		return commtest.SelfSend(c, []int{0, 1, 5, smallest - 1, smallest, 1 << 18})
	})
}

// Receives posted in the reverse order of the sends still match on tag,
// whether they are posted before the messages arrive or after.
func TestTagsMatchOutOfOrder(t *testing.T) {
	each(t, 1, commtest.TagsMatchOutOfOrder)
}

// Messages with the same source and tag arrive in the order they were sent,
// small (eager) and large (rendezvous) ones alike.
func TestFIFOSameTag(t *testing.T) {
	each(t, 1, func(c comm.Comm) error { return commtest.FIFOSameTag(c, []int{3, smallest, 1 << 16}) })
}

// A send buffer may be reused as soon as its Isend has completed: the
// receiver still gets what the buffer held when it was sent.
func TestSendBufferReuse(t *testing.T) {
	each(t, 1, func(c comm.Comm) error { return commtest.SendBufferReuse(c, []int{16, 1 << 17}) })
}

// Done is false before the message is sent and becomes true without
// Waitall; Waitall then releases the request and reports its outcome, also
// when called again.
func TestDone(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		me := c.Rank()
		left, right := neighbours(c)
		in := make([]float64, 5)
		rq, err := c.Irecv(in, left, 11)
		if err != nil {
			return err
		}
		if rq.Done() {
			return errors.New("receive done before its message was sent")
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		sq, err := c.Isend(commtest.Fill(make([]float64, 5), me, 11, 0), right, 11)
		if err != nil {
			return err
		}
		deadline := time.Now().Add(30 * time.Second)
		for !rq.Done() {
			if time.Now().After(deadline) {
				return errors.New("receive not done after 30 s")
			}
			runtime.Gosched()
		}
		for range 2 {
			if err := c.Waitall([]comm.Request{rq, sq, rq}); err != nil {
				return err
			}
		}
		if !rq.Done() || !sq.Done() {
			return errors.New("requests not done after Waitall")
		}
		return commtest.Verify(me, in, left, 11, 0)
	})
}

// A message shorter than its receive is an error on the receiving rank,
// also for a receive that Done saw complete. (A longer one is MPI's
// MPI_ERR_TRUNCATE; it is not tested because Open MPI 4.1 sometimes hangs on
// it, and its self transport truncates silently.)
func TestShortMessage(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		me := c.Rank()
		left, right := neighbours(c)
		want := fmt.Sprintf("mpi: rank %d: Waitall: message from rank %d with tag 7 has 2 values but the receive expects 3", me, left)
		for _, poll := range []bool{false, true} {
			rq, err := c.Irecv(make([]float64, 3), left, 7)
			if err != nil {
				return err
			}
			sq, err := c.Isend(make([]float64, 2), right, 7)
			if err != nil {
				return err
			}
			if err := c.Waitall([]comm.Request{sq}); err != nil {
				return fmt.Errorf("the sender: %w", err)
			}
			for poll && !rq.Done() {
				runtime.Gosched()
			}
			for range 2 { // the outcome is kept
				if err := c.Waitall([]comm.Request{rq}); err == nil || err.Error() != want {
					return fmt.Errorf("poll %v: got %v, want %q", poll, err, want)
				}
				// ... also across more requests than one slab holds.
				if err := commtest.Ring(c, slabLen/4+1, 2); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

type foreignRequest struct{}

func (foreignRequest) Done() bool { return true }

func TestInvalidArguments(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		me, n := c.Rank(), c.Size()
		buf := make([]float64, 4)
		for _, tc := range []struct {
			call func() (comm.Request, error)
			want string
		}{
			{func() (comm.Request, error) { return c.Isend(buf, n, 3) }, fmt.Sprintf("Isend of 4 values to rank %d with tag 3: rank out of range 0..%d", n, n-1)},
			{func() (comm.Request, error) { return c.Irecv(buf, -1, 0) }, fmt.Sprintf("Irecv of 4 values from rank -1 with tag 0: rank out of range 0..%d", n-1)},
			{func() (comm.Request, error) { return c.Isend(buf, 0, -2) }, "Isend of 4 values to rank 0 with tag -2: tag must be >= 0"},
			{func() (comm.Request, error) { return c.Irecv(nil, 0, world.tagUB+1) },
				fmt.Sprintf("Irecv of 0 values from rank 0 with tag %d: tag above this MPI's largest, MPI_TAG_UB = %d", world.tagUB+1, world.tagUB)},
		} {
			q, err := tc.call()
			want := fmt.Sprintf("mpi: rank %d: %s", me, tc.want)
			if err == nil || err.Error() != want || q != nil {
				return fmt.Errorf("got (%v, %v), want (nil, %q)", q, err, want)
			}
		}
		if err := c.Waitall([]comm.Request{nil, nil}); err != nil {
			return fmt.Errorf("nil requests: %w", err)
		}
		err := c.Waitall([]comm.Request{nil, foreignRequest{}})
		want := fmt.Sprintf("mpi: rank %d: Waitall: request 1 is a mpi.foreignRequest, not one of comm/mpi", me)
		return check(err != nil && err.Error() == want, "foreign request: got %v, want %q", err, want)
	})
}

// Halo-sized messages (thousands of values) and many of them between Waitalls
// use many slots, which must be reused without mixing requests up.
func TestManyRequests(t *testing.T) {
	const k = 300
	each(t, 1, func(c comm.Comm) error {
		me := c.Rank()
		left, right := neighbours(c)
		for round := range 3 {
			var reqs []comm.Request
			in := make([][]float64, k)
			for i := range k {
				in[i] = make([]float64, 1+i%50)
				q, err := c.Irecv(in[i], left, 1000+i)
				if err != nil {
					return err
				}
				reqs = append(reqs, q)
			}
			for i := range k {
				q, err := c.Isend(commtest.Fill(make([]float64, 1+i%50), me, i%64, round), right, 1000+i)
				if err != nil {
					return err
				}
				reqs = append(reqs, q)
			}
			if err := c.Waitall(reqs); err != nil {
				return err
			}
			for i := range k {
				if err := commtest.Verify(me, in[i], left, i%64, round); err != nil {
					return err
				}
			}
		}
		mu.Lock()
		n := pending()
		mu.Unlock()
		return check(n == 0, "%d requests still pending", n)
	})
}

// Receive buffers that only the binding still points at survive garbage
// collections between the post and the wait (large ones are pinned, small
// ones kept for the copy out of C memory), get their messages, and are let
// go once Waitall has completed them. The test holds weak pointers only.
func TestReceiveBuffersSurviveGC(t *testing.T) {
	const k = 400
	// Small and large (pinned) messages alternate; 16 bytes and up, so
	// that no buffer is tiny-allocated together with others.
	length := func(i int) int { return 2 + i%7 + i%2*smallest }
	each(t, 1, func(c comm.Comm) error {
		me := c.Rank()
		left, right := neighbours(c)
		bufs := make([]weak.Pointer[float64], k)
		reqs := make([]comm.Request, 0, 2*k)
		for i := range k {
			buf := make([]float64, length(i))
			bufs[i] = weak.Make(&buf[0])
			q, err := c.Irecv(buf, left, i)
			if err != nil {
				return err
			}
			reqs = append(reqs, q)
		}
		churn := func() {
			for range 4 {
				junk := make([][]float64, 2000)
				for j := range junk {
					junk[j] = make([]float64, length(j))
					for x := range junk[j] {
						junk[j][x] = -7
					}
				}
				runtime.GC()
			}
		}
		alive := func() int {
			n := 0
			for _, b := range bufs {
				if b.Value() != nil {
					n++
				}
			}
			return n
		}
		churn()
		if n := alive(); n != k {
			return fmt.Errorf("%d of %d receive buffers collected while their Irecv was pending", k-n, k)
		}
		if err := c.Barrier(); err != nil { // the messages leave after the collections
			return err
		}
		for i := range k {
			q, err := c.Isend(commtest.Fill(make([]float64, length(i)), me, i%64, i), right, i)
			if err != nil {
				return err
			}
			reqs = append(reqs, q)
		}
		churn()
		if err := c.Waitall(reqs); err != nil {
			return err
		}
		for i, b := range bufs {
			if err := commtest.Verify(me, unsafe.Slice(b.Value(), length(i)), left, i%64, i); err != nil {
				return err
			}
		}
		runtime.GC()
		runtime.GC()
		return check(alive() == 0, "%d receive buffers still alive after Waitall and two collections: not let go", alive())
	})
}

// ---- collectives ----

// Allreduce gives the bits of the rank-order combine on every rank, with
// operands whose sum depends on the order.
func TestAllreduce(t *testing.T) {
	pattern := []float64{1e16, 1, -1e16, 1, 3, -1e16, 1e16, 0.5}
	contrib := func(rank, i int) float64 { return pattern[(rank+i)%len(pattern)] }
	const m = 8
	each(t, 1, func(c comm.Comm) error {
		n := c.Size()
		in := make([]float64, m)
		for i := range in {
			in[i] = contrib(c.Rank(), i)
		}
		for _, op := range []comm.Op{comm.Sum, comm.Max, comm.Min} {
			out := make([]float64, m)
			if err := c.Allreduce(op, in, out); err != nil {
				return err
			}
			for i := range m {
				want := contrib(0, i)
				for r := 1; r < n; r++ {
					switch v := contrib(r, i); op {
					case comm.Sum:
						want += v
					case comm.Max:
						want = math.Max(want, v)
					case comm.Min:
						want = math.Min(want, v)
					}
				}
				if math.Float64bits(out[i]) != math.Float64bits(want) {
					return fmt.Errorf("%v: element %d is %v, want %v", op, i, out[i], want)
				}
			}
		}
		return nil
	})
}

func TestAllreduceInPlace(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		n := float64(c.Size())
		x := []float64{float64(c.Rank()), 1}
		if err := c.Allreduce(comm.Sum, x, x); err != nil {
			return err
		}
		return check(x[0] == n*(n-1)/2 && x[1] == n, "got %v", x)
	})
}

// Max and Min return NaN where any rank's operand is NaN, as comm/local.
func TestAllreduceNaN(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		n := c.Size()
		for _, nanRank := range slices.Compact([]int{0, n / 2, n - 1}) {
			in := []float64{float64(c.Rank()), -float64(c.Rank())}
			if c.Rank() == nanRank {
				in[0], in[1] = math.NaN(), math.NaN()
			}
			for _, op := range []comm.Op{comm.Max, comm.Min, comm.Sum} {
				out := make([]float64, 2)
				if err := c.Allreduce(op, in, out); err != nil {
					return err
				}
				if !math.IsNaN(out[0]) || !math.IsNaN(out[1]) {
					return fmt.Errorf("NaN on rank %d: %v: got %v, want NaN", nanRank, op, out)
				}
			}
		}
		return nil
	})
}

// Ranks that disagree about a collective all get the same error, as with
// comm/local, instead of hanging.
func TestCollectiveMismatch(t *testing.T) {
	each(t, 2, func(c comm.Comm) error {
		for _, tc := range []struct {
			call func() error
			want string
		}{
			{func() error {
				m := 4 + min(c.Rank(), 1)
				return c.Allreduce(comm.Sum, make([]float64, m), make([]float64, m))
			}, "Allreduce: ranks disagree: rank 0 called Allreduce(sum, len 4), rank 1 called Allreduce(sum, len 5)"},
			{func() error {
				return c.Allreduce(comm.Max, make([]float64, 3), make([]float64, 3-min(c.Rank(), 1)))
			}, "Allreduce: rank 1 passed len(in) = 3 but len(out) = 2"},
			{func() error { return c.Allreduce(comm.Op(9), make([]float64, 1), make([]float64, 1)) }, "Allreduce: unknown op 9"},
			{func() error {
				if c.Rank() == 0 {
					return c.Barrier()
				}
				_, err := c.Gatherv(nil, 0)
				return err
			}, "Barrier: ranks disagree: rank 0 called Barrier, rank 1 called Gatherv(root 0)"},
			{func() error { return c.Bcast(make([]byte, 4+min(c.Rank(), 1)), 0) },
				"Bcast: ranks disagree: rank 0 called Bcast(len 4, root 0), rank 1 called Bcast(len 5, root 0)"},
			{func() error { return c.Bcast(make([]byte, 4), c.Size()) }, fmt.Sprintf("Bcast: invalid root %d (world size %d)", c.Size(), c.Size())},
			{func() error { _, err := c.Gatherv(nil, -1); return err }, fmt.Sprintf("Gatherv: invalid root -1 (world size %d)", c.Size())},
		} {
			err := tc.call()
			if c.Rank() != 0 && strings.HasPrefix(tc.want, "Barrier") {
				tc.want = "Gatherv" + strings.TrimPrefix(tc.want, "Barrier")
			}
			want := fmt.Sprintf("mpi: rank %d: %s", c.Rank(), tc.want)
			if err == nil || err.Error() != want {
				return fmt.Errorf("got %v, want %q", err, want)
			}
		}
		return nil
	})
}

// Bcast from every root, of nothing, a little and a lot.
func TestBcast(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		for root := range c.Size() {
			for _, m := range []int{0, 8, 1 << 20} {
				buf := make([]byte, m)
				if c.Rank() == root {
					for i := range buf {
						buf[i] = byte(root*7 + i)
					}
				}
				if err := c.Bcast(buf, root); err != nil {
					return err
				}
				for i := range buf {
					if buf[i] != byte(root*7+i) {
						return fmt.Errorf("root %d, %d bytes: byte %d is %d", root, m, i, buf[i])
					}
				}
			}
		}
		return nil
	})
}

// No rank leaves a Barrier before a straggler has entered it.
func TestBarrier(t *testing.T) {
	const nap = 60 * time.Millisecond
	each(t, 2, func(c comm.Comm) error {
		for straggler := range c.Size() {
			if err := c.Barrier(); err != nil {
				return err
			}
			t0 := time.Now()
			if c.Rank() == straggler {
				time.Sleep(nap)
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if el := time.Since(t0); el < nap/2 {
				return fmt.Errorf("left the barrier after %v while rank %d slept %v", el, straggler, nap)
			}
		}
		return nil
	})
}

// Gatherv to every root, with pieces of varied lengths, empty ones included.
func TestGatherv(t *testing.T) {
	piece := func(rank, root int) []byte {
		b := make([]byte, (rank+root)%4*3) // some ranks send nothing
		for i := range b {
			b[i] = byte(10*rank + i)
		}
		return b
	}
	each(t, 1, func(c comm.Comm) error {
		for root := range c.Size() {
			send := piece(c.Rank(), root)
			all, err := c.Gatherv(send, root)
			if err != nil {
				return err
			}
			clear(send) // the gathered copies must not change
			if c.Rank() != root {
				if all != nil {
					return fmt.Errorf("root %d: a non-root rank got %v", root, all)
				}
				continue
			}
			if len(all) != c.Size() {
				return fmt.Errorf("root %d: got %d pieces", root, len(all))
			}
			for r, b := range all {
				if want := piece(r, root); !slices.Equal(b, want) || b == nil {
					return fmt.Errorf("root %d: rank %d's piece is %v, want %v", root, r, b, want)
				}
			}
			if len(all) > 1 {
				_ = append(all[0], 99) // must not write into rank 1's piece
				if !slices.Equal(all[1], piece(1, root)) {
					return fmt.Errorf("root %d: appending to rank 0's piece changed rank 1's", root)
				}
			}
		}
		return nil
	})
}

// ---- a halo exchange over MPI ----

// Every cell holds its global index (C order); after an exchange every ghost
// holds the global index of the neighbour's cell it mirrors, across periodic
// edges too, and ghosts past a non-periodic edge (and corners, when only
// faces are exchanged) are untouched.
func TestHaloGhostsHoldGlobalIndices(t *testing.T) {
	each(t, 1, func(c comm.Comm) error {
		for _, shape := range [][]int{{13, 11}, {9, 7, 8}} {
			for _, periodic := range []bool{false, true} {
				for _, ghost := range []int{1, 2} {
					for _, opt := range []halo.Options{{}, {Corners: true}} {
						if err := checkHalo(c, shape, periodic, ghost, opt); err != nil {
							return fmt.Errorf("shape %v periodic %v ghost %d %+v: %w", shape, periodic, ghost, opt, err)
						}
					}
				}
			}
		}
		return nil
	})
}

func checkHalo(c comm.Comm, shape []int, periodic bool, ghost int, opt halo.Options) error {
	nd := len(shape)
	per := make([]bool, nd)
	for a := range per {
		per[a] = periodic
	}
	g, err := decomp.New(shape, c.Size(), nil, per)
	if err != nil {
		return err
	}
	box := g.Box(c.Rank())
	lay := decomp.NewLayout(box, ghost)
	global := func(gc []int) float64 {
		i := 0
		for a := range gc {
			i = i*shape[a] + gc[a]
		}
		return float64(i)
	}
	field := make([]float64, lay.Len())
	for i := range field {
		field[i] = math.NaN()
	}
	padded := decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
	for a := range nd {
		padded.Lo[a], padded.Hi[a] = -ghost, lay.N[a]+ghost
	}
	cells := func(f func(lc, gc []int, inside bool, outside int)) {
		lc := slices.Clone(padded.Lo)
		for {
			gc := make([]int, nd)
			outside := 0
			for a := range nd {
				gc[a] = lc[a] + box.Lo[a]
				if lc[a] < 0 || lc[a] >= lay.N[a] {
					outside++
				}
			}
			f(lc, gc, outside == 0, outside)
			a := nd - 1
			for ; a >= 0; a-- {
				if lc[a]++; lc[a] < padded.Hi[a] {
					break
				}
				lc[a] = padded.Lo[a]
			}
			if a < 0 {
				return
			}
		}
	}
	cells(func(lc, gc []int, inside bool, _ int) {
		if inside {
			field[lay.Index(lc...)] = global(gc)
		}
	})
	opt.Tag = 200
	p, err := halo.NewPlan(c, g, lay, opt)
	if err != nil {
		return err
	}
	for range 2 { // the second round reuses the buffers
		if err := p.Start(field); err != nil {
			return err
		}
		if err := p.Finish(field); err != nil {
			return err
		}
	}
	var bad error
	cells(func(lc, gc []int, inside bool, outside int) {
		if bad != nil || inside {
			return
		}
		exists := true
		for a := range nd {
			if gc[a] < 0 || gc[a] >= shape[a] {
				exists = exists && periodic
				gc[a] = (gc[a] + shape[a]) % shape[a]
			}
		}
		got := field[lay.Index(lc...)]
		if !exists || (outside > 1 && !opt.Corners) {
			if !math.IsNaN(got) {
				bad = fmt.Errorf("rank %d: ghost %v should be untouched, got %v", c.Rank(), lc, got)
			}
			return
		}
		if want := global(gc); got != want {
			bad = fmt.Errorf("rank %d: ghost %v = %v, want %v (cell %v of rank %d)", c.Rank(), lc, got, want, gc, g.Owner(gc))
		}
	})
	return bad
}
