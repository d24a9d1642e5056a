package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetsFileErrors checks that a bad --targets-file is one line
// naming the flag that gave the bad value and the value (the file, and
// the id where one is unknown), exit 2, and no output file: an unknown id,
// a line that is no id of the graph's integer type, a missing file, a file
// without ids, a file of blank lines (ids "" and "  "), and an unknown id given beside a good --targets (and the
// other way round, where the message names --targets). An unknown source
// of --sources-file or --sources names its flag the same way.
func TestTargetsFileErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	out := filepath.Join(dir, "x.arrow")
	unknown := writeFile(t, dir, "unknown.txt", "2\n99\n")
	word := writeFile(t, dir, "word.txt", "3\nabc\n")
	good := writeFile(t, dir, "good.txt", "3\n1\n")
	empty := writeFile(t, dir, "empty.txt", "")
	// Lines are ids as written: these are "" and "  ", no vertex here.
	blank := writeFile(t, dir, "blank.txt", "\n  \n")
	missing := filepath.Join(dir, "missing.txt")
	for _, c := range []struct {
		args []string
		want []string // each in the one line
		not  string   // not in it ("" for no check)
	}{
		{[]string{"--targets-file", unknown}, []string{"--targets-file " + unknown + ": ", `"99" is not a vertex of the graph`}, ""},
		{[]string{"--targets-file", word}, []string{"--targets-file " + word + ": ", `"abc" is not a vertex of the graph, whose ids are int64`}, ""},
		{[]string{"--targets-file", missing}, []string{"--targets-file", missing, "no such file"}, ""},
		{[]string{"--targets-file", empty}, []string{"--targets-file " + empty, "names no id"}, ""},
		{[]string{"--targets-file", blank}, []string{"--targets-file " + blank + ": ", `"" is not a vertex of the graph`}, ""},
		{[]string{"--targets", "2", "--targets-file", unknown}, []string{"--targets-file " + unknown + ": ", `"99" is not a vertex of the graph`}, ""},
		{[]string{"--targets", "2,77", "--targets-file", good}, []string{"--targets: ", `"77" is not a vertex of the graph`}, "--targets-file"},
		{[]string{"--targets", "77", "--targets-file", unknown}, []string{"--targets: ", `"77" is not a vertex of the graph`}, "--targets-file"},
		{[]string{"--sources-file", unknown}, []string{"--sources-file " + unknown + ": ", `"99" is not a vertex of the graph`}, ""},
		{[]string{"--sources-file", word}, []string{"--sources-file " + word + ": ", `"abc" is not a vertex of the graph`}, ""},
		{[]string{"--sources", "2,77"}, []string{"--sources: ", `"77" is not a vertex of the graph`}, "--sources-file"},
		{[]string{"--sources-file", good, "--targets-file", unknown}, []string{"--targets-file " + unknown + ": ", `"99" is not a vertex of the graph`}, "--sources"},
	} {
		for _, layout := range []string{"pairs", "matrix"} {
			args := append([]string{"run", in, "--engine", "cpu", "--layout", layout, "-o", out}, c.args...)
			r := pathctl(t, nil, args...)
			line := strings.TrimSpace(r.stderr)
			ok := r.code == exitUsage && !strings.Contains(line, "\n")
			for _, w := range c.want {
				ok = ok && strings.Contains(line, w)
			}
			if c.not != "" && strings.Contains(line, c.not) {
				ok = false
			}
			if !ok {
				t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q (and not %q)", args[1:], r.code, r.stderr, exitUsage, c.want, c.not)
			}
			assertNoOutput(t, dir, "x.arrow")
		}
	}
}
