package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryFlagErrors checks that each bad value of a query flag is one
// line naming the flag and the value, exit 2, and no output file.
func TestQueryFlagErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	out := filepath.Join(dir, "x.arrow")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--targets", "2,99"}, `--targets: invalid request: unknown target "99"`},
		{[]string{"--k-nearest", "0"}, "--k-nearest 0"},
		{[]string{"--k-nearest", "-3"}, "--k-nearest -3"},
		{[]string{"--cutoff", "-1"}, "--cutoff -1"},
		{[]string{"--cutoff", "NaN"}, "--cutoff NaN"},
		{[]string{"--k-nearest", "2", "--layout", "matrix"}, "k nearest"},
		{[]string{"--nearest"}, "--nearest needs --sources"},
		{[]string{"--nearest", "--sources", "1", "--layout", "matrix"}, "--nearest"},
	} {
		r := pathctl(t, nil, append([]string{"run", in, "-o", out}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
		assertNoOutput(t, dir, "x.arrow")
	}
}

// TestTargetsCutoffKNearest runs the query flags end to end on a path
// 1 -> 2 -> 3 -> 4 with weights 1, 2, 4.
func TestTargetsCutoffKNearest(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,1\n2,3,2\n3,4,4\n")
	run := func(args ...string) string {
		t.Helper()
		out := filepath.Join(dir, "o.csv")
		r := pathctl(t, nil, append([]string{"run", in, "--engine", "cpu", "-q", "-o", out}, args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := run("--sources", "1,2", "--targets", "4,1"), "source,target,distance\n1,4,7\n1,1,0\n2,4,6\n"; got != want {
		t.Errorf("--targets: got\n%swant\n%s", got, want)
	}
	if got, want := run("--sources", "1", "--cutoff", "3"), "source,target,distance\n1,1,0\n1,2,1\n1,3,3\n"; got != want {
		t.Errorf("--cutoff: got\n%swant\n%s", got, want)
	}
	if got, want := run("--sources", "1,4", "--k-nearest", "2"), "source,target,distance,rank\n1,2,1,1\n1,3,3,2\n"; got != want {
		t.Errorf("--k-nearest: got\n%swant\n%s", got, want)
	}
	if got, want := run("--sources", "1", "--targets-file", writeFile(t, dir, "t.txt", "4\n3\n"), "--layout", "matrix", "--vertices-out", filepath.Join(dir, "v.csv")), "source,4,3\n1,7,3\n"; got != want {
		t.Errorf("--targets-file matrix: got %q, want %q", got, want)
	}
	if got, want := run("--sources", "3,1", "--nearest"), "vertex,distance,source\n1,0,1\n2,1,1\n3,0,3\n4,4,3\n"; got != want {
		t.Errorf("--nearest: got\n%swant\n%s", got, want)
	}
	if got, want := run("--sources", "3,1", "--nearest", "--reverse"), "vertex,distance,source\n1,0,1\n2,2,3\n3,0,3\n"; got != want {
		t.Errorf("--nearest --reverse: got\n%swant\n%s", got, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "v.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "vertex\n4\n3\n"; got != want {
		t.Errorf("vertices of a targets matrix: got %q, want %q", got, want)
	}
}

// TestPathCommandAndWithPaths checks pathctl path (the distance, then the
// ids), its errors, and the refusal of --with-paths for every pair above
// 10000 vertices with the output size.
func TestPathCommandAndWithPaths(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,1\n2,3,2\n1,3,5\n3,4,4\n")
	r := pathctl(t, nil, "path", in, "--from", "1", "--to", "4", "-q")
	if r.code != 0 || r.stdout != "7\n1\n2\n3\n4\n" {
		t.Errorf("path 1 -> 4: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = pathctl(t, nil, "path", in, "--from", "4", "--to", "1", "-q")
	if r.code != exitError || !strings.Contains(r.stderr, "no path from 4 to 1") {
		t.Errorf("path 4 -> 1: exit %d, stderr %q", r.code, r.stderr)
	}
	r = pathctl(t, nil, "path", in, "--from", "1", "--to", "9", "-q")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--to: invalid request: unknown target "9"`) {
		t.Errorf("path to an unknown id: exit %d, stderr %q", r.code, r.stderr)
	}
	var big strings.Builder
	big.WriteString("src,dst\n")
	for i := range 10000 {
		fmt.Fprintf(&big, "%d,%d\n", i, i+1)
	}
	large := writeFile(t, dir, "large.csv", big.String())
	out := filepath.Join(dir, "x.arrow")
	// 10001 rows of at least 44 bytes: 0.4 MiB (not "0.0 GiB"); an
	// infinite cutoff cuts nothing, so it is refused the same.
	for _, cut := range [][]string{nil, {"--cutoff", "inf"}, {"--cutoff", "+Inf"}} {
		args := append([]string{"run", large, "--sources", "0", "--with-paths", "-o", out}, cut...)
		r = pathctl(t, nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--with-paths: ") || !strings.Contains(r.stderr, "at least 0.4 MiB of output") {
			t.Errorf("--with-paths on 10001 vertices %v: exit %d, stderr %q", cut, r.code, r.stderr)
		}
		assertNoOutput(t, dir, "x.arrow")
	}
	r = pathctl(t, nil, "run", large, "--sources", "0", "--with-paths", "--targets", "5", "-q", "-o", out)
	if r.code != 0 {
		t.Errorf("--with-paths --targets on 10001 vertices: exit %d, stderr %q", r.code, r.stderr)
	}
}
