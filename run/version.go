package run

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is heat's release; the VCS revision is added when the build has it.
const Version = "0.1.0-dev"

func Revision() string {
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

func VersionString() string {
	s := "heat " + Version
	if r := Revision(); r != "" {
		s += " (" + r + ")"
	}
	return fmt.Sprintf("%s %s %s/%s", s, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
