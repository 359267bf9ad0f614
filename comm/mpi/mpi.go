//go:build mpi && cgo

package mpi

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"heat/comm"
	"heat/internal/wait"
)

// Enabled reports whether this build talks to MPI; in this one it does.
const Enabled = true

// ThreadLevel is the thread level Init asks MPI for (MPI_THREAD_SERIALIZED):
// a Go process is multithreaded and a goroutine may move between OS
// threads, so single and funneled would not be true.
const ThreadLevel = "serialized"

// The main goroutine stays on the main OS thread, so that Init and Finalize,
// called from it, run on the thread MPI calls its main thread.
func init() { runtime.LockOSThread() }

// mu serialises Init, Finalize and LibraryVersion, the calls about the
// process rather than a rank's messages. A rank's Comm takes no lock: MPI
// is initialised with MPI_THREAD_SERIALIZED, and the Comm must be used by
// one goroutine at a time (heat's solver, halo and checkpoint code call it
// from the rank's own goroutine only). A lock per call cost a third of a
// small message's time here; the race detector flags concurrent use in
// tests.
var mu sync.Mutex

// initialised is set once Init has called MPI_Init_thread; guarded by mu.
var initialised bool

// theWorld is the World Init returned: MPI has one per process.
var theWorld *World

// World is MPI_COMM_WORLD of this process.
type World struct {
	rank, size int
	tagUB      int // the largest tag MPI accepts (MPI_TAG_UB)
	c          *rankComm

	// Used by the rank's goroutine only (see mu).
	finalized bool
	spin      *wait.Site         // the polls of every wait (heat_mpi_spin_ns)
	pins      []*runtime.Pinner  // by slot: the pinned buffer of each pending large request
	dst       [][]float64        // by slot: the Go buffer of each pending small receive
	arrive    []*C.double        // by slot: the C buffer that small receive arrives in
	msgs      []message          // by slot: what each pending request is
	failed    map[*request]error // the outcome of every request that failed
	freePins  []*runtime.Pinner  // unpinned Pinners kept for reuse
	wreqs     []*request         // the requests of the Waitall being assembled
	wspace    []C.int            // C memory for Waitall's slots, errors and counts (3 per request)
	hdr       []int64            // collective headers of every rank
	gathered  []float64          // Allreduce's operands of every rank
	// Small receives not posted yet (see deferRecv): the requests, their
	// Go buffers, and the C entries the next shim call posts.
	deferQ    []*request
	deferBufs [][]float64
	deferred  []C.heat_mpi_deferred_t
	slab      []request        // requests handed out one by one (see newRequest)
	calls     uint32           // blocking calls so far, for yield
	hdrIn     [wireWords]int64 // this rank's collective header

	// A wait that gave up (see fault.go): the roll call's outcome, which
	// every operation returns from then on; the buffers of a collective
	// left in progress, pinned for good; the caller's step counter.
	fault *comm.TimeoutError
	kept  []*runtime.Pinner
	step  func() int
	// The request Done last found pending, and since when (stillPending).
	polled      *request
	polledSince time.Time
}

// Init initialises MPI (MPI_Init_thread asking for MPI_THREAD_SERIALIZED)
// and returns this process's world. Call it once, from the main goroutine,
// and Finalize from there too. It fails when the library cannot give
// MPI_THREAD_SERIALIZED, and when the launcher started a different number of
// ranks than MPI reports, which means the binary was linked against another
// MPI than the one whose mpirun started it.
func Init() (*World, error) {
	mu.Lock()
	defer mu.Unlock()
	if initialised {
		return nil, errors.New("mpi: Init called twice: MPI can be initialised once per process")
	}
	if !onMainThread() {
		return nil, errors.New("mpi: Init must be called from the main goroutine (main or TestMain), " +
			"which this package keeps on the main OS thread where MPI expects to be initialised")
	}
	var provided, serialized, rank, size, tagUB C.int
	if rc := C.heat_mpi_init(&provided, &serialized, &rank, &size, &tagUB); rc != 0 {
		return nil, fmt.Errorf("mpi: MPI_Init_thread: %s", errorText(rc))
	}
	initialised = true
	if serialized == 0 {
		C.heat_mpi_finalize()
		return nil, fmt.Errorf("mpi: the MPI library gives only %s, but Go needs MPI_THREAD_SERIALIZED: "+
			"a goroutine's calls run on whichever OS thread it is on", C.GoString(C.heat_mpi_thread_level_name(provided)))
	}
	if n, src := LauncherSize(); n > 0 && n != int(size) {
		C.heat_mpi_finalize()
		return nil, fmt.Errorf("mpi: MPI says %s but the launcher started %d (%s): "+
			"this binary was linked against a different MPI than the mpirun that started it", ranks(int(size)), n, src)
	}
	w := &World{rank: int(rank), size: int(size), tagUB: int(tagUB), spin: wait.NewSite(C.HEAT_MPI_SPIN_NS, true)}
	w.c = &rankComm{w: w}
	if comm.TagFault <= w.tagUB {
		C.heat_mpi_fault_tag = C.int(comm.TagFault)
	}
	theWorld = w
	spareP()
	return w, nil
}

