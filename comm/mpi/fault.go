//go:build mpi && cgo

package mpi

// #include "shim.h"
import "C"

import (
	"maps"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"heat/comm"
)

// A wait that gives up ends the job's communication (comm.TimeoutError):
// the rank tells every other rank (a notice of a few values with the tag
// comm.TagFault, sent once and never waited for), and every rank that is
// itself waiting sees the notice at its next pause, gives up too and
// answers with a notice of its own. For a grace each collects the others'
// notices; the lowest rank that answered reports the fault and says so
// (a second notice), so that one that answers late does not report too.

// SetTimeout bounds every wait from now on, and the one in progress, to d
// (comm.Deadliner); 0 waits for ever, as MPI does. Safe from any goroutine.
func (c *rankComm) SetTimeout(d time.Duration) { atomic.StoreInt64(timeoutNS(), int64(max(d, 0))) }

// timeoutNS is the timeout the shim's waits load.
func timeoutNS() *int64 { return (*int64)(unsafe.Pointer(&C.heat_mpi_timeout_ns)) }

// SetStep gives the roll call the caller's step counter (comm.Deadliner).
func (c *rankComm) SetStep(step func() int) { c.w.step = step }

// Fault is the roll call's outcome once a wait gave up, or nil.
func (c *rankComm) Fault() *comm.TimeoutError { return c.w.fault }

func (w *World) stepNow() int {
	if w.step == nil {
		return -1
	}
	return w.step()
}

// ops are the operations a notice names, by index.
var ops = []string{"Waitall", "Allreduce", "Bcast", "Barrier", "Gatherv"}

// A notice is float64 values: kind, step, op (index in ops), seconds
// waited, 1 if the sender's own timeout ran out, the tag missing, the
// count of peers listed, then the peers (the first maxListed).
const (
	noticeWaiting   = 1 // the sender gave up waiting; what it waited for
	noticeReporting = 2 // the sender reports the fault for the job
	noticeHead      = 7
	maxListed       = 64
)

// grace is how long a roll call collects answers, for a timeout: long
// enough for a rank that is computing a step to come to its next wait.
func grace(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return time.Second
	}
	return min(max(timeout/20, 100*time.Millisecond), 10*time.Second)
}

// gaveUp is the error of a collective whose wait gave up (rc from the
// shim), nil for any other outcome. The collective stays in progress in
// MPI, so the buffers it was given (bufs, Go pointers or nil) stay pinned
// for good.
func (w *World) gaveUp(op string, rc C.int, bufs ...any) error {
	if rc != C.HEAT_MPI_TIMED_OUT && rc != C.HEAT_MPI_NOTICE {
		return nil
	}
	for _, b := range bufs {
		if b == nil || b == unsafe.Pointer(nil) {
			continue
		}
		p := new(runtime.Pinner)
		p.Pin(b)
		w.kept = append(w.kept, p)
	}
	return w.rollCall(comm.Wait{Op: op, Tag: -1, Waited: w.lastWait(), TimedOut: rc == C.HEAT_MPI_TIMED_OUT, Step: w.stepNow()})
}

// gaveUpWaiting is the error of a Waitall that gave up (rc from the
// shim), done telling which of w.wreqs had completed: the peers of those
// that had not are the ranks it waited for. Nothing is released: the
// pending requests keep their slots and pinned buffers.
func (w *World) gaveUpWaiting(rc C.int, done []C.int) error {
	seen := map[int]bool{}
	tag := -1
	for i, q := range w.wreqs {
		if q.state&stDone != 0 || done[i] != 0 || q.slot < 0 {
			continue
		}
		m := w.msgs[q.slot]
		seen[int(m.peer)] = true
		if tag < 0 {
			tag = int(m.tag)
		}
	}
	peers := slices.Sorted(maps.Keys(seen))
	return w.rollCall(comm.Wait{Op: "Waitall", Peers: peers, Tag: tag, Waited: w.lastWait(), TimedOut: rc == C.HEAT_MPI_TIMED_OUT, Step: w.stepNow()})
}

func (w *World) lastWait() time.Duration { return time.Duration(C.heat_mpi_last_waited_ns) }

// stillPending notes that Done found q pending, and gives up (true, after
// the roll call) once q has been found pending, with no other request
// polled between, for longer than the timeout: a loop that polls one
// request with Done between naps (multigrid waits so for its coarse
// correction) is held to the timeout as Waitall is.
func (w *World) stillPending(q *request) bool {
	now := time.Now()
	if w.polled != q {
		w.polled, w.polledSince = q, now
		return false
	}
	limit := time.Duration(atomic.LoadInt64(timeoutNS()))
	if waited := now.Sub(w.polledSince); limit > 0 && waited >= limit {
		m := w.msgs[q.slot]
		w.rollCall(comm.Wait{Op: "Waitall", Peers: []int{int(m.peer)}, Tag: int(m.tag), Waited: waited, TimedOut: true, Step: w.stepNow()})
		return true
	}
	return false
}

