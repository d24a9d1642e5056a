package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/urfave/cli/v2"
)

// userDocs is the text of the documents for users: README.md and every
// page of docs/, which the README links for the reference.
func userDocs(t *testing.T) []byte {
	t.Helper()
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	for _, p := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text = append(append(text, b...), '\n')
	}
	return text
}

// TestReadmeNamesEveryFlag: every flag that a command's --help lists is
// named in README.md or a page of docs/, by its long name or one of its
// aliases (-o for --output), so that a flag added to a command is
// documented with it.
func TestReadmeNamesEveryFlag(t *testing.T) {
	readme := userDocs(t)
	named := func(name string) bool {
		pattern := `--` + regexp.QuoteMeta(name) + `([^a-z0-9-]|$)`
		if len(name) == 1 {
			pattern = "(^|[\\s`(])-" + regexp.QuoteMeta(name) + "[\\s`]"
		}
		return regexp.MustCompile(pattern).Match(readme)
	}
	checked := 0
	// Every command and subcommand (gen rmat, gen grid …).
	var commands []*cli.Command
	var walk func([]*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			commands = append(commands, c)
			walk(c.Subcommands)
		}
	}
	walk(App(&env{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}).Commands)
	for _, c := range commands {
		for _, f := range c.Flags {
			if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
				continue // hidden: not in --help
			}
			names := f.Names()
			found := false
			for _, n := range names {
				found = found || named(n)
			}
			if !found {
				t.Errorf("neither README.md nor docs/*.md names %s's flag --%s", c.Name, names[0])
			}
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("checked %d flags of the commands; the commands were not found", checked)
	}
}
