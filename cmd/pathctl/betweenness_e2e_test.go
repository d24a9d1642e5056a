package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBetweennessLayout: run --layout betweenness writes one row per
// vertex (the input's ids) with networkx's values: on the undirected
// 3-path a - b - c, normalized 0, 1, 0; unnormalized with endpoints 2, 3,
// 2; from the sources a and c with endpoints (networkx's k = 2 sample)
// 0.75, 1, 0.75; and --engine gpu runs on the CPU engine with a note.
func TestBetweennessLayout(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "path.csv", "src,dst\na,b\nb,c\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "vertex,betweenness\na,0\nb,1\nc,0\n"},
		{[]string{"--normalized=false", "--endpoints"}, "vertex,betweenness\na,2\nb,3\nc,2\n"},
		{[]string{"--endpoints", "--sources", "a,c"}, "vertex,betweenness\na,0.75\nb,1\nc,0.75\n"},
		{[]string{"--k", "3", "--seed", "7"}, "vertex,betweenness\na,0\nb,1\nc,0\n"},
	} {
		out := filepath.Join(dir, "out.csv")
		args := append([]string{"run", in, "--undirected", "--layout", "betweenness", "--engine", "cpu", "-o", out}, c.args...)
		r := pathctl(t, nil, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(out); string(got) != c.want {
			t.Errorf("%v:\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
	out := filepath.Join(dir, "gpu.csv")
	r := pathctl(t, nil, "run", in, "--layout", "betweenness", "--engine", "gpu", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "betweenness runs on the CPU engine") {
		t.Fatalf("--engine gpu: exit %d: %s", r.code, r.stderr)
	}
	// Directed a → b → c: one path through b, of 2 ordered pairs.
	if got, _ := os.ReadFile(out); string(got) != "vertex,betweenness\na,0\nb,0.5\nc,0\n" {
		t.Errorf("--engine gpu, directed:\n%s", got)
	}
}

// TestBetweennessRefusals: the betweenness flags with another layout, --k
// beside --sources or past the vertices, and zero weights are usage errors
// (exit 2); negative weights exit 5 saying betweenness needs non-negative
// weights; no output is left behind.
func TestBetweennessRefusals(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,1\n2,3,2\n")
	negative := writeFile(t, dir, "neg.csv", "src,dst,weight\n1,2,1\n2,3,-2\n")
	zero := writeFile(t, dir, "zero.csv", "src,dst,weight\n1,2,0\n2,3,2\n")
	out := filepath.Join(dir, "x-out.csv")
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{in, "--k", "2"}, exitUsage, "--k is an option of --layout betweenness, not pairs"},
		{[]string{in, "--layout", "stats", "--endpoints"}, exitUsage, "--endpoints is an option of --layout betweenness"},
		{[]string{in, "--layout", "betweenness", "--k", "2", "--sources", "1"}, exitUsage, "give --k or --sources, not both"},
		{[]string{in, "--layout", "betweenness", "--k", "0"}, exitUsage, "--k 0: want 1 or more"},
		{[]string{in, "--layout", "betweenness", "--k", "4"}, exitUsage, "k 4 is more than the graph's 3 vertices"},
		{[]string{in, "--layout", "betweenness", "--seed", "4"}, exitUsage, "--seed draws the --k sample"},
		{[]string{zero, "--layout", "betweenness"}, exitUsage, "edge 1 -> 2 weighs 0"},
		{[]string{negative, "--layout", "betweenness"}, exitNegative, "betweenness needs non-negative weights"},
	} {
		r := pathctl(t, nil, append(append([]string{"run"}, c.args...), "-o", out)...)
		oneErrorLine(t, r, c.code, c.says)
	}
	assertNoOutput(t, dir, "-out.csv")
	// Counting hops, the weights do not matter.
	if r := pathctl(t, nil, "run", zero, "--layout", "betweenness", "--unweighted", "-o", filepath.Join(dir, "hops.csv")); r.code != 0 {
		t.Errorf("--unweighted: exit %d: %s", r.code, r.stderr)
	}
}