// rollCall ends this rank's communication with mine, what it was waiting
// for: it tells every other rank, collects their answers for the grace,
// and returns (and keeps, for every later operation) the outcome.
func (w *World) rollCall(mine comm.Wait) *comm.TimeoutError {
	if w.fault != nil {
		return w.fault
	}
	mine.Rank = w.rank
	timeout := time.Duration(atomic.LoadInt64(timeoutNS()))
	e := &comm.TimeoutError{Wait: mine, Size: w.size, Timeout: timeout, Reporter: -1}
	w.fault = e
	w.notify(noticeWaiting, mine)
	heard := map[int]comm.Wait{}
	reporter := -1
	take := func() bool {
		src, kind, wt, ok := w.takeNotice()
		switch {
		case !ok:
			return false
		case kind == noticeWaiting:
			heard[src] = wt
		case kind == noticeReporting && reporter < 0:
			reporter = src
		}
		return true
	}
	end := time.Now().Add(grace(timeout))
	for len(heard) < w.size-1 && time.Now().Before(end) {
		if !take() {
			time.Sleep(time.Millisecond)
		}
	}
	for take() {
	}
	if reporter < 0 {
		reporter = w.rank
		for r := range heard {
			reporter = min(reporter, r)
		}
		if reporter == w.rank {
			w.notify(noticeReporting, mine)
		}
	}
	e.Reporter = reporter
	for _, r := range slices.Sorted(maps.Keys(heard)) {
		e.Others = append(e.Others, heard[r])
	}
	for r := range w.size {
		if _, ok := heard[r]; !ok && r != w.rank {
			e.Silent = append(e.Silent, r)
		}
	}
	return e
}

// notify sends every other rank a notice of kind about wt. It cannot
// fail in a way worth more than the roll call's silence: an error here
// leaves the others to time out on their own.
func (w *World) notify(kind int, wt comm.Wait) {
	if C.heat_mpi_fault_tag < 0 || w.size == 1 {
		return
	}
	op := slices.Index(ops, wt.Op)
	timedOut := 0.0
	if wt.TimedOut {
		timedOut = 1
	}
	listed := wt.Peers[:min(len(wt.Peers), maxListed)]
	msg := []float64{float64(kind), float64(wt.Step), float64(op), wt.Waited.Seconds(), timedOut,
		float64(wt.Tag), float64(len(listed))}
	for _, p := range listed {
		msg = append(msg, float64(p))
	}
	C.heat_mpi_notify((*C.double)(&msg[0]), C.int(len(msg)), C.int(w.rank), C.int(w.size))
	w.settle()
}

// takeNotice receives one waiting notice: its sender, kind and wait; ok
// is false when none waits.
func (w *World) takeNotice() (src, kind int, wt comm.Wait, ok bool) {
	var buf [noticeHead + maxListed]float64
	var csrc C.int
	for {
		n := int(C.heat_mpi_notice((*C.double)(&buf[0]), C.int(len(buf)), &csrc))
		w.settle()
		if n == C.HEAT_MPI_DROPPED {
			continue // not one of ours: dropped
		}
		if n < noticeHead {
			return 0, 0, comm.Wait{}, false
		}
		v := buf[:n]
		listed := min(int(v[6]), n-noticeHead)
		wt = comm.Wait{Rank: int(csrc), Step: int(v[1]), Tag: int(v[5]), TimedOut: v[4] != 0,
			Waited: time.Duration(v[3] * float64(time.Second))}
		if op := int(v[2]); op >= 0 && op < len(ops) {
			wt.Op = ops[op]
		}
		for _, p := range v[noticeHead : noticeHead+listed] {
			wt.Peers = append(wt.Peers, int(p))
		}
		return int(csrc), int(v[0]), wt, true
	}
}

// forgive puts the world back as it was before a fault that a test made
// on purpose: with no notice looked for, it clears the fault and the
// timeout, lets finish complete what the fault left in progress (every
// rank calls it, with its own finish), meets the other ranks, drops the
// notices that came, and meets them again. Collective; for tests only.
func (w *World) forgive(finish func() error) error {
	tag := C.heat_mpi_fault_tag
	C.heat_mpi_fault_tag = -1
	w.fault, w.polled = nil, nil
	w.c.SetTimeout(0)
	err := finish()
	if berr := w.c.Barrier(); err == nil {
		err = berr
	}
	C.heat_mpi_fault_tag = tag
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		if _, _, _, ok := w.takeNotice(); !ok {
			time.Sleep(time.Millisecond)
		}
	}
	if berr := w.c.Barrier(); err == nil {
		err = berr
	}
	return err
}

// finishCollective waits for the collective a fault left in progress
// (MPI_Wait), for forgive.
func (w *World) finishCollective() error {
	if rc := C.heat_mpi_collective_finish(); rc != 0 {
		return w.errf("collective", "%s", errorText(rc))
	}
	return nil
}
