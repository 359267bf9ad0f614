// Package configs holds the example problems users start from, each a
// commented TOML file that runs as is, embedded so that the binary carries
// them: default.toml is the problem `heat run` solves without -c.
package configs

import "embed"

// FS holds every example problem, by file name (default.toml, cube-3d.toml, ...).
//
//go:embed *.toml
var FS embed.FS

// Default is the text of the built-in default problem, configs/default.toml.
func Default() []byte {
	b, err := FS.ReadFile("default.toml")
	if err != nil {
		panic("configs: default.toml is not embedded: " + err.Error()) // a build bug, not a user error
	}
	return b
}
