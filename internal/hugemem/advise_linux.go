package hugemem

import (
	"syscall"
	"unsafe"
)

// minBytes is the size below which advice is not worth a system call
// (it holds no whole huge page wherever it starts).
const minBytes = Page

// advise asks for huge pages over the 2 MiB-aligned part of b. It is a hint:
// where transparent huge pages are off, or the call fails, memory stays as
// it was.
func advise(b []byte) {
	n := len(b)
	if n < minBytes {
		return
	}
	const huge = Page
	p := unsafe.Pointer(unsafe.SliceData(b))
	start := uintptr(p)
	lo := (start + huge - 1) &^ (huge - 1)
	hi := (start + uintptr(n)) &^ (huge - 1)
	if hi <= lo {
		return
	}
	mem := unsafe.Slice((*byte)(unsafe.Add(p, lo-start)), hi-lo)
	_ = syscall.Madvise(mem, 14) // MADV_HUGEPAGE
}