// spareP raises GOMAXPROCS from 1 to 2, unless the user chose it. A rank
// bound to one core (mpirun's default) gets GOMAXPROCS=1, and then, whenever a wait in MPI (a cgo call) outlasts a
// sysmon tick (20 µs), sysmon finds no idle P and takes the rank's P from
// under the call, wakes a thread to look for work on the rank's only core,
// and keeps ticking every 20 µs while it finds more to take. With an idle
// second P it leaves the call alone. Measured here on a 4096² halo exchange
// between two ranks, one core each: median 36 µs with one P, 24 with two
// (C: 19.5).
func spareP() {
	if runtime.GOMAXPROCS(0) == 1 && os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(2)
	}
}

// ranks is "1 rank" or "n ranks".
func ranks(n int) string {
	if n == 1 {
		return "1 rank"
	}
	return fmt.Sprintf("%d ranks", n)
}

// Comm is this rank's comm.Comm. Use it from one goroutine at a time, as
// MPI_THREAD_SERIALIZED requires: it takes no lock (see mu).
func (w *World) Comm() comm.Comm { return w.c }

// Finalize shuts MPI down (MPI_Finalize), from the main goroutine, once
// every request has been waited for. It refuses while requests are pending,
// since MPI_Finalize could then hang; Abort is the way out of that.
func (w *World) Finalize() error {
	if !onMainThread() {
		return fmt.Errorf("mpi: rank %d: Finalize must be called from the main goroutine, which called Init", w.rank)
	}
	mu.Lock()
	defer mu.Unlock()
	if w.finalized {
		return fmt.Errorf("mpi: rank %d: Finalize called twice", w.rank)
	}
	if n := pending(); n > 0 {
		return fmt.Errorf("mpi: rank %d: Finalize: %d requests still pending; complete them with Waitall first", w.rank, n)
	}
	w.finalized = true
	if rc := C.heat_mpi_finalize(); rc != 0 {
		return fmt.Errorf("mpi: rank %d: MPI_Finalize: %s", w.rank, errorText(rc))
	}
	return nil
}

// Abort ends every rank of the job with exit code code (MPI_Abort on
// MPI_COMM_WORLD). It does not take the lock, so it works while another
// goroutine is blocked in MPI; it does not return.
func (w *World) Abort(code int) {
	C.heat_mpi_abort(C.int(code))
	os.Exit(code) // MPI_Abort should not return; if it does, end this rank
}

// LibraryVersion is the first line of MPI_Get_library_version, such as
// "Open MPI v4.1.4, package: Debian OpenMPI, ...", for run reports. MPI
// allows it before Init and after Finalize.
func LibraryVersion() string {
	mu.Lock()
	defer mu.Unlock()
	buf := make([]C.char, C.heat_mpi_max_library_version())
	if C.heat_mpi_library_version(&buf[0], C.int(len(buf))) != 0 {
		return ""
	}
	first, _, _ := strings.Cut(C.GoString(&buf[0]), "\n")
	return strings.TrimSpace(first)
}

// pending is the number of requests not yet completed by Waitall; call it
// from the rank's goroutine.
func pending() int {
	n := int(C.heat_mpi_pending())
	theWorld.settle()
	return n
}

// waited follows every wait in C (Waitall, the collectives): it feeds
// the wait's length to the spin budget and sets the next wait's (shorter
// where the waits are long, none while package wait finds the cores
// busy), then settles the deferred receives.
func (w *World) waited() {
	w.spin.Learn(w.lastWait(), C.heat_mpi_last_napped != 0)
	C.heat_mpi_spin_ns = C.int64_t(w.spin.Budget())
	w.settle()
}

