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
		{[]string{"--targets", "2,99"}, `--targets: "99" is not a vertex of the graph`},
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
// ids), its errors, and the refusal of --with-paths whose output would
// exceed --max-output, with the rows and the size.
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
	if r.code != exitUsage || !strings.Contains(r.stderr, `--to: "9" is not a vertex of the graph`) {
		t.Errorf("path to an unknown id: exit %d, stderr %q", r.code, r.stderr)
	}
	// A chain of 12578 vertices: one source's paths (0.5 MiB) are given
	// whatever the cutoff; every source's (6.5 GiB) are refused with the
	// rows and the size, a cutoff narrowing nothing, until --max-output
	// allows them.
	var big strings.Builder
	big.WriteString("src,dst\n")
	for i := range 12577 {
		fmt.Fprintf(&big, "%d,%d\n", i, i+1)
	}
	large := writeFile(t, dir, "large.csv", big.String())
	out := filepath.Join(dir, "x.arrow")
	for _, cut := range [][]string{nil, {"--cutoff", "inf"}, {"--cutoff", "3"}} {
		args := append([]string{"run", large, "--sources", "0", "--with-paths", "-q", "-o", out}, cut...)
		if r = pathctl(t, nil, args...); r.code != 0 {
			t.Errorf("--with-paths of one source on 12578 vertices %v: exit %d, stderr %q", cut, r.code, r.stderr)
		}
		os.Remove(out)
		args = append([]string{"run", large, "--with-paths", "-o", out}, cut...)
		r = pathctl(t, nil, args...)
		want := "pathctl: --with-paths: paths too large: 12578 sources × 12578 vertices: 158206084 rows, at least 6.5 GiB of output, above the limit of 1.0 GiB; ask for fewer sources, some targets or the k nearest, or raise --max-output\n"
		if r.code != exitUsage || r.stderr != want {
			t.Errorf("--with-paths on 12578 vertices %v: exit %d, stderr %q, want %q", cut, r.code, r.stderr, want)
		}
		assertNoOutput(t, dir, "x.arrow")
	}
	r = pathctl(t, nil, "run", large, "--sources", "0,1", "--with-paths", "--max-output", "1000", "-o", out)
	if r.code != exitUsage || !strings.Contains(r.stderr, "at least 1.1 MiB of output, above the limit of 1000 bytes;") {
		t.Errorf("--with-paths --max-output 1000: exit %d, stderr %q", r.code, r.stderr)
	}
	assertNoOutput(t, dir, "x.arrow")
	for _, bad := range []string{"0", "-1GiB", "lots"} {
		r = pathctl(t, nil, "run", large, "--sources", "0", "--with-paths", "--max-output", bad, "-o", out)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--max-output") {
			t.Errorf("--max-output %s: exit %d, stderr %q", bad, r.code, r.stderr)
		}
	}
	r = pathctl(t, nil, "run", large, "--sources", "0", "--with-paths", "--targets", "5", "-q", "-o", out)
	if r.code != 0 {
		t.Errorf("--with-paths --targets on 12578 vertices: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestWithPathsCSV writes --with-paths to csv: the path is one column of
// the ids joined by ';' (refused as a list column before).
func TestWithPathsCSV(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,1\n2,3,2\n1,3,5\n3,4,4\n")
	out := filepath.Join(dir, "paths.csv")
	r := pathctl(t, nil, "run", in, "--sources", "1", "--with-paths", "-q", "-o", out)
	if r.code != 0 {
		t.Fatalf("--with-paths -o paths.csv: exit %d, stderr %q", r.code, r.stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "source,target,distance,path\n1,1,0,1\n1,2,1,1;2\n1,3,3,1;2;3\n1,4,7,1;2;3;4\n"; string(got) != want {
		t.Errorf("--with-paths as csv:\n got %q\nwant %q", got, want)
	}
}
