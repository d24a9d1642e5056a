package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The names urfave/cli adds to every app and command at run time.
var (
	helpNames    = []string{"help", "h"}
	versionNames = []string{"version", "v"}
)

// prepareArgs checks the command line against the command tree before
// urfave/cli parses it, and reorders it so that it parses as users write it.
//
// Every mistake it finds is a usageError (exit 2) that names the nearest
// command or flag: an unknown command or subcommand, an unknown flag, a flag
// that needs a value and has none, and a required flag left out (unless
// help is asked for).
//
// It moves the flags of a command in front of its positional arguments, so
// that `pathctl run edges.parquet -o out.arrow` parses: urfave/cli v2 stops
// reading flags at the first argument. A flag that takes a value keeps the
// token after it; `--` ends the flags.
func prepareArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	out := []string{args[0]}
	rest := args[1:]
	path := "" // the command words given so far: "gen rmat"
	var cmd *cli.Command
	commands := app.Commands
	levelFlags := app.Flags
	extra := append(slices.Clone(helpNames), versionNames...)
	// Descend through command and subcommand names, checking the flags in
	// front of each.
	for len(rest) > 0 {
		a := rest[0]
		if cmd != nil && len(cmd.Subcommands) == 0 {
			break // the flags and arguments of cmd
		}
		if isFlag(a) {
			name := flagName(a)
			if !hasFlag(levelFlags, name) && !slices.Contains(extra, name) {
				return nil, unknownFlag(app, path, a, levelFlags)
			}
			// Only --help and --version stand here; what follows is theirs.
			return append(out, rest...), nil
		}
		var next *cli.Command
		for _, c := range commands {
			if c.HasName(a) {
				next = c
			}
		}
		if next == nil {
			if slices.Contains(helpNames, a) {
				if err := checkHelpTopic(path, commands, rest[1:]); err != nil {
					return nil, err
				}
				return append(out, rest...), nil
			}
			return nil, unknownCommand(path, a, commands)
		}
		cmd = next
		path = strings.TrimSpace(path + " " + next.Name)
		out = append(out, a)
		rest = rest[1:]
		commands = cmd.Subcommands
		levelFlags = cmd.Flags
		extra = helpNames
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return append(out, rest...), nil
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, name := range f.Names() {
			takesValue[name] = !isBool
		}
	}
	var flags, positional []string
	given := map[string]bool{}
	help := false
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			positional = append(positional, rest[i+1:]...)
			i = len(rest)
		case isFlag(a):
			name := flagName(a)
			if slices.Contains(helpNames, name) {
				help = true
				flags = append(flags, a)
				continue
			}
			names, ok := shortFlags(cmd, a)
			if !ok {
				return nil, unknownFlag(app, path, a, cmd.Flags)
			}
			for _, n := range names {
				given[n] = true
			}
			flags = append(flags, a)
			if !strings.Contains(a, "=") && takesValue[name] {
				if i+1 >= len(rest) {
					return nil, usagef("flag %s needs a value; see pathctl %s --help", a, path)
				}
				i++
				flags = append(flags, rest[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	if !help {
		for _, f := range cmd.Flags {
			if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() && !anyGiven(given, f.Names()) {
				return nil, usagef("%s needs --%s; see pathctl %s --help", path, f.Names()[0], path)
			}
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out, nil
}

func isFlag(a string) bool { return len(a) > 1 && strings.HasPrefix(a, "-") && a != "--" }

// flagName is a flag's name without its dashes and its =value.
func flagName(a string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

func anyGiven(given map[string]bool, names []string) bool {
	for _, n := range names {
		if given[n] {
			return true
		}
	}
	return false
}

// shortFlags resolves a flag token of cmd to the names it sets: one flag,
// or, for a single dash and several letters, a run of one-letter bool flags
// (-qv).
func shortFlags(cmd *cli.Command, a string) ([]string, bool) {
	name := flagName(a)
	if hasFlag(cmd.Flags, name) {
		return []string{name}, true
	}
	if strings.HasPrefix(a, "--") || strings.Contains(a, "=") {
		return nil, false
	}
	var names []string
	for _, r := range name {
		short := string(r)
		ok := false
		for _, f := range cmd.Flags {
			if _, isBool := f.(*cli.BoolFlag); isBool && slices.Contains(f.Names(), short) {
				ok = true
			}
		}
		if !ok {
			return nil, false
		}
		names = append(names, short)
	}
	return names, true
}

// dashed writes a flag name as it is typed.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// unknownFlag names the nearest flag of the command, or the commands that
// have the flag asked for. path is "" for flags in front of any command.
func unknownFlag(app *cli.App, path, given string, flags []cli.Flag) error {
	name := flagName(given)
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	of, help := "", "pathctl --help"
	if path != "" {
		of, help = " for "+path, "pathctl "+path+" --help"
	}
	if best := nearest(name, names); best != "" {
		return usagef("unknown flag %s%s (did you mean %s?)", dashed(name), of, dashed(best))
	}
	if owners := commandsWithFlag(app.Commands, "", name); len(owners) > 0 {
		to := strings.Replace(of, " for ", " to ", 1)
		return usagef("flag %s does not apply%s (it is a flag of %s); see %s", dashed(name), to, strings.Join(owners, ", "), help)
	}
	return usagef("unknown flag %s%s; see %s", dashed(name), of, help)
}

func commandsWithFlag(commands []*cli.Command, prefix, name string) []string {
	var out []string
	for _, c := range commands {
		p := strings.TrimSpace(prefix + " " + c.Name)
		if hasFlag(c.Flags, name) {
			out = append(out, p)
		}
		out = append(out, commandsWithFlag(c.Subcommands, p, name)...)
	}
	return out
}

// unknownCommand names the nearest command; path is the command words in
// front of the unknown one.
func unknownCommand(path, given string, commands []*cli.Command) error {
	var names, visible []string
	for _, c := range commands {
		if !c.Hidden {
			names = append(names, c.Names()...)
			visible = append(visible, c.Name)
		}
	}
	words := strings.TrimSpace(path + " " + given)
	if best := nearest(given, names); best != "" {
		return usagef("unknown command %q (did you mean %q?)", words, strings.TrimSpace(path+" "+best))
	}
	return usagef("unknown command %q (commands: %s)", words, strings.Join(visible, ", "))
}

// checkHelpTopic refuses `help NAME` for a command that does not exist.
func checkHelpTopic(path string, commands []*cli.Command, topics []string) error {
	for _, topic := range topics {
		if isFlag(topic) {
			return nil
		}
		var next *cli.Command
		for _, c := range commands {
			if c.HasName(topic) {
				next = c
			}
		}
		if next == nil {
			return unknownCommand(path, topic, commands)
		}
		path = strings.TrimSpace(path + " " + next.Name)
		commands = next.Subcommands
	}
	return nil
}

// nearest returns the candidate closest to s by edit distance, when it is
// close enough to be what was meant (at most a third of its letters, and at
// least one, differ; or s is a prefix of it), else "".
func nearest(s string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(s, c)
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			d = min(d, 1)
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(1, len(s)/3) {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours each count 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// tidyHelp makes the flag help read once: a "(default: X)" at the end of a
// usage becomes the flag's default text, so urfave/cli does not add a second
// one with the zero value, and bool flags show no "(default: false)".
func tidyHelp(commands []*cli.Command) {
	for _, c := range commands {
		for _, f := range c.Flags {
			tidyFlag(f)
		}
		tidyHelp(c.Subcommands)
	}
}

func tidyFlag(f cli.Flag) {
	const open = "(default: "
	split := func(usage string) (string, string, bool) {
		i := strings.LastIndex(usage, open)
		if i < 0 || !strings.HasSuffix(usage, ")") {
			return usage, "", false
		}
		return strings.TrimSpace(usage[:i]), usage[i+len(open) : len(usage)-1], true
	}
	// set moves a "(default: …)" ending of usage into defaultText.
	set := func(usage, defaultText *string) {
		if u, d, ok := split(*usage); ok {
			*usage, *defaultText = u, d
		}
	}
	switch f := f.(type) {
	case *cli.BoolFlag:
		f.DisableDefaultText = true
	case *cli.StringFlag:
		set(&f.Usage, &f.DefaultText)
	case *cli.IntFlag:
		set(&f.Usage, &f.DefaultText)
	case *cli.Int64Flag:
		set(&f.Usage, &f.DefaultText)
	case *cli.Uint64Flag:
		set(&f.Usage, &f.DefaultText)
	case *cli.Float64Flag:
		set(&f.Usage, &f.DefaultText)
	case *cli.DurationFlag:
		set(&f.Usage, &f.DefaultText)
	}
}

// checkNoConflict refuses two flags that say the same thing two ways.
func checkNoConflict(c *cli.Context, a, b string) error {
	if c.IsSet(a) && c.IsSet(b) {
		return usagef("--%s and --%s cannot both be given", a, b)
	}
	return nil
}