// yieldEvery is how many blocking calls (Waitall, collectives) pass
// between two yields.
const yieldEvery = 4096

// yield lets the Go scheduler reschedule the calling goroutine once every
// yieldEvery blocking calls. A goroutine that only alternates between Go
// code and cgo calls is never rescheduled, so every 10 ms sysmon takes it
// for a runaway: it retakes its P from under the cgo call, starts a thread
// to run it, and polls every 20 µs for the next millisecond. On a rank
// bound to one core (mpirun's default) each of those wakeups preempts the
// thread that polls MPI, and a ping-pong's mean latency doubles. A Gosched
// every few thousand calls costs far less.
func (w *World) yield() {
	if w.calls++; w.calls%yieldEvery == 0 {
		runtime.Gosched()
	}
}

// errorText is MPI_Error_string of code, with the code.
func errorText(code C.int) string {
	var buf [1024]C.char
	C.heat_mpi_error_string(code, &buf[0], C.int(len(buf)))
	return fmt.Sprintf("%s (MPI error %d)", C.GoString(&buf[0]), int(code))
}

// rankComm is the comm.Comm of a World.
type rankComm struct{ w *World }

func (c *rankComm) Rank() int { return c.w.rank }
func (c *rankComm) Size() int { return c.w.size }

// RanksHere is 1: every rank of MPI's world is a process of its own (see
// comm.RanksHere).
func (c *rankComm) RanksHere() int { return 1 }

// errf prefixes an error of operation op with the rank.
func (w *World) errf(op, format string, args ...any) error {
	return fmt.Errorf("mpi: rank %d: %s: %s", w.rank, op, fmt.Sprintf(format, args...))
}

// ---- point to point ----

// request is a pending Isend or Irecv, named on the C side by its slot
// until Waitall completes it. It is 8 bytes and holds no Go pointers: what
// a pending request is (peer, tag, length, buffer) lives in the World's
// tables by slot, and an outcome other than success in World.failed, so
// that a message leaves little memory behind (see newRequest).
type request struct {
	slot  int32  // the C slot while pending; -1 before a deferred receive is posted and once completed
	state uint32 // the st flags, and for a receive not posted yet its deferred entry + 1, << pendShift
}

// Flags of request.state.
const (
	stSend   = 1 << iota
	stSmall  // a small receive: its values arrive in C memory
	stFilled // a small receive's values are in the Go buffer
	stDone   // completed by Waitall (or at its post): the outcome is known
	stFailed // completed with the error World.failed holds
	stQueued // in the Waitall being assembled

	pendShift = 8
	maxPend   = 1<<(32-pendShift) - 1 // deferred receives at most between two shim calls
)

// message is what a pending request is, kept by slot.
type message struct {
	n, peer, tag int32
	send         bool
}

func (m message) String() string { return describe(m.send, int(m.n), int(m.peer), int(m.tag)) }

// describe names a send or receive in errors.
func describe(send bool, n, peer, tag int) string {
	if send {
		return fmt.Sprintf("Isend of %d values to rank %d with tag %d", n, peer, tag)
	}
	return fmt.Sprintf("Irecv of %d values from rank %d with tag %d", n, peer, tag)
}

// Done reports whether the request has completed (MPI_Test); a receive's
// buffer is filled once it has. It does not release the request: Waitall
// still must be called. It is also true once the rank's communication has
// failed (then Waitall returns the *comm.TimeoutError): when another rank
// gave up, or when Done has found this request pending for longer than the
// timeout (see stillPending).
func (q *request) Done() bool {
	if q.state&stDone != 0 {
		return true
	}
	w := theWorld
	if w.finalized {
		return false
	}
	if w.fault != nil {
		return true // Waitall returns the fault
	}
	rc := C.heat_mpi_test(q.cslot())
	w.settle()
	switch {
	case q.state&stDone != 0: // its posting failed
		return true
	case rc == 2: // another rank gave up waiting: so does this one
		m := w.msgs[q.slot]
		var waited time.Duration
		if w.polled == q {
			waited = time.Since(w.polledSince)
		}
		w.rollCall(comm.Wait{Op: "Waitall", Peers: []int{int(m.peer)}, Tag: int(m.tag), Waited: waited, Step: w.stepNow()})
		return true
	case rc != 1:
		return w.stillPending(q)
	}
	w.polled = nil
	w.fill(q, C.heat_mpi_last_err, int(C.heat_mpi_last_count))
	return true
}

