//go:build mpi && cgo && mpich && !mpicc

package mpi

// MPICH (-tags mpi,mpich): its pkg-config file (libmpich-dev) gives the
// include and library paths.

// #cgo pkg-config: mpich
import "C"
