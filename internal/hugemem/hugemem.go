// Package hugemem allocates the large arrays of a run (fields, gathered
// planes, checkpoint buffers) so that the kernel backs them with huge pages
// where it can. Touching fresh memory costs a page fault per 4 KiB page,
// which on a virtual machine made the first pass over a 268 MB field take
// about a second; 2 MiB pages need 512× fewer faults and TLB entries.
package hugemem

import (
	"sync/atomic"
	"unsafe"
)

// Page is the huge page: arrays of at least Page bytes start on a
// multiple of it.
const Page = 2 << 20

// Floats returns a zeroed slice of n float64 values, advised for huge pages
// (Linux: madvise MADV_HUGEPAGE before the first touch; elsewhere a plain
// make).
func Floats(n int) []float64 { return alloc[float64](n) }

// Bytes is Floats for a slice of n bytes.
func Bytes(n int) []byte { return alloc[byte](n) }

// alloc is a zeroed slice of n values of T. From Page bytes on it starts
// on a huge-page boundary, so that every whole huge page of it can be
// one: a field placed where the allocator put it began and ended inside
// huge pages shared with other objects, whose 4 KiB pages were faulted one
// by one (a 1024² media run's setup: 2,000–3,000 faults, 6–10 µs each on a
// VM, for each handful of fields). Its last, partial huge page is one too
// where it is at least half used (the rest of it is never read); below
// half, it stays in small pages. The padding costs address space, not
// memory.
func alloc[T any](n int) []T {
	size := int(unsafe.Sizeof(*new(T)))
	nb := n * size
	if nb < Page {
		return make([]T, n) // no whole huge page in it, wherever it starts
	}
	span := nb &^ (Page - 1)
	if nb-span >= Page/2 {
		span += Page
	}
	b := make([]T, (max(span, nb)+Page)/size)
	start := uintptr(unsafe.Pointer(&b[0]))
	off := int((Page-start%Page)%Page) / size
	padding.Add(int64(len(b)*size - max(span, nb)))
	b = b[off : off+n : off+n]
	advise(unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), span))
	return b
}

// padding is the bytes of address space alloc has added to align arrays
// and that nothing touches.
var padding atomic.Int64

// Padding is the address space this process's arrays were given to start
// on huge-page boundaries and never touch (under Page an array of Page
// bytes or more): Go's MemStats.Sys counts it, resident memory does not.
func Padding() int64 { return padding.Load() }
