//go:build mpi && cgo && linux

package mpi

import "syscall"

// onMainThread reports whether the calling goroutine runs on the process's
// main thread, the one whose thread id is the process id.
func onMainThread() bool { return syscall.Gettid() == syscall.Getpid() }
