package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"heat/internal/textdist"
)

// suggestFlag is the flag of cmd nearest to the unknown one err names
// (within two edits, or a prefix of it), or "".
func suggestFlag(cmd *cobra.Command, err error) string {
	msg := err.Error()
	const unknown = "unknown flag: --"
	i := strings.Index(msg, unknown)
	if i < 0 {
		return ""
	}
	name, _, _ := strings.Cut(msg[i+len(unknown):], "=")
	name = strings.Fields(name + " ")[0]
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		d := textdist.Edits(name, f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}
