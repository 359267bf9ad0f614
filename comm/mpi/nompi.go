//go:build !(mpi && cgo)

package mpi

import (
	"os"

	"heat/comm"
)

// Enabled reports whether this build talks to MPI; in this one it does not.
const Enabled = false

// World is MPI_COMM_WORLD; a build without MPI never has one.
type World struct{}

// Init fails with ErrNoMPI: this build has no MPI to initialise.
func Init() (*World, error) { return nil, ErrNoMPI }

// Comm is nil: a build without MPI has no world to talk to.
func (w *World) Comm() comm.Comm { return nil }

// Finalize returns ErrNoMPI, as Init did.
func (w *World) Finalize() error { return ErrNoMPI }

// Abort exits the process with code, as MPI_Abort would end this rank.
func (w *World) Abort(code int) { os.Exit(code) }

// LibraryVersion is empty: no MPI library is linked in.
func LibraryVersion() string { return "" }
