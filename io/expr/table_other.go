//go:build !unix

package expr

import "io/fs"

// fileID is 0, 0 where the platform's stat has no device and inode: the
// path, size and modification time tell a changed file.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
