// Package safefile reads files that heat did not write in this run — a
// checkpoint's metadata and chunks, a checkpoint folder's latest, a run's
// report — as files that anyone may have replaced: a damaged or hostile
// folder must neither hang heat nor make it allocate what the folder says.
//
// So a file is read only if it is a regular file, and only up to a bound
// the caller gives:
//
//   - it is looked at with lstat first and opened with O_NOFOLLOW, so a
//     symbolic link in its place is refused, never followed (and its
//     target is never read or named);
//   - it is opened with O_NONBLOCK and checked with fstat on the open
//     file, so a named pipe (FIFO) — whose plain open blocks until a
//     writer comes, forever — a device, a socket or a directory is refused
//     at once, by a message that says what is there ("… is a named pipe
//     (FIFO), not a regular file"); O_NONBLOCK is cleared again before the
//     regular file is read;
//   - its size is compared with the bound before anything is allocated for
//     it, so a 2 GiB sparse file where 14 bytes belong costs nothing.
//
// Where the platform has no O_NOFOLLOW or O_NONBLOCK (not unix), the lstat
// and the fstat of the open file do what they can.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular matches (errors.Is) a *NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge matches (errors.Is) a *TooLargeError.
var ErrTooLarge = errors.New("file larger than its bound")

// NotRegularError is a path that holds something other than a regular
// file; Mode is what lstat or fstat found (its type bits).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Is makes errors.Is(err, ErrNotRegular) hold.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// TooLargeError is a regular file larger than the bound its reader gave.
type TooLargeError struct {
	Path      string
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, more than the %d bytes read of such a file", e.Path, e.Size, e.Max)
}

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Kind names the type of file mode m, with its article, as messages say
// it: "a named pipe (FIFO)", "a directory", "a symbolic link", ….
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

// Stat is os.Lstat of path, refusing (with a *NotRegularError) anything
// but a regular file: what is there, not what a link there points to.
func Stat(path string) (fs.FileInfo, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: st.Mode().Type()}
	}
	return st, nil
}

// Open opens path for reading if it is a regular file, and returns it
// with its fstat: a link, a FIFO, a device, a socket or a directory there
// is a *NotRegularError, without blocking and without following the link.
// The file is in blocking mode, as os.Open leaves it.
func Open(path string) (*os.File, fs.FileInfo, error) {
	// The lstat keeps a device from being opened at all (opening one can
	// do something); the open's own checks hold if the file changes
	// between the two.
	if _, err := Stat(path); err != nil {
		return nil, nil, err
	}
	f, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: st.Mode().Type()}
	}
	return f, st, nil
}

// ReadFile returns the contents of the regular file path, refusing it (a
// *TooLargeError naming its size and max) before reading or allocating
// anything when it is larger than max bytes. Anything but a regular file
// is refused as Open refuses it.
func ReadFile(path string, max int64) ([]byte, error) {
	return ReadFileInto(path, max, nil)
}

// ReadFileInto is ReadFile, reading into buf's storage when it has room
// (buf may be nil): a reader of many files of one size keeps one buffer.
func ReadFileInto(path string, max int64, buf []byte) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := st.Size()
	if size > max {
		return nil, &TooLargeError{Path: path, Size: size, Max: max}
	}
	n := int(size)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf, nil
}
