//go:build !unix

package checkpoint

// noFollow is no flag where the OS has none.
const noFollow = 0
