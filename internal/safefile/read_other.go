//go:build !unix

package safefile

import "os"

// openRegular opens path read-only. Without O_NOFOLLOW and O_NONBLOCK
// here, Open's lstat before and fstat after are the checks.
func openRegular(path string) (*os.File, error) { return os.Open(path) }
