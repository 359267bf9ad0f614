package hugemem

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Floats is a plain zeroed slice of the asked length, small or large, and
// the advice leaves its contents alone.
func TestFloatsIsZeroedAndUsable(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 3 << 20} {
		b := Floats(n)
		require.Len(t, b, n)
		for i := range b {
			require.Zero(t, b[i])
			b[i] = float64(i)
		}
		for i := range b {
			require.Equal(t, float64(i), b[i])
		}
	}
}
