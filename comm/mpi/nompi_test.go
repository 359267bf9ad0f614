//go:build !(mpi && cgo)

package mpi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A build without MPI says how to get one, and never pretends to be a world.
func TestInitWithoutMPI(t *testing.T) {
	require.False(t, Enabled)
	w, err := Init()
	require.Nil(t, w)
	require.ErrorIs(t, err, ErrNoMPI)
	require.EqualError(t, err, "heat was built without MPI: rebuild with `go build -tags mpi ./cmd/heat` "+
		"(cgo and an MPI library such as libopenmpi-dev are needed)")
	require.Empty(t, LibraryVersion())
}