// cslot is how the shim names q: its slot, or for a receive still
// deferred, -2 - its entry.
func (q *request) cslot() C.int {
	if pend := q.state >> pendShift; pend > 0 {
		return C.int(-1 - int64(pend))
	}
	return C.int(q.slot)
}

// err is the outcome of a request Waitall has completed: nil, or an MPI
// error, or a message whose length differs from its receive.
func (q *request) err() error {
	if q.state&stFailed == 0 {
		return nil
	}
	return theWorld.failed[q]
}

// fail completes q with err.
func (w *World) fail(q *request, err error) {
	if w.failed == nil {
		w.failed = make(map[*request]error)
	}
	w.failed[q] = err
	q.slot = -1
	q.state |= stDone | stFailed
}

// Isend starts sending buf to rank dest with tag (MPI_Isend of MPI_DOUBLE).
// buf must not change until Waitall has completed the request. A small buf
// (up to 128 values) is copied at once; a larger one stays pinned until then.
func (c *rankComm) Isend(buf []float64, dest, tag int) (comm.Request, error) {
	return c.w.post(true, buf, dest, tag)
}

// Irecv starts receiving exactly len(buf) values from rank src with tag
// (MPI_Irecv of MPI_DOUBLE); a shorter or longer message is an error in
// Waitall. A small receive (up to 128 values) arrives in C memory and is
// copied into buf when it completes; a larger buf stays pinned until then.
func (c *rankComm) Irecv(buf []float64, src, tag int) (comm.Request, error) {
	return c.w.post(false, buf, src, tag)
}

// post checks the arguments of a send or receive and starts it on buf: a
// small message through the slot's C buffer, a larger one from or into the
// pinned Go buffer.
func (w *World) post(send bool, buf []float64, peer, tag int) (comm.Request, error) {
	m := message{send: send, n: int32(len(buf)), peer: int32(peer), tag: int32(tag)}
	switch {
	case peer < 0 || peer >= w.size:
		return nil, w.errf(describe(send, len(buf), peer, tag), "rank out of range 0..%d", w.size-1)
	case tag < 0:
		return nil, w.errf(describe(send, len(buf), peer, tag), "tag must be >= 0")
	case tag > w.tagUB:
		return nil, w.errf(describe(send, len(buf), peer, tag), "tag above this MPI's largest, MPI_TAG_UB = %d", w.tagUB)
	case len(buf) > math.MaxInt32:
		return nil, w.errf(describe(send, len(buf), peer, tag), "more than %d values in one message", math.MaxInt32)
	case w.finalized:
		return nil, w.errf(m.String(), "MPI has been finalized")
	case w.fault != nil:
		return nil, w.fault
	}
	if !send && len(buf) <= C.HEAT_MPI_SMALL {
		return w.deferRecv(m, buf)
	}
	n, cpeer, ctag := C.int(len(buf)), C.int(peer), C.int(tag)
	var p *runtime.Pinner
	var slot C.int
	if send && len(buf) <= C.HEAT_MPI_SMALL {
		var first *C.double
		if len(buf) > 0 {
			first = (*C.double)(&buf[0])
		}
		slot = C.heat_mpi_isend_small(first, n, cpeer, ctag)
		w.settle()
		if slot >= 0 && C.heat_mpi_last_done != 0 {
			// Sent already: nothing left to wait for.
			if C.heat_mpi_last_err == 0 {
				return sent, nil
			}
			q := w.newRequest(-1, stSend)
			w.fail(q, w.errf("Waitall", "%s: %s", m, errorText(C.heat_mpi_last_err)))
			return q, nil
		}
	} else {
		if k := len(w.freePins); k > 0 {
			p = w.freePins[k-1]
			w.freePins = w.freePins[:k-1]
		} else {
			p = new(runtime.Pinner)
		}
		p.Pin(&buf[0])
		addr := C.uintptr_t(uintptr(unsafe.Pointer(&buf[0])))
		if send {
			slot = C.heat_mpi_isend(addr, n, cpeer, ctag)
		} else {
			slot = C.heat_mpi_irecv(addr, n, cpeer, ctag)
		}
		w.settle()
	}
	if slot < 0 {
		w.unpin(p)
		return nil, w.errf(m.String(), "%s", errorText(-slot))
	}
	state := uint32(0)
	if send {
		state = stSend
	}
	w.grow(slot)
	w.pins[slot], w.msgs[slot] = p, m
	return w.newRequest(int32(slot), state), nil
}

