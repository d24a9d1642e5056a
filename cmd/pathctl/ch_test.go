package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// writeRandomEdges writes a random edge table with integer weights from 0
// (zero weights) and ids in two ranges without edges between them (two
// components at least), plus a vertex table with an isolated vertex; ids
// are some of the ids the edges name.
func writeRandomEdges(t *testing.T, rng *rand.Rand, dir string) (edges, vertices string, ids []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	n := 20 + rng.IntN(40)
	for part := range 2 {
		for range 2 * n {
			u, v := part*1000+rng.IntN(n), part*1000+rng.IntN(n)
			fmt.Fprintf(&b, "%d,%d,%d\n", u, v, rng.IntN(9))
			ids = append(ids, fmt.Sprint(u), fmt.Sprint(v))
		}
	}
	edges = writeFile(t, dir, "g.csv", b.String())
	vertices = writeFile(t, dir, "v.csv", "vertex\n5000\n")
	return edges, vertices, ids
}

// TestCHEveryLayoutEqualsDijkstra: --algo ch writes what --algo dijkstra
// writes, byte for byte, in every layout, for all sources and for narrow
// queries (targets, cutoff, reverse, k nearest), directed and undirected;
// with an index built by pathctl index too.
func TestCHEveryLayoutEqualsDijkstra(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 40))
	dir := t.TempDir()
	in, vertices, ids := writeRandomEdges(t, rng, dir)
	target := func() string { return ids[rng.IntN(len(ids))] }
	queries := [][]string{
		nil,
		{"--targets", target() + "," + target() + ",5000"},
		{"--cutoff", fmt.Sprint(rng.IntN(12))},
		{"--reverse"},
		{"--reverse", "--targets", target(), "--cutoff", "9"},
		{"--sources", target() + "," + target()},
	}
	for _, undirected := range []bool{false, true} {
		direction := []string{}
		if undirected {
			direction = []string{"--undirected"}
		}
		index := filepath.Join(dir, fmt.Sprintf("g%v.ch", undirected))
		if r := inProcess(t, append([]string{"index", in, "--vertices", vertices, "-o", index}, direction...)...); r.code != 0 ||
			!strings.Contains(r.stderr, "wrote the hierarchy of") {
			t.Fatalf("seed %d: index: exit %d: %s", seed, r.code, r.stderr)
		}
		for _, layout := range []string{"pairs", "matrix", "stats"} {
			for qi, q := range append(queries, []string{"--k-nearest", "3"}) {
				if layout != "pairs" && len(q) > 0 && q[0] == "--k-nearest" {
					continue
				}
				runs := map[string][]string{
					"dijkstra": {"--algo", "dijkstra"},
					"ch":       {"--algo", "ch"},
					"index":    {"--index", index}, // auto with an index runs ch
				}
				outputs := map[string]string{}
				for name, algo := range runs {
					out := filepath.Join(dir, fmt.Sprintf("%s-%v-%s-%d.csv", name, undirected, layout, qi))
					args := append([]string{"run", in, "--vertices", vertices, "--engine", "cpu", "--layout", layout, "-o", out, "--quiet"}, direction...)
					args = append(append(args, algo...), q...)
					if r := inProcess(t, args...); r.code != 0 {
						t.Fatalf("seed %d: %v: exit %d: %s", seed, args, r.code, r.stderr)
					}
					body, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					outputs[name] = string(body)
				}
				for _, name := range []string{"ch", "index"} {
					if outputs[name] != outputs["dijkstra"] {
						t.Fatalf("seed %d: undirected %v, layout %s, %v: %s writes\n%s\ndijkstra writes\n%s",
							seed, undirected, layout, q, name, outputs[name], outputs["dijkstra"])
					}
				}
			}
		}
	}
}

