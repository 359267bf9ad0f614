//go:build unix

package lockfile

import (
	"errors"
	"os"
	"syscall"
)

var errWouldBlock = syscall.EWOULDBLOCK

// flock takes an exclusive flock on f without waiting.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// clearNonBlock puts f back in blocking mode (the open used O_NONBLOCK).
func clearNonBlock(f *os.File) error {
	return syscall.SetNonblock(int(f.Fd()), false)
}
