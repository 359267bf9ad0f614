package local

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/commtest"
)

// rankErrs runs fn on n ranks and returns what each rank returned, so tests
// can assert per rank outside the rank goroutines (require must not be called
// on them: t.FailNow only stops the calling goroutine).
func rankErrs(t *testing.T, n int, fn func(c comm.Comm) error) (runErr error, errs []error) {
	t.Helper()
	errs = make([]error, n)
	runErr = Run(n, func(c comm.Comm) error {
		err := fn(c)
		errs[c.Rank()] = err
		return err
	})
	return runErr, errs
}

// check turns a failed condition on a rank into an error for Run to return.
func check(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func TestRunNeedsARank(t *testing.T) {
	err := Run(0, func(comm.Comm) error { return nil })
	require.EqualError(t, err, "local: need at least 1 rank, got 0")
	require.Panics(t, func() { NewWorld(-1) })
}

func TestRankAndSize(t *testing.T) {
	var seen [5]atomic.Int32
	require.NoError(t, Run(5, func(c comm.Comm) error {
		seen[c.Rank()].Add(1)
		if err := check(c.Size() == 5, "size %d", c.Size()); err != nil {
			return err
		}
		// Every rank runs in this process.
		return check(comm.RanksHere(c) == 5, "ranks here %d", comm.RanksHere(c))
	}))
	for r := range seen {
		require.EqualValues(t, 1, seen[r].Load(), "rank %d", r)
	}
}

// The point-to-point properties every transport must have (comm/commtest),
// on one to five ranks.
func TestSharedProperties(t *testing.T) {
	for _, p := range commtest.PointToPoint([]int{0, 1, 5, 1 << 12}) {
		for _, n := range []int{1, 2, 3, 5} {
			t.Run(fmt.Sprintf("%s/ranks=%d", p.Name, n), func(t *testing.T) {
				require.NoError(t, Run(n, p.Check))
			})
		}
	}
}

// A send waits for its receive (rendezvous, no eager copy) and the side that
// comes second does the copy, so its request is complete on return.
func TestPostingOrder(t *testing.T) {
	t.Run("send-before-recv", func(t *testing.T) {
		require.NoError(t, Run(2, func(c comm.Comm) error {
			if c.Rank() == 0 {
				q, err := c.Isend(commtest.Fill(make([]float64, 6), 0, 4, 0), 1, 4)
				if err != nil {
					return err
				}
				// The receiver posts only after the first Barrier.
				if err := check(!q.Done(), "send completed before its receive was posted"); err != nil {
					return err
				}
				if err := c.Barrier(); err != nil {
					return err
				}
				if err := c.Barrier(); err != nil { // receiver has posted
					return err
				}
				if err := check(q.Done(), "send not complete after its receive was posted"); err != nil {
					return err
				}
				return c.Waitall([]comm.Request{q})
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			in := make([]float64, 6)
			q, err := c.Irecv(in, 0, 4)
			if err != nil {
				return err
			}
			if err := check(q.Done(), "receive of a queued send not complete on return"); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if err := c.Waitall([]comm.Request{q}); err != nil {
				return err
			}
			return commtest.Verify(1, in, 0, 4, 0)
		}))
	})
	t.Run("recv-before-send", func(t *testing.T) {
		require.NoError(t, Run(2, func(c comm.Comm) error {
			if c.Rank() == 1 {
				in := make([]float64, 6)
				q, err := c.Irecv(in, 0, 4)
				if err != nil {
					return err
				}
				if err := check(!q.Done(), "receive completed with nothing sent"); err != nil {
					return err
				}
				if err := c.Barrier(); err != nil {
					return err
				}
				if err := c.Waitall([]comm.Request{q}); err != nil {
					return err
				}
				return commtest.Verify(1, in, 0, 4, 0)
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			q, err := c.Isend(commtest.Fill(make([]float64, 6), 0, 4, 0), 1, 4)
			if err != nil {
				return err
			}
			if err := check(q.Done(), "send to a posted receive not complete on return"); err != nil {
				return err
			}
			return c.Waitall([]comm.Request{q})
		}))
	})
}

// Once a send request reports completion the sender may scribble over its
// buffer; the receiver must still get the original values.
func TestSendBufferReuse(t *testing.T) {
	scribble := func(buf []float64) {
		for i := range buf {
			buf[i] = -1
		}
	}
	t.Run("send-first", func(t *testing.T) {
		require.NoError(t, Run(2, func(c comm.Comm) error {
			if c.Rank() == 0 {
				buf := commtest.Fill(make([]float64, 16), 0, 2, 0)
				q, err := c.Isend(buf, 1, 2)
				if err != nil {
					return err
				}
				if err := c.Barrier(); err != nil {
					return err
				}
				if q.Done() { // allowed to reuse buf now, before the receive is posted
					scribble(buf)
				}
				if err := c.Barrier(); err != nil {
					return err
				}
				if err := c.Waitall([]comm.Request{q}); err != nil {
					return err
				}
				scribble(buf)
				return c.Barrier()
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			in := make([]float64, 16)
			q, err := c.Irecv(in, 0, 2)
			if err != nil {
				return err
			}
			if err := c.Waitall([]comm.Request{q}); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			return commtest.Verify(1, in, 0, 2, 0)
		}))
	})
	t.Run("recv-first", func(t *testing.T) {
		require.NoError(t, Run(2, func(c comm.Comm) error {
			if c.Rank() == 0 {
				if err := c.Barrier(); err != nil {
					return err
				}
				buf := commtest.Fill(make([]float64, 16), 0, 2, 0)
				q, err := c.Isend(buf, 1, 2)
				if err != nil {
					return err
				}
				if err := c.Waitall([]comm.Request{q}); err != nil {
					return err
				}
				scribble(buf)
				return c.Barrier()
			}
			in := make([]float64, 16)
			q, err := c.Irecv(in, 0, 2)
			if err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if err := c.Waitall([]comm.Request{q}); err != nil {
				return err
			}
			return commtest.Verify(1, in, 0, 2, 0)
		}))
	})
}

func TestLengthMismatch(t *testing.T) {
	for _, tc := range []struct {
		name            string
		sendLen, recvLn int
		sendFirst       bool
	}{
		{"longer-send-first", 4, 3, true},
		{"longer-recv-first", 4, 3, false},
		{"shorter-send-first", 2, 3, true},
		{"shorter-recv-first", 2, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := rankErrs(t, 2, func(c comm.Comm) error {
				post := func() (comm.Request, error) {
					if c.Rank() == 0 {
						return c.Isend(make([]float64, tc.sendLen), 1, 7)
					}
					return c.Irecv(make([]float64, tc.recvLn), 0, 7)
				}
				early := c.Rank() == 0 == tc.sendFirst
				var q comm.Request
				var err error
				if early {
					if q, err = post(); err != nil {
						return err
					}
				}
				if err := c.Barrier(); err != nil {
					return err
				}
				if !early {
					if q, err = post(); err != nil {
						return err
					}
				}
				return c.Waitall([]comm.Request{q})
			})
			want := fmt.Sprintf("local: message from rank 0 to rank 1 with tag 7: send has %d values but receive expects %d", tc.sendLen, tc.recvLn)
			for r, err := range errs {
				require.EqualError(t, err, want, "rank %d", r)
			}
		})
	}
}

func TestInvalidArguments(t *testing.T) {
	require.NoError(t, Run(3, func(c comm.Comm) error {
		buf := make([]float64, 1)
		for _, tc := range []struct {
			call func() (comm.Request, error)
			want string
		}{
			{func() (comm.Request, error) { return c.Isend(buf, 3, 0) }, "Isend: invalid destination rank 3 (world size 3)"},
			{func() (comm.Request, error) { return c.Isend(buf, -1, 0) }, "Isend: invalid destination rank -1 (world size 3)"},
			{func() (comm.Request, error) { return c.Irecv(buf, 7, 0) }, "Irecv: invalid source rank 7 (world size 3)"},
			{func() (comm.Request, error) { return c.Isend(buf, 0, -2) }, "Isend: invalid tag -2 (must be >= 0)"},
			{func() (comm.Request, error) { return c.Irecv(buf, 0, -1) }, "Irecv: invalid tag -1 (must be >= 0)"},
		} {
			q, err := tc.call()
			want := fmt.Sprintf("local: rank %d: %s", c.Rank(), tc.want)
			if err == nil || err.Error() != want || q != nil {
				return fmt.Errorf("got (%v, %v), want (nil, %q)", q, err, want)
			}
		}
		// nil entries are skipped.
		return c.Waitall([]comm.Request{nil, nil})
	}))
}

// Many rounds of a periodic halo-like exchange with reused buffers: a
// request completing too early shows up as a wrong payload or a data race.
func TestHaloRounds(t *testing.T) {
	require.NoError(t, Run(4, func(c comm.Comm) error { return commtest.Ring(c, 200, 33) }))
}

// sumInOrder is the reference: operands combined in rank order 0..n-1.
func sumInOrder(vals []float64) float64 {
	s := vals[0]
	for _, v := range vals[1:] {
		s += v
	}
	return s
}

func TestAllreduce(t *testing.T) {
	const n = 5
	pattern := []float64{1e16, 1, -1e16, 1, 3, -1e16, 1e16, 0.5}
	contrib := func(rank, i int) float64 { return pattern[(rank+i)%len(pattern)] }
	const m = 8
	refSum, refMax, refMin := make([]float64, m), make([]float64, m), make([]float64, m)
	orderMatters := false
	for i := range m {
		col := make([]float64, n)
		for r := range n {
			col[r] = contrib(r, i)
		}
		refSum[i] = sumInOrder(col)
		refMax[i], refMin[i] = col[0], col[0]
		for _, v := range col[1:] {
			refMax[i], refMin[i] = math.Max(refMax[i], v), math.Min(refMin[i], v)
		}
		rev := make([]float64, n)
		for r := range n {
			rev[r] = col[n-1-r]
		}
		if sumInOrder(rev) != refSum[i] {
			orderMatters = true
		}
	}
	require.True(t, orderMatters, "test data must make the summation order matter")

	got := make([][3][]float64, n)
	require.NoError(t, Run(n, func(c comm.Comm) error {
		in := make([]float64, m)
		for i := range in {
			in[i] = contrib(c.Rank(), i)
		}
		for k, op := range []comm.Op{comm.Sum, comm.Max, comm.Min} {
			out := make([]float64, m)
			if err := c.Allreduce(op, in, out); err != nil {
				return err
			}
			got[c.Rank()][k] = out
		}
		return nil
	}))
	for r := range n {
		for i := range m {
			require.Equal(t, math.Float64bits(refSum[i]), math.Float64bits(got[r][0][i]), "sum rank %d elem %d", r, i)
			require.Equal(t, refMax[i], got[r][1][i], "max rank %d elem %d", r, i)
			require.Equal(t, refMin[i], got[r][2][i], "min rank %d elem %d", r, i)
		}
	}
}

func TestAllreduceInPlace(t *testing.T) {
	require.NoError(t, Run(3, func(c comm.Comm) error {
		x := []float64{float64(c.Rank()), 1}
		if err := c.Allreduce(comm.Sum, x, x); err != nil {
			return err
		}
		return check(x[0] == 3 && x[1] == 3, "rank %d: got %v, want [3 3]", c.Rank(), x)
	}))
}

func TestAllreduceNaN(t *testing.T) {
	const n = 4
	for _, nanRank := range []int{0, 2, n - 1} {
		t.Run(fmt.Sprintf("nanRank=%d", nanRank), func(t *testing.T) {
			require.NoError(t, Run(n, func(c comm.Comm) error {
				in := []float64{float64(c.Rank()), -float64(c.Rank())}
				if c.Rank() == nanRank {
					in[0] = math.NaN()
					in[1] = math.NaN()
				}
				for _, op := range []comm.Op{comm.Max, comm.Min, comm.Sum} {
					out := make([]float64, 2)
					if err := c.Allreduce(op, in, out); err != nil {
						return err
					}
					if !math.IsNaN(out[0]) || !math.IsNaN(out[1]) {
						return fmt.Errorf("rank %d: %v: got %v, want NaN", c.Rank(), op, out)
					}
				}
				return nil
			}))
		})
	}
}

func TestAllreduceLengthMismatch(t *testing.T) {
	_, errs := rankErrs(t, 3, func(c comm.Comm) error {
		m := 4
		if c.Rank() == 1 {
			m = 5
		}
		return c.Allreduce(comm.Sum, make([]float64, m), make([]float64, m))
	})
	for r, err := range errs {
		require.ErrorContains(t, err, "ranks disagree: rank 0 called Allreduce(sum, len 4), rank 1 called Allreduce(sum, len 5)", "rank %d", r)
	}
	_, errs = rankErrs(t, 2, func(c comm.Comm) error {
		return c.Allreduce(comm.Max, make([]float64, 3), make([]float64, 3-c.Rank()))
	})
	for r, err := range errs {
		require.ErrorContains(t, err, "rank 1 passed len(in) = 3 but len(out) = 2", "rank %d", r)
	}
}

func TestCollectiveMismatch(t *testing.T) {
	_, errs := rankErrs(t, 2, func(c comm.Comm) error {
		if c.Rank() == 0 {
			return c.Barrier()
		}
		_, err := c.Gatherv(nil, 0)
		return err
	})
	for r, err := range errs {
		require.ErrorContains(t, err, "ranks disagree: rank 0 called Barrier, rank 1 called Gatherv(root 0)", "rank %d", r)
	}
}

func TestBcast(t *testing.T) {
	const n, root = 4, 2
	require.NoError(t, Run(n, func(c comm.Comm) error {
		buf := []byte("........")
		if c.Rank() == root {
			copy(buf, "payload!")
		}
		if err := c.Bcast(buf, root); err != nil {
			return err
		}
		if err := check(string(buf) == "payload!", "rank %d got %q", c.Rank(), buf); err != nil {
			return err
		}
		// Root may reuse its buffer at once; the others still got the original.
		if c.Rank() == root {
			copy(buf, "XXXXXXXX")
		}
		return c.Barrier()
	}))
	_, errs := rankErrs(t, 3, func(c comm.Comm) error {
		return c.Bcast(make([]byte, 4+c.Rank()%2), 0)
	})
	for r, err := range errs {
		require.ErrorContains(t, err, "ranks disagree: rank 0 called Bcast(len 4, root 0), rank 1 called Bcast(len 5, root 0)", "rank %d", r)
	}
}

func TestBarrier(t *testing.T) {
	const n, rounds = 5, 20
	var arrived atomic.Int64
	require.NoError(t, Run(n, func(c comm.Comm) error {
		for round := range rounds {
			if c.Rank() == (round % n) {
				time.Sleep(time.Millisecond) // be the straggler
			}
			arrived.Add(1)
			if err := c.Barrier(); err != nil {
				return err
			}
			if got, want := arrived.Load(), int64((round+1)*n); got < want {
				return fmt.Errorf("rank %d passed barrier %d with %d arrivals, want >= %d", c.Rank(), round, got, want)
			}
		}
		return nil
	}))
}

func TestGatherv(t *testing.T) {
	const n, root = 4, 1
	var gathered [][]byte
	require.NoError(t, Run(n, func(c comm.Comm) error {
		send := make([]byte, c.Rank()) // rank 0 sends nothing
		for i := range send {
			send[i] = byte(10*c.Rank() + i)
		}
		all, err := c.Gatherv(send, root)
		if err != nil {
			return err
		}
		if c.Rank() == root {
			gathered = all
		} else if all != nil {
			return fmt.Errorf("rank %d: got %v, want nil", c.Rank(), all)
		}
		clear(send) // the gathered copies must not change
		return c.Barrier()
	}))
	require.Len(t, gathered, n)
	for r := range n {
		want := make([]byte, r)
		for i := range want {
			want[i] = byte(10*r + i)
		}
		require.Equal(t, want, gathered[r], "rank %d", r)
	}
}

// A failing rank aborts the world: ranks blocked in Waitall on a message that
// is never sent, in Barrier and in Allreduce return ErrAborted promptly, and
// Run returns the real error although lower ranks failed with ErrAborted.
func TestAbort(t *testing.T) {
	const n = 4
	errBoom := errors.New("boom")
	start := time.Now()
	runErr, errs := rankErrs(t, n, func(c comm.Comm) error {
		switch c.Rank() {
		case 0:
			q, err := c.Irecv(make([]float64, 1), 1, 99)
			if err != nil {
				return err
			}
			return c.Waitall([]comm.Request{q})
		case 1:
			return c.Barrier()
		case 2:
			x := []float64{1}
			return c.Allreduce(comm.Sum, x, x)
		default:
			time.Sleep(20 * time.Millisecond) // let the others block first
			return fmt.Errorf("rank 3 gave up: %w", errBoom)
		}
	})
	require.Less(t, time.Since(start), time.Second)
	require.ErrorIs(t, runErr, errBoom)
	require.Equal(t, errs[n-1], runErr)
	for r := range n - 1 {
		require.ErrorIs(t, errs[r], comm.ErrAborted, "rank %d", r)
		require.ErrorContains(t, errs[r], "rank 3 failed: rank 3 gave up: boom", "rank %d", r)
	}
}

func TestAbortedWorldRefusesNewWork(t *testing.T) {
	w := NewWorld(2)
	w.Abort(errors.New("stop"))
	c := w.Comm(0)
	_, err := c.Isend(make([]float64, 1), 1, 0)
	require.ErrorIs(t, err, comm.ErrAborted)
	_, err = c.Irecv(make([]float64, 1), 1, 0)
	require.ErrorIs(t, err, comm.ErrAborted)
	require.ErrorIs(t, c.Barrier(), comm.ErrAborted)
	_, err = c.Gatherv(nil, 0)
	require.ErrorIs(t, err, comm.ErrAborted)
	require.ErrorContains(t, c.Bcast(nil, 0), "stop")
	require.Panics(t, func() { w.Comm(2) })
}

func TestAbortWakesWaiters(t *testing.T) {
	w := NewWorld(3)
	errs := make(chan error, 2)
	go func() {
		q, err := w.Comm(0).Irecv(make([]float64, 1), 2, 0)
		if err == nil {
			err = w.Comm(0).Waitall([]comm.Request{q})
		}
		errs <- err
	}()
	go func() { errs <- w.Comm(1).Barrier() }()
	time.Sleep(10 * time.Millisecond)
	w.Abort(nil)
	for range 2 {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, comm.ErrAborted)
		case <-time.After(time.Second):
			t.Fatal("waiter not woken by Abort")
		}
	}
}

func TestPanicBecomesError(t *testing.T) {
	err := Run(3, func(c comm.Comm) error {
		if c.Rank() == 2 {
			panic("kaboom")
		}
		return c.Barrier()
	})
	require.ErrorContains(t, err, "local: rank 2 panicked: kaboom")
	require.NotErrorIs(t, err, comm.ErrAborted)
}

func TestGoexitBecomesError(t *testing.T) {
	err := Run(2, func(c comm.Comm) error {
		if c.Rank() == 1 {
			runtime.Goexit()
		}
		return c.Barrier()
	})
	require.ErrorContains(t, err, "local: rank 1 exited without returning")
}

// A rank that returns while another waits for it is a deadlock; the waiter
// gets an error naming the missing rank instead of hanging.
func TestReturnedPeerIsAnError(t *testing.T) {
	t.Run("collective", func(t *testing.T) {
		err := Run(3, func(c comm.Comm) error {
			if c.Rank() == 0 {
				return nil
			}
			return c.Barrier()
		})
		require.ErrorContains(t, err, "Barrier can never complete: rank 0 has returned without entering it")
	})
	t.Run("waitall", func(t *testing.T) {
		err := Run(2, func(c comm.Comm) error {
			if c.Rank() == 0 {
				return nil
			}
			q, err := c.Irecv(make([]float64, 1), 0, 5)
			if err != nil {
				return err
			}
			return c.Waitall([]comm.Request{q})
		})
		require.EqualError(t, err, "local: rank 1: Waitall: receive from rank 0 with tag 5 can never complete: rank 0 has returned")
	})
	t.Run("matched-before-return", func(t *testing.T) {
		// A send matched before its sender returned is fine.
		require.NoError(t, Run(2, func(c comm.Comm) error {
			if c.Rank() == 0 {
				q, err := c.Isend([]float64{42}, 1, 5)
				if err != nil {
					return err
				}
				return c.Waitall([]comm.Request{q})
			}
			in := make([]float64, 1)
			q, err := c.Irecv(in, 0, 5)
			if err != nil {
				return err
			}
			if err := c.Waitall([]comm.Request{q}); err != nil {
				return err
			}
			return check(in[0] == 42, "got %v", in[0])
		}))
	})
}

// Run leaves no goroutine behind, also after an abort with blocked ranks.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 10 {
		_ = Run(8, func(c comm.Comm) error {
			if c.Rank() == 7 {
				return errors.New("fail")
			}
			q, err := c.Irecv(make([]float64, 1), 7, 0)
			if err != nil {
				return err
			}
			return c.Waitall([]comm.Request{q})
		})
	}
	// Rank goroutines may still be unwinding after their deferred Done.
	// (Not require.Eventually: it runs the condition on a goroutine of its own.)
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); after > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		after = runtime.NumGoroutine()
	}
	require.LessOrEqual(t, after, before, "goroutines before and after Run")
}

func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{8, 8 << 20} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			n := size / 8
			b.SetBytes(int64(2 * size)) // one round trip moves two messages
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			err := Run(2, func(c comm.Comm) error {
				me, peer := c.Rank(), 1-c.Rank()
				out, in := make([]float64, n), make([]float64, n)
				for range b.N {
					if me == 0 {
						sq, err := c.Isend(out, peer, 0)
						if err != nil {
							return err
						}
						rq, err := c.Irecv(in, peer, 0)
						if err != nil {
							return err
						}
						if err := c.Waitall([]comm.Request{sq, rq}); err != nil {
							return err
						}
					} else {
						rq, err := c.Irecv(in, peer, 0)
						if err != nil {
							return err
						}
						if err := c.Waitall([]comm.Request{rq}); err != nil {
							return err
						}
						sq, err := c.Isend(out, peer, 0)
						if err != nil {
							return err
						}
						if err := c.Waitall([]comm.Request{sq}); err != nil {
							return err
						}
					}
				}
				return nil
			})
			elapsed := time.Since(start)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(elapsed.Seconds()*1e6/float64(b.N)/2, "us/oneway")
		})
	}
}
