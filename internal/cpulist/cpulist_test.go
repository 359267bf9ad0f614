package cpulist

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	mask, ok := Parse(" 0-2,5,7-8\n")
	require.True(t, ok)
	require.Equal(t, []bool{true, true, true, false, false, true, false, true, true}, mask)
	for _, bad := range []string{"", "a", "3-1", "-1", "1-", "1,,2", "70000"} {
		_, ok := Parse(bad)
		require.False(t, ok, "%q", bad)
	}
}

func TestCount(t *testing.T) {
	for list, want := range map[string]int{"0-15,32-47\n": 32, "0": 1, "0-1": 2, "3,5,7-8": 4, "": 0, "x-2": 0, "4-2": 0} {
		require.Equal(t, want, Count(list), "%q", list)
	}
}
