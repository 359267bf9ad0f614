//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openRegular opens path read-only without following a link there
// (O_NOFOLLOW) and without waiting for a writer should it be a FIFO
// (O_NONBLOCK), refuses what fstat of the open descriptor says is not a
// regular file, and puts the descriptor back in blocking mode, as reads of
// a regular file expect.
func openRegular(path string) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		// A link put there since the lstat: O_NOFOLLOW's ELOOP (EMLINK or
		// EFTYPE on some BSDs) says so only vaguely.
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, &NotRegularError{Path: path, Mode: fs.ModeSymlink}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if t := uint32(st.Mode) & unix.S_IFMT; t != unix.S_IFREG {
		unix.Close(fd)
		return nil, &NotRegularError{Path: path, Mode: modeType(t)}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// modeType is the fs.FileMode type of the S_IFMT bits t.
func modeType(t uint32) fs.FileMode {
	switch t {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFSOCK:
		return fs.ModeSocket
	}
	return fs.ModeIrregular
}