// sent is the request of every small send that completed without error
// when it was posted: done, with nothing to report, so it can be shared.
var sent = &request{slot: -1, state: stSend | stDone}

// slabLen is how many requests newRequest allocates at a time.
const slabLen = 1024

// newRequest returns a new request. Requests are cut from slabs of slabLen,
// so that a message costs no allocation of its own, and they are small,
// since each is fresh memory until a garbage collection frees its slab:
// with 36-byte requests a ping-pong straight after start ran 0.05 µs per
// message slower than on a heap used before (page faults, cold cache);
// with 8-byte ones it runs as fast. A request is never reused, so waiting
// for it again still returns its own outcome; one kept alive keeps its slab
// (8 KiB, nothing for the GC to scan) alive.
func (w *World) newRequest(slot int32, state uint32) *request {
	if len(w.slab) == cap(w.slab) {
		w.slab = make([]request, 0, slabLen)
	}
	w.slab = append(w.slab, request{slot: slot, state: state})
	return &w.slab[len(w.slab)-1]
}

// grow makes the per-slot tables long enough for slot.
func (w *World) grow(slot C.int) {
	for int(slot) >= len(w.pins) {
		w.pins = append(w.pins, nil)
		w.dst = append(w.dst, nil)
		w.arrive = append(w.arrive, nil)
		w.msgs = append(w.msgs, message{})
	}
}

// deferRecv queues a small receive for the shim to post at the start of
// its next call (a send, a wait, a test, a collective) instead of in a call
// of its own: a cgo call costs more than the rest of a small message here,
// and posting order, so MPI's matching, is kept. A small message that
// arrives before then waits in MPI's unexpected queue.
func (w *World) deferRecv(m message, buf []float64) (comm.Request, error) {
	if len(w.deferQ) == maxPend { // post those first
		C.heat_mpi_pending()
		w.settle()
	}
	k := len(w.deferQ)
	if k == len(w.deferred) {
		space := C.heat_mpi_deferred_space(C.int(max(16, 2*k)))
		if space == nil {
			return nil, w.errf(m.String(), "out of memory for %d deferred receives", k+1)
		}
		w.deferred = unsafe.Slice(space, max(16, 2*k))
	}
	w.deferred[k] = C.heat_mpi_deferred_t{count: C.int(m.n), src: C.int(m.peer), tag: C.int(m.tag)}
	C.heat_mpi_ndeferred = C.int(k + 1)
	q := w.newRequest(-1, stSmall|uint32(k+1)<<pendShift)
	w.deferQ = append(w.deferQ, q)
	w.deferBufs = append(w.deferBufs, buf)
	return q, nil
}

// settle takes the slots the shim gave the deferred receives it posted;
// one it could not post completes with the error. Call it after every shim
// call that posts, waits, tests or communicates.
func (w *World) settle() {
	if len(w.deferQ) == 0 {
		return
	}
	for i, q := range w.deferQ {
		e := &w.deferred[i]
		q.state &= 1<<pendShift - 1
		m := message{n: int32(e.count), peer: int32(e.src), tag: int32(e.tag)}
		if e.slot < 0 {
			w.fail(q, w.errf("Waitall", "%s: %s", m, errorText(-e.slot)))
			continue
		}
		q.slot = int32(e.slot)
		w.grow(e.slot)
		w.dst[e.slot], w.arrive[e.slot], w.msgs[e.slot] = w.deferBufs[i], e.buf, m
	}
	clear(w.deferQ)
	clear(w.deferBufs)
	w.deferQ, w.deferBufs = w.deferQ[:0], w.deferBufs[:0]
}

// unpin releases p's buffer and keeps p for reuse; p may be nil.
func (w *World) unpin(p *runtime.Pinner) {
	if p != nil {
		p.Unpin()
		w.freePins = append(w.freePins, p)
	}
}

