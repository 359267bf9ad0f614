//go:build mpi && cgo && !mpich && !mpicc

package mpi

// Open MPI, the default: its pkg-config file (libopenmpi-dev) gives the
// include and library paths.

// #cgo pkg-config: ompi-c
import "C"
