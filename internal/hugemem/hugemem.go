// Package hugemem allocates the large arrays of a run (fields, gathered
// planes, checkpoint buffers) so that the kernel backs them with huge pages
// where it can. Touching fresh memory costs a page fault per 4 KiB page,
// which on a virtual machine made the first pass over a 268 MB field take
// about a second; 2 MiB pages need 512× fewer faults and TLB entries.
package hugemem

import "unsafe"

// Floats returns a zeroed slice of n float64 values, advised for huge pages
// (Linux: madvise MADV_HUGEPAGE before the first touch; elsewhere a plain
// make).
func Floats(n int) []float64 {
	b := make([]float64, n)
	if n > 0 {
		advise(unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 8*n))
	}
	return b
}

// Bytes is Floats for a slice of n bytes.
func Bytes(n int) []byte {
	b := make([]byte, n)
	advise(b)
	return b
}