// fill copies a completed small receive's values into its Go buffer, once
// and only when they are exactly what it expects. Call it before the slot
// is reused.
func (w *World) fill(q *request, code C.int, count int) {
	if q.state&(stSmall|stFilled) != stSmall || code != 0 || count != int(w.msgs[q.slot].n) {
		return
	}
	copy(w.dst[q.slot], unsafe.Slice((*float64)(unsafe.Pointer(w.arrive[q.slot])), count))
	q.state |= stFilled
}

// complete records the outcome of q, which Waitall completed with MPI
// error code and count values, and lets its slot go.
func (w *World) complete(q *request, code C.int, count int) {
	w.fill(q, code, count)
	s := q.slot
	m := w.msgs[s]
	w.unpin(w.pins[s])
	w.pins[s], w.dst[s], w.arrive[s] = nil, nil, nil
	switch {
	case code != 0:
		w.fail(q, w.errf("Waitall", "%s: %s", m, errorText(code)))
	case !m.send && int32(count) != m.n:
		w.fail(q, w.errf("Waitall", "message from rank %d with tag %d has %d values but the receive expects %d", m.peer, m.tag, count, m.n))
	default:
		q.slot = -1
		q.state |= stDone
	}
}

// Waitall waits for every non-nil request and returns the first error
// among them: an MPI error, or a message whose length differs from its
// receive. Waiting for a request again returns its outcome again. It
// tests the requests (MPI_Testall) without a pause for a millisecond, then
// sleeps between tests; once it has waited the timeout (SetTimeout) it
// gives up, and every operation returns a *comm.TimeoutError (fault.go).
func (c *rankComm) Waitall(reqs []comm.Request) error {
	w := c.w
	defer w.yield()
	if w.fault != nil {
		return w.fault
	}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	w.wreqs = w.wreqs[:0]
	for i, rq := range reqs {
		if rq == nil {
			continue
		}
		q, ok := rq.(*request)
		if !ok {
			keep(w.errf("Waitall", "request %d is a %T, not one of comm/mpi", i, rq))
			continue
		}
		if q == nil || q.state&stQueued != 0 {
			continue
		}
		if q.state&stDone != 0 {
			if err := q.err(); err != nil {
				keep(err)
			}
			continue
		}
		q.state |= stQueued
		w.wreqs = append(w.wreqs, q)
	}
	n := len(w.wreqs)
	if n == 0 {
		return first
	}
	defer clear(w.wreqs)
	for _, q := range w.wreqs {
		q.state &^= stQueued
	}
	if w.finalized {
		return w.errf("Waitall", "MPI has been finalized")
	}
	if 3*n > len(w.wspace) {
		space := C.heat_mpi_wait_space(C.int(n))
		if space == nil {
			return w.errf("Waitall", "out of memory for %d requests", n)
		}
		w.wspace = unsafe.Slice(space, 3*n)
	}
	slots, codes, counts := w.wspace[:n], w.wspace[n:2*n], w.wspace[2*n:3*n]
	var values int64
	for i, q := range w.wreqs {
		slots[i] = q.cslot()
		if q.slot >= 0 {
			values += int64(w.msgs[q.slot].n)
		}
	}
	rc := C.heat_mpi_waitall(C.int(n), C.int64_t(8*values))
	w.waited()
	if rc == C.HEAT_MPI_TIMED_OUT || rc == C.HEAT_MPI_NOTICE {
		return w.gaveUpWaiting(rc, codes)
	}
	for i, q := range w.wreqs {
		switch {
		case q.state&stDone != 0: // a deferred receive whose posting failed
		case counts[i] == C.HEAT_MPI_STILL_PENDING:
			keep(w.errf("Waitall", "%s: %s", w.msgs[q.slot], errorText(codes[i])))
			continue
		default:
			w.complete(q, codes[i], int(counts[i]))
		}
		if err := q.err(); err != nil {
			keep(err)
		}
	}
	return first
}

// ---- collectives ----

// Every collective starts with an allgather of a header naming the call,
// so that ranks that disagree about it (another collective, another length
// or root) all return the same error instead of hanging or mismatching
// buffers, as comm/local does. Barrier is that allgather alone. The
// collectives are MPI's nonblocking ones (MPI_Iallgather, MPI_Ibcast,
// MPI_Igatherv), waited for as Waitall waits, so that they too sleep
// through a long wait and give up after the timeout.

