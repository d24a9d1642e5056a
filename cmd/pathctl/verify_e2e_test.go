package main

import (
	"strings"
	"testing"
)

// TestVerifyStatsLayout: verify --layout stats runs the stats layout as run
// does and checks each sampled source's row against the oracle, for every
// kind of oracle (hop counts, Dijkstra, Bellman-Ford with a negative
// weight); layouts it cannot check are usage errors.
func TestVerifyStatsLayout(t *testing.T) {
	dir := t.TempDir()
	weighted := writeFile(t, dir, "w.csv", "src,dst,weight\n1,2,3\n2,3,4\n3,1,1\n4,1,2\n5,6,1\n")
	negative := writeFile(t, dir, "n.csv", "src,dst,weight\n1,2,3\n2,3,-2\n1,3,4\n4,1,2\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"dijkstra", []string{"verify", weighted, "--layout", "stats", "--engine", "cpu"}, "stats values from 6 sources"},
		{"hops", []string{"verify", weighted, "--layout", "stats", "--engine", "cpu", "--unweighted", "--algo", "bfs"}, "stats values from 6 sources"},
		{"bellman-ford", []string{"verify", negative, "--layout", "stats", "--engine", "cpu", "--algo", "bellman-ford", "--sources", "1,4"}, "stats values from 2 sources"},
		{"sampled", []string{"verify", weighted, "--layout", "stats", "--samples", "3", "--seed", "7"}, "stats values from 3 sources"},
		{"pairs", []string{"verify", weighted, "--layout", "pairs"}, "distances from 6 sources"},
	} {
		r := pathctl(t, nil, tc.args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "ok: ") || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want ok with %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	for _, args := range [][]string{
		{"verify", weighted, "--layout", "matrix"},
		{"verify", weighted, "--layout", "table"},
		{"verify", weighted, "--layout", "stats", "--with-predecessors"},
	} {
		r := pathctl(t, nil, args...)
		if r.code != 2 || r.stdout != "" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line", args, r.code, r.stdout, r.stderr)
		}
	}
}
