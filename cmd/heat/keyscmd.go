package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"heat/io/config"
)

// keysCommand is "heat config keys [PREFIX]": every config key (or those
// under PREFIX) with its type, default, units, whether a restart may change
// it and what it means, from the descriptions beside the config types.
func keysCommand() *cobra.Command {
	var asJSON, markdown bool
	cmd := &cobra.Command{
		Use:   "keys [PREFIX]",
		Short: "describe every config key (or those under PREFIX)",
		Long: `Every key of a config file (and of --set) with its type, its built-in default,
its units where it has some, whether a restart may change it, and what it
means. PREFIX is a key or a table: "heat config keys boundary" lists the
boundary keys, "heat config keys run.t_end" one key. Arrays of tables read
as material[].k ([[material]] tables in a file). --json prints a list for
scripts; --markdown the table of docs/configuration.md.`,
		Example: "  heat config keys\n  heat config keys equation\n  heat config keys material --json",
		Args:    cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, k := range config.Keys() {
				if !slices.Contains(names, k.Section) {
					names = append(names, k.Section)
				}
				names = append(names, k.Key)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: body(func(cmd *cobra.Command, args []string) error {
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			keys := config.KeysWith(prefix)
			if len(keys) == 0 {
				return usagef("config keys: no key or table %q (heat config keys lists them all)", prefix)
			}
			w := cmd.OutOrStdout()
			switch {
			case asJSON:
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(keys)
			case markdown:
				_, err := io.WriteString(w, keysMarkdown(keys))
				return err
			}
			_, err := io.WriteString(w, keysText(keys))
			return err
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the keys as JSON")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the keys as a Markdown table")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown")
	return cmd
}

// keysText is the keys as the terminal reads them: each table's
// description once, then its keys, a line of facts and the description
// indented below.
func keysText(keys []config.KeyInfo) string {
	var b strings.Builder
	table := ""
	for _, k := range keys {
		if k.Table != table {
			table = k.Table
			if table != "" {
				fmt.Fprintf(&b, "\n%s\n\n", indent(table, ""))
			}
		}
		fmt.Fprintf(&b, "%s  (%s)\n", k.Key, facts(k))
		if k.Doc != "" {
			b.WriteString(indent(k.Doc, "    ") + "\n")
		}
	}
	return strings.TrimPrefix(b.String(), "\n")
}

// facts are a key's type, default, units and restart rule in one line.
func facts(k config.KeyInfo) string {
	parts := []string{k.Type}
	if k.Default != "" {
		parts = append(parts, "default "+k.Default)
	}
	if k.Units != "" {
		parts = append(parts, "units "+k.Units)
	}
	if k.Restart {
		parts = append(parts, "a restart may change it")
	} else {
		parts = append(parts, "fixed by a restart's checkpoint")
	}
	return strings.Join(parts, "; ")
}

// indent wraps text at 80 columns under prefix (lines that start with a
// tab, a comment's indented block, kept as they are).
func indent(text, prefix string) string {
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		if strings.HasPrefix(para, "\t") || strings.HasPrefix(para, "  ") {
			lines = append(lines, prefix+"  "+strings.TrimPrefix(para, "\t"))
			continue
		}
		line := prefix
		for _, w := range strings.Fields(para) {
			if len(line) > len(prefix) && len(line)+1+len(w) > 80 {
				lines = append(lines, line)
				line = prefix
			}
			if len(line) > len(prefix) {
				line += " "
			}
			line += w
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// keysMarkdown is the keys as the configuration page's table, one per
// top-level table.
func keysMarkdown(keys []config.KeyInfo) string {
	var b strings.Builder
	section := ""
	cell := func(s string) string {
		s = strings.ReplaceAll(s, "|", `\|`)
		return strings.Join(strings.Fields(s), " ")
	}
	for _, k := range keys {
		if k.Section != section {
			section = k.Section
			fmt.Fprintf(&b, "\n### `%s`\n\n| key | type | default | units | restart | meaning |\n|---|---|---|---|---|---|\n", section)
		}
		restart := "fixed"
		if k.Restart {
			restart = "may change"
		}
		def := ""
		if k.Default != "" {
			def = "`" + cell(k.Default) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", k.Key, cell(k.Type), def, cell(k.Units), restart, cell(k.Doc))
	}
	return strings.TrimPrefix(b.String(), "\n")
}

// helpCommand is "heat help [COMMAND | KEY]": a command's help, as cobra
// gives it, or, where the topic names no command, the config keys under
// it ("heat help boundary.h").
func helpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command | config key]",
		Short: "help about a command, or what a config key means",
		Long: `"heat help COMMAND" prints a command's help; "heat help KEY" describes a config
key or the keys of a table (as "heat config keys KEY" does).`,
		Example: "  heat help run\n  heat help boundary\n  heat help run.t_end",
		RunE: body(func(c *cobra.Command, args []string) error {
			root := c.Root()
			cmd, rest, err := root.Find(args)
			if len(args) == 0 || (err == nil && cmd != root && len(rest) == 0) {
				if cmd == nil {
					cmd = root
				}
				return cmd.Help()
			}
			if keys := config.KeysWith(args[len(args)-1]); len(args) == 1 && len(keys) > 0 {
				_, err := io.WriteString(c.OutOrStdout(), keysText(keys))
				return err
			}
			return usagef("help: no command or config key %q (heat --help lists the commands, heat config keys the keys)", strings.Join(args, " "))
		}),
	}
}
