package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves the flags of a command in front of its positional
// arguments, so that `pathctl run edges.parquet -o out.arrow` parses as
// users write it: urfave/cli v2 stops reading flags at the first argument.
// A flag that takes a value keeps the token after it; `--` ends the flags.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	var cmd *cli.Command
	commands := app.Commands
	// Descend through command and subcommand names.
	for len(rest) > 0 {
		var next *cli.Command
		for _, c := range commands {
			if c.HasName(rest[0]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd = next
		out = append(out, rest[0])
		rest = rest[1:]
		commands = cmd.Subcommands
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return append(out, rest...)
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, name := range f.Names() {
			takesValue[name] = !isBool
		}
	}
	var flags, positional []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			positional = append(positional, rest[i+1:]...)
			i = len(rest)
		case len(a) > 1 && strings.HasPrefix(a, "-"):
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}
