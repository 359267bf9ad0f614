package checkpoint

import (
	"errors"
	"os"
	"syscall"
)

// openDirect creates (or truncates) path for writing with O_DIRECT; ok is
// false, with no file opened, where the filesystem refuses the flag.
func openDirect(path string) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_DIRECT|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, syscall.EINVAL) {
		return nil, false, nil
	}
	return f, err == nil, err
}
