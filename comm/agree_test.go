package comm_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
)

// Every rank learns the lowest failing rank and the largest failing code,
// or that none failed.
func TestAgreeNamesTheLowestFailingRank(t *testing.T) {
	for _, c := range []struct {
		failing     map[int]int // rank → code
		first, code int
	}{
		{map[int]int{}, -1, 0},
		{map[int]int{3: 1}, 3, 1},
		{map[int]int{4: 2, 1: 1, 2: 130}, 1, 130},
		{map[int]int{0: 1, 4: 2}, 0, 2},
	} {
		err := local.Run(5, func(cm comm.Comm) error {
			code, failed := c.failing[cm.Rank()]
			first, maxCode, err := comm.Agree(cm, failed, code)
			if err != nil {
				return err
			}
			require.Equal(t, c.first, first, "rank %d", cm.Rank())
			require.Equal(t, c.code, maxCode, "rank %d", cm.Rank())
			return nil
		})
		require.NoError(t, err)
	}
}
