//go:build unix

package expr

import (
	"io/fs"
	"syscall"
)

// fileID is the device and inode of a file's fstat, 0 where it has none.
func fileID(st fs.FileInfo) (dev, ino uint64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev), uint64(s.Ino)
	}
	return 0, 0
}
