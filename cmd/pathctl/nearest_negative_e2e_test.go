package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNearestWithNegativeWeights: --nearest on negative weights runs with
// --algo bellman-ford and with auto (it said "use the bellman-ford
// algorithm" to both; issue 37, point 13): the distances and sources are
// the hand-computed ones, ties to the smaller source; a negative cycle
// exits 5 naming a vertex on it; dijkstra exits 5 naming bellman-ford.
func TestNearestWithNegativeWeights(t *testing.T) {
	dir := t.TempDir()
	// From 1: 2 at 4, 3 at 4-2 = 2, 4 at 3, 6 at 2 (tied with 5's 2).
	// From 5: 4 at -1, 6 at -1+3 = 2.
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,4\n2,3,-2\n1,3,3\n3,4,1\n5,4,-1\n4,6,3\n1,6,2\n")
	want := "vertex,distance,source\n1,0,1\n2,4,1\n3,2,1\n4,-1,5\n5,0,5\n6,2,1\n"
	for _, algo := range []string{"bellman-ford", "auto"} {
		out := filepath.Join(dir, algo+".csv")
		r := pathctl(t, nil, "run", in, "--nearest", "--sources", "5,1", "--algo", algo, "--engine", "cpu", "-o", out)
		if r.code != 0 {
			t.Fatalf("--algo %s: exit %d: %s", algo, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(out); string(got) != want {
			t.Errorf("--algo %s:\n%s\nwant\n%s", algo, got, want)
		}
	}
	cyclic := writeFile(t, dir, "c.csv", "src,dst,weight\n1,2,4\n2,3,-2\n3,2,-3\n5,4,1\n")
	r := pathctl(t, nil, "run", cyclic, "--nearest", "--sources", "1,5", "--algo", "bellman-ford", "-o", filepath.Join(dir, "cycle-out.csv"))
	oneErrorLine(t, r, exitNegative, "negative cycle through vertex")
	if !strings.Contains(r.stderr, "vertex 2 ") && !strings.Contains(r.stderr, "vertex 3 ") {
		t.Errorf("the cycle is 2 -> 3 -> 2: %q", r.stderr)
	}
	r = pathctl(t, nil, "run", in, "--nearest", "--sources", "1", "--algo", "dijkstra", "-o", filepath.Join(dir, "dijkstra-out.csv"))
	oneErrorLine(t, r, exitNegative, `"dijkstra"`, "bellman-ford")
	assertNoOutput(t, dir, "-out.csv")
}
