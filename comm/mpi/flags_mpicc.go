//go:build mpi && cgo && mpicc

package mpi

// The site's compiler wrapper (-tags mpi,mpicc, built with CC=mpicc) adds the
// include and library paths itself, so no flags are set here; use it for an
// MPI that has no pkg-config file (Cray, vendor builds, modules).

import "C"