// TestCHIndexRefusals: an index of other edges or of the other direction
// is exit 2 naming it, as is a missing one; a corrupt one exit 3; --index beside another
// algorithm, ch on the GPU engine, ch with predecessors or paths, and
// float weights whose sums round each exit 2 with one line.
func TestCHIndexRefusals(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n3,1,1\n")
	other := writeFile(t, dir, "h.csv", "src,dst,weight\n1,2,3\n2,3,5\n3,1,1\n")
	floats := writeFile(t, dir, "f.csv", "src,dst,weight\n1,2,0.1\n2,3,3.14159\n")
	index := filepath.Join(dir, "g.ch")
	if r := inProcess(t, "index", in, "-o", index, "--quiet"); r.code != 0 || r.stderr != "" {
		t.Fatalf("index: exit %d: %q", r.code, r.stderr)
	}
	corrupt := filepath.Join(dir, "bad.ch")
	body, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corrupt, body[:len(body)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", other, "--index", index}, 2, "--index " + index + " was built for another graph or direction"},
		{[]string{"run", in, "--undirected", "--index", index}, 2, "was built for another graph or direction"},
		{[]string{"run", in, "--index", corrupt}, 3, "corrupt index"},
		{[]string{"run", in, "--index", filepath.Join(dir, "missing.ch")}, 2, "--index: open " + filepath.Join(dir, "missing.ch")},
		{[]string{"run", in, "--index", index, "--algo", "dijkstra"}, 2, "--index serves --algo ch (or auto), not --algo dijkstra"},
		{[]string{"run", in, "--algo", "ch", "--with-predecessors"}, 2, "the algorithm ch keeps no predecessors"},
		{[]string{"run", in, "--algo", "ch", "--with-paths"}, 2, "the algorithm ch gives paths to --targets only"},
		{[]string{"run", floats, "--algo", "ch", "--engine", "cpu"}, 2, "use --algo dijkstra"},
		{[]string{"index", floats, "-o", filepath.Join(dir, "f.ch")}, 2, "--algo dijkstra"},
	} {
		args := c.args
		if args[0] == "run" {
			args = append(args, "-o", out)
		}
		r := inProcess(t, args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", args, r.code, r.stderr, c.code, c.want)
		}
	}
	for _, p := range []string{out, filepath.Join(dir, "f.ch")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
}

// TestCHVerify: pathctl verify takes --algo ch.
func TestCHVerify(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 41))
	in, _, _ := writeRandomEdges(t, rng, t.TempDir())
	for _, layout := range []string{"pairs", "stats"} {
		r := inProcess(t, "verify", in, "--algo", "ch", "--engine", "cpu", "--layout", layout)
		if r.code != 0 || !strings.Contains(r.stdout, "ok:") || !strings.Contains(r.stdout, "algorithm ch (contraction hierarchy") {
			t.Fatalf("seed %d: verify %s: exit %d: %s%s", seed, layout, r.code, r.stdout, r.stderr)
		}
	}
}

// TestCHPath: pathctl path --algo ch (built for the run, or read with
// --index, forwards and --reverse) prints dijkstra's distance and a path
// from --from to --to whose every step is an edge of the input and whose
// weights add up to the distance.
func TestCHPath(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 41))
	dir := t.TempDir()
	in, _, ids := writeRandomEdges(t, rng, dir)
	body, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	weight := map[[2]string]int{} // the least weight of each edge
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n")[1:] {
		f := strings.Split(line, ",")
		var w int
		fmt.Sscan(f[2], &w)
		if old, ok := weight[[2]string{f[0], f[1]}]; !ok || w < old {
			weight[[2]string{f[0], f[1]}] = w
		}
	}
	index := filepath.Join(dir, "g.ch")
	if r := inProcess(t, "index", in, "-o", index, "--quiet"); r.code != 0 {
		t.Fatalf("index: exit %d: %q", r.code, r.stderr)
	}
	for trial := range 12 {
		from, to := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
		extra := [][]string{{"--algo", "ch"}, {"--index", index}, {"--index", index, "--reverse"}}[trial%3]
		reverse := trial%3 == 2
		args := append([]string{"path", in, "--from", from, "--to", to}, extra...)
		oracle := []string{"path", in, "--from", from, "--to", to, "--algo", "dijkstra"}
		if reverse {
			oracle = append(oracle, "--reverse")
		}
		want := inProcess(t, oracle...)
		got := inProcess(t, args...)
		if got.code != want.code {
			t.Fatalf("seed %d %v: exit %d (%q), dijkstra %d (%q)", seed, args, got.code, got.stderr, want.code, want.stderr)
		}
		if got.code != 0 {
			continue
		}
		lines := strings.Fields(got.stdout)
		if lines[0] != strings.Fields(want.stdout)[0] {
			t.Fatalf("seed %d %v: distance %s, dijkstra %s", seed, args, lines[0], strings.Fields(want.stdout)[0])
		}
		path := lines[1:]
		if path[0] != from || path[len(path)-1] != to {
			t.Fatalf("seed %d %v: path %v", seed, args, path)
		}
		sum := 0
		for i := 0; i+1 < len(path); i++ {
			u, v := path[i], path[i+1]
			if reverse {
				u, v = v, u
			}
			w, ok := weight[[2]string{u, v}]
			if !ok {
				t.Fatalf("seed %d %v: path %v steps along %s→%s, no edge", seed, args, path, u, v)
			}
			sum += w
		}
		if fmt.Sprint(sum) != lines[0] {
			t.Fatalf("seed %d %v: path %v weighs %d, distance %s", seed, args, path, sum, lines[0])
		}
	}
}
