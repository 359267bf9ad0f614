//go:build !unix

package safefile

// NoFollow and NonBlock are no flags where the OS has none (see
// flags_unix.go): there the lstat before a write is the only check.
const (
	NoFollow = 0
	NonBlock = 0
)
