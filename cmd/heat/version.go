package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is heat's release; the VCS revision is added when the build has it.
const version = "0.1.0-dev"

func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}

func versionString() string {
	s := "heat " + version
	if r := revision(); r != "" {
		s += " (" + r + ")"
	}
	return fmt.Sprintf("%s %s %s/%s", s, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
