//go:build unix

package checkpoint

import "syscall"

// noFollow opens a file without following a link in its last element.
const noFollow = syscall.O_NOFOLLOW
