//go:build unix

package safefile

import "syscall"

// Open flags for the files heat writes (lock files, manifests, checkpoint
// and output files): NoFollow refuses a link in the path's last element
// (ELOOP) instead of writing through it; NonBlock keeps a FIFO planted
// there from blocking the open.
const (
	NoFollow = syscall.O_NOFOLLOW
	NonBlock = syscall.O_NONBLOCK
)
