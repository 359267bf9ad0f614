package hugemem

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// Floats is a plain zeroed slice of the asked length, small or large, and
// the advice leaves its contents alone.
func TestFloatsIsZeroedAndUsable(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 3 << 20} {
		b := Floats(n)
		require.Len(t, b, n)
		bad := -1
		for i := range b {
			if b[i] != 0 {
				bad = i
			}
			b[i] = float64(i)
		}
		require.Equal(t, -1, bad, "a non-zero value")
		for i := range b {
			if b[i] != float64(i) {
				bad = i
			}
		}
		require.Equal(t, -1, bad, "a value not kept")
	}
}

// Bytes is the same for bytes: zeroed, the asked length, every byte kept.
func TestBytesIsZeroedAndUsable(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 4<<20 - 1, 5 << 20} {
		b := Bytes(n)
		require.Len(t, b, n)
		bad := -1
		for i := range b {
			if b[i] != 0 {
				bad = i
			}
			b[i] = byte(i * 7)
		}
		require.Equal(t, -1, bad, "a non-zero byte")
		for i := range b {
			if b[i] != byte(i*7) {
				bad = i
			}
		}
		require.Equal(t, -1, bad, "a byte not kept")
	}
}

// From a huge page on, an array starts on a huge-page boundary (its whole
// huge pages can be huge), and holds exactly what was asked.
func TestLargeArraysStartOnHugePages(t *testing.T) {
	for _, n := range []int{Page / 8, Page/8 + 1, 1026 * 1026, 3*Page/8 - 5, 5 * Page / 8} {
		b := Floats(n)
		require.Len(t, b, n)
		require.Equal(t, n, cap(b), "room past the end")
		require.Zero(t, uintptr(unsafe.Pointer(&b[0]))%Page, "%d values start inside a huge page", n)
		y := Bytes(8 * n)
		require.Len(t, y, 8*n)
		require.Zero(t, uintptr(unsafe.Pointer(&y[0]))%Page, "%d bytes start inside a huge page", 8*n)
	}
}

// The padding that aligns a large array is counted, and a small array
// adds none.
func TestPaddingIsCounted(t *testing.T) {
	before := Padding()
	_ = Floats(100)
	require.Equal(t, before, Padding(), "a small array")
	b := Floats(3*Page/8 + 5)
	require.Greater(t, Padding(), before)
	require.Less(t, Padding()-before, int64(2*Page), "under two huge pages an array")
	_ = b
}
