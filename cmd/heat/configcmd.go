package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"heat/configs"
)

func configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "the example problems, and what every config key means",
		Long: `The example problems are embedded in the binary: "heat config list" names them,
"heat config show NAME" prints one (a commented TOML file to start from), and
"heat run -c NAME" runs one when no file NAME exists. "heat config keys [PREFIX]"
describes every key (type, default, units, whether a restart may change it).`,
		Example: "  heat config list\n  heat config show poisson-3d > my-problem.toml\n  heat run -c poisson-3d\n  heat config keys boundary",
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "name every embedded example problem",
		Args:  cobra.NoArgs,
		RunE: body(func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for _, ex := range configs.Examples() {
				fmt.Fprintf(w, "%-18s %s\n", ex.Name, ex.Title)
			}
			return nil
		}),
	}
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "print an embedded example problem",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return exampleNames(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: body(func(cmd *cobra.Command, args []string) error {
			ex, ok := configs.Lookup(args[0])
			if !ok {
				return usagef("config show: no example problem %q (known: %s)", args[0], strings.Join(exampleNames(), ", "))
			}
			_, err := cmd.OutOrStdout().Write(ex.Text)
			return err
		}),
	}
	cmd.AddCommand(list, show, keysCommand())
	return group(cmd, "subcommand")
}

func exampleNames() []string {
	var names []string
	for _, ex := range configs.Examples() {
		names = append(names, ex.Name)
	}
	return slices.Clip(names)
}
