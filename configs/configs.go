// Package configs holds the example problems users start from, each a
// commented TOML file that runs as is, embedded so that the binary carries
// them: default.toml is the problem `heat run` solves without -c.
package configs

import (
	"embed"
	"strings"
)

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

// Example is one embedded problem: its name (the file name without
// .toml), its first comment line, and its text.
type Example struct {
	Name, Title string
	Text        []byte
}

// Examples are every embedded problem, by name.
func Examples() []Example {
	entries, err := FS.ReadDir(".")
	if err != nil {
		panic("configs: cannot list the embedded problems: " + err.Error())
	}
	var out []Example
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".toml")
		if ex, ok := Lookup(name); ok {
			out = append(out, ex)
		}
	}
	return out
}

// Lookup is the embedded problem called name ("poisson-2d" or
// "poisson-2d.toml").
func Lookup(name string) (Example, bool) {
	name = strings.TrimSuffix(name, ".toml")
	if name == "" || strings.ContainsAny(name, "/\\") {
		return Example{}, false
	}
	text, err := FS.ReadFile(name + ".toml")
	if err != nil {
		return Example{}, false
	}
	title, _, _ := strings.Cut(string(text), "\n")
	title = strings.TrimSpace(strings.TrimPrefix(title, "#"))
	return Example{Name: name, Title: title, Text: text}, true
}
