package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNegativeSelfLoopIsANegativeCycle: 1,2,3 beside 2,2,-1 gave 1 -> 2 =
// 3 with exit status 0 (the loop was dropped like a non-negative one). A
// negative self-loop is a negative cycle: bellman-ford and auto exit 5
// naming its vertex, directed, undirected and with --nearest; dijkstra,
// delta and edge exit 5 naming the loop as a negative weight and
// bellman-ford; bfs counts hops as before. Sources that reach no loop get
// their distances, and a non-negative self-loop stays ignored.
func TestNegativeSelfLoopIsANegativeCycle(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,2,-1\n3,4,2\n")
	out := func(name string) string { return filepath.Join(dir, name+"-out.csv") }
	for _, undirected := range []bool{false, true} {
		extra := []string{}
		if undirected {
			extra = []string{"--undirected"}
		}
		for _, algo := range []string{"bellman-ford", "auto"} {
			r := pathctl(t, nil, append([]string{"run", in, "--algo", algo, "--engine", "cpu", "-o", out(algo)}, extra...)...)
			oneErrorLine(t, r, exitNegative, "g.csv: negative cycle through vertex 2 ", "(reachable from source 1)")
		}
		for _, algo := range []string{"dijkstra", "delta", "edge"} {
			r := pathctl(t, nil, append([]string{"run", in, "--algo", algo, "--engine", "cpu", "-o", out(algo)}, extra...)...)
			oneErrorLine(t, r, exitNegative, "negative weight -1 on edge 2 -> 2", `"`+algo+`"`, "bellman-ford")
		}
	}
	r := pathctl(t, nil, "run", in, "--nearest", "--sources", "3,1", "--algo", "bellman-ford", "--engine", "cpu", "-o", out("nearest"))
	oneErrorLine(t, r, exitNegative, "negative cycle through vertex 2 ", "(reachable from source 1)")
	r = pathctl(t, nil, "run", in, "--reverse", "--sources", "4,2", "--algo", "bellman-ford", "--engine", "cpu", "-o", out("reverse"))
	oneErrorLine(t, r, exitNegative, "negative cycle through vertex 2 ", "(reachable from source 2)")
	assertNoOutput(t, dir, "-out.csv")

	check := func(name string, want map[string]string, args ...string) {
		t.Helper()
		path := filepath.Join(dir, name+".csv")
		r := pathctl(t, nil, append(append([]string{"run", "--engine", "cpu", "-o", path}, args...), in)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		_, got := readCSVPairs(t, path)
		if len(got) != len(want) {
			t.Errorf("%s: pairs %v, want %v", name, got, want)
		}
		for pair, d := range want {
			if g := got[pair]; len(g) == 0 || g[0] != d {
				t.Errorf("%s: %s = %v, want %s", name, pair, g, d)
			}
		}
	}
	// Source 3 reaches no loop; reversed, source 1 reaches none either.
	check("unreached", map[string]string{"3>3": "0", "3>4": "2"}, "--algo", "bellman-ford", "--sources", "3")
	check("reverse-unreached", map[string]string{"1>1": "0"}, "--algo", "bellman-ford", "--reverse", "--sources", "1")
	check("bfs", map[string]string{"1>1": "0", "1>2": "1", "2>2": "0", "3>3": "0", "3>4": "1", "4>4": "0"}, "--algo", "bfs")

	loops := writeFile(t, dir, "loops.csv", "src,dst,weight\n1,2,3\n2,2,0\n2,2,5\n1,1,2\n")
	for _, algo := range []string{"dijkstra", "bellman-ford"} {
		path := filepath.Join(dir, "loops-"+algo+".csv")
		r := pathctl(t, nil, "run", loops, "--algo", algo, "--engine", "cpu", "-o", path)
		if r.code != 0 {
			t.Fatalf("non-negative loops, %s: exit %d: %s", algo, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(path); string(got) != "source,target,distance\n1,1,0\n1,2,3\n2,2,0\n" {
			t.Errorf("non-negative loops, %s:\n%s", algo, got)
		}
	}
}