// header is one rank's description of a collective call: the call, and
// for Allreduce len(out). On the wire it is headerWords int64, then room
// for inlineValues float64 (their bits) of an Allreduce's operands: one
// that small needs no second allgather.
const (
	headerWords  = 5
	inlineValues = 8
	wireWords    = headerWords + inlineValues
)

type header struct {
	comm.Call
	out int
}

// meet gathers every rank's header of collective op into w.hdr and checks
// that all match mine on kind and on what same says; every rank checks the
// same headers, so all fail or none does.
func (w *World) meet(op string, mine header, inline []float64, same func(a, b header) bool) ([]header, error) {
	if w.finalized {
		return nil, w.errf(op, "MPI has been finalized")
	}
	if w.fault != nil {
		return nil, w.fault
	}
	const words = wireWords
	w.hdrIn = [words]int64{int64(mine.Kind), int64(mine.Op), int64(mine.Len), int64(mine.Root), int64(mine.out)}
	if len(inline) <= inlineValues {
		for i, v := range inline {
			w.hdrIn[headerWords+i] = int64(math.Float64bits(v))
		}
	}
	if len(w.hdr) < words*w.size {
		w.hdr = make([]int64, words*w.size)
	}
	rc := C.heat_mpi_allgather_i64((*C.int64_t)(&w.hdrIn[0]), words, (*C.int64_t)(&w.hdr[0]))
	w.waited()
	if err := w.gaveUp(op, rc); err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, w.errf(op, "MPI_Allgather of the call headers: %s", errorText(rc))
	}
	all := make([]header, w.size)
	for r := range all {
		h := w.hdr[words*r : words*r+headerWords]
		all[r] = header{comm.Call{Kind: comm.CallKind(h[0]), Op: comm.Op(h[1]), Len: int(h[2]), Root: int(h[3])}, int(h[4])}
	}
	for r, h := range all {
		if h.Kind != all[0].Kind || !same(all[0], h) {
			return nil, w.errf(op, "ranks disagree: rank 0 called %v, rank %d called %v", all[0], r, h)
		}
	}
	return all, nil
}

// checkRoot is the error of a root outside the world, the same on every rank.
func (w *World) checkRoot(op string, root int) error {
	if root < 0 || root >= w.size {
		return w.errf(op, "invalid root %d (world size %d)", root, w.size)
	}
	return nil
}

// Allreduce combines in over all ranks in rank order, (((in0 op in1) op
// in2) ...), giving every rank the same bits as comm/local would. MPI's own
// reductions promise no order, so it gathers every rank's operands (up to
// 8 with the call headers, more in a second allgather) and combines them
// here, in the same loop as comm/local: Max and Min return NaN where any
// operand is NaN. out may alias in.
func (c *rankComm) Allreduce(op comm.Op, in, out []float64) error {
	w := c.w
	defer w.yield()
	all, err := w.meet("Allreduce", header{comm.Call{Kind: comm.Allreduce, Op: op, Len: len(in)}, len(out)}, in,
		func(a, b header) bool { return a.Op == b.Op && a.Len == b.Len })
	if err != nil {
		return err
	}
	for r, h := range all {
		if h.out != h.Len {
			return w.errf("Allreduce", "rank %d passed len(in) = %d but len(out) = %d", r, h.Len, h.out)
		}
	}
	if op != comm.Sum && op != comm.Max && op != comm.Min {
		return w.errf("Allreduce", "unknown op %d", int(op))
	}
	n := len(in)
	if n == 0 {
		return nil
	}
	if n > math.MaxInt32 {
		return w.errf("Allreduce", "more than %d values", math.MaxInt32)
	}
	if len(w.gathered) < n*w.size {
		w.gathered = make([]float64, n*w.size)
	}
	g := w.gathered[:n*w.size]
	if n <= inlineValues {
		// Every rank's operands came with the headers.
		for r := range w.size {
			for i, bits := range w.hdr[wireWords*r+headerWords : wireWords*r+headerWords+n] {
				g[r*n+i] = math.Float64frombits(uint64(bits))
			}
		}
	} else {
		rc := C.heat_mpi_allgather_f64((*C.double)(&in[0]), C.int(n), (*C.double)(&g[0]))
		w.waited()
		if err := w.gaveUp("Allreduce", rc, &in[0]); err != nil {
			return err
		}
		if rc != 0 {
			return w.errf("Allreduce", "MPI_Allgather of %d values: %s", n, errorText(rc))
		}
	}
	out = out[:n]
	copy(out, g[:n])
	for r := 1; r < w.size; r++ {
		op.Combine(out, g[r*n:(r+1)*n])
	}
	return nil
}

