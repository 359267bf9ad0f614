package main

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"heat/comm/mpi"
	"heat/run"
	"heat/stencil"
)

func versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print heat's version, revision, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: body(func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if !asJSON {
				fmt.Fprintln(w, run.VersionString())
				return nil
			}
			v := struct {
				Version  string   `json:"version"`
				Revision string   `json:"revision"`
				Go       string   `json:"go_version"`
				OS       string   `json:"goos"`
				Arch     string   `json:"goarch"`
				MPI      bool     `json:"mpi"`
				Kernel   string   `json:"kernel"`
				Kernels  []string `json:"kernels"`
			}{run.Version, run.Revision(), runtime.Version(), runtime.GOOS, runtime.GOARCH, mpi.Enabled, stencil.Active.Name, nil}
			for _, ks := range stencil.Available() {
				v.Kernels = append(v.Kernels, ks.Name)
			}
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(v)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print it as JSON (with the kernel sets this CPU runs)")
	return cmd
}