// Bcast copies root's buf into buf on every other rank (MPI_Bcast of
// MPI_BYTE).
func (c *rankComm) Bcast(buf []byte, root int) error {
	w := c.w
	defer w.yield()
	_, err := w.meet("Bcast", header{Call: comm.Call{Kind: comm.Bcast, Root: root, Len: len(buf)}}, nil,
		func(a, b header) bool { return a.Root == b.Root && a.Len == b.Len })
	if err != nil {
		return err
	}
	if err := w.checkRoot("Bcast", root); err != nil {
		return err
	}
	if len(buf) == 0 {
		return nil
	}
	if len(buf) > math.MaxInt32 {
		return w.errf("Bcast", "more than %d bytes", math.MaxInt32)
	}
	rc := C.heat_mpi_bcast(unsafe.Pointer(&buf[0]), C.int(len(buf)), C.int(root))
	w.waited()
	if err := w.gaveUp("Bcast", rc, &buf[0]); err != nil {
		return err
	}
	if rc != 0 {
		return w.errf("Bcast", "MPI_Bcast of %d bytes from rank %d: %s", len(buf), root, errorText(rc))
	}
	return nil
}

// Barrier returns once every rank has entered it: it is the header
// allgather of every collective, which no rank can leave before all have
// contributed, and which also catches a rank that called another collective.
func (c *rankComm) Barrier() error {
	defer c.w.yield()
	_, err := c.w.meet("Barrier", header{Call: comm.Call{Kind: comm.Barrier}}, nil, func(a, b header) bool { return true })
	return err
}

// Gatherv returns, on root, every rank's send indexed by rank (MPI_Gatherv
// of MPI_BYTE, the lengths taken from the call headers); other ranks get
// nil. The pieces share one allocation, each capped at its own length.
func (c *rankComm) Gatherv(send []byte, root int) ([][]byte, error) {
	w := c.w
	defer w.yield()
	all, err := w.meet("Gatherv", header{Call: comm.Call{Kind: comm.Gatherv, Root: root, Len: len(send)}}, nil,
		func(a, b header) bool { return a.Root == b.Root })
	if err != nil {
		return nil, err
	}
	if err := w.checkRoot("Gatherv", root); err != nil {
		return nil, err
	}
	total := 0
	for _, h := range all {
		total += h.Len
	}
	if total > math.MaxInt32 {
		return nil, w.errf("Gatherv", "%d bytes in all, more than MPI's counts reach (%d)", total, math.MaxInt32)
	}
	var sp unsafe.Pointer
	if len(send) > 0 {
		sp = unsafe.Pointer(&send[0])
	}
	if w.rank != root {
		rc := C.heat_mpi_gatherv(sp, C.int(len(send)), nil, nil, nil, C.int(root), C.int64_t(len(send)))
		w.waited()
		if err := w.gaveUp("Gatherv", rc, sp); err != nil {
			return nil, err
		}
		if rc != 0 {
			return nil, w.errf("Gatherv", "MPI_Gatherv of %d bytes to rank %d: %s", len(send), root, errorText(rc))
		}
		return nil, nil
	}
	counts, displs := make([]C.int, w.size), make([]C.int, w.size)
	for r, h := range all {
		counts[r] = C.int(h.Len)
		if r > 0 {
			displs[r] = displs[r-1] + counts[r-1]
		}
	}
	data := make([]byte, total)
	var rp unsafe.Pointer
	if total > 0 {
		rp = unsafe.Pointer(&data[0])
	}
	rc := C.heat_mpi_gatherv(sp, C.int(len(send)), rp, &counts[0], &displs[0], C.int(root), C.int64_t(total))
	w.waited()
	if err := w.gaveUp("Gatherv", rc, sp, rp, &counts[0], &displs[0]); err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, w.errf("Gatherv", "MPI_Gatherv of %d bytes in all: %s", total, errorText(rc))
	}
	out := make([][]byte, w.size)
	for r := range out {
		lo, hi := int(displs[r]), int(displs[r])+int(counts[r])
		out[r] = data[lo:hi:hi]
	}
	return out, nil
}
