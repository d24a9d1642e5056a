package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenRoad: gen road writes the road-like grid of its seed (the same
// bytes twice, other bytes for another seed), with fewer arcs when
// --oneway is set, every one of them reached by a CPU run from vertex 0;
// bad flags exit 2 and leave no file.
func TestGenRoad(t *testing.T) {
	dir := t.TempDir()
	gen := func(name string, args ...string) (string, result) {
		out := filepath.Join(dir, name)
		return out, pathctl(t, nil, append([]string{"gen", "road", "--rows", "12", "--cols", "10", "-o", out}, args...)...)
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, ra := gen("a.csv", "--seed", "4", "--oneway", "0.5")
	b, rb := gen("b.csv", "--seed", "4", "--oneway", "0.5")
	c, rc := gen("c.csv", "--seed", "5", "--oneway", "0.5")
	full, rf := gen("full.csv", "--seed", "4")
	for _, r := range []result{ra, rb, rc, rf} {
		if r.code != 0 {
			t.Fatalf("gen road: exit %d: %s", r.code, r.stderr)
		}
	}
	if read(a) != read(b) || read(a) == read(c) {
		t.Error("gen road: seed 4 twice gave other files, or seed 5 the same")
	}
	blocks := 12*9 + 11*10
	if lines := strings.Count(read(full), "\n") - 1; lines != 2*blocks {
		t.Errorf("--oneway 0: %d arcs, want %d", lines, 2*blocks)
	}
	if lines := strings.Count(read(a), "\n") - 1; lines >= 2*blocks || lines <= blocks {
		t.Errorf("--oneway 0.5: %d arcs, want between %d and %d", lines, blocks, 2*blocks)
	}
	if !strings.Contains(ra.stderr, "wrote 120 vertices") {
		t.Errorf("gen road: stderr %q does not say 120 vertices", ra.stderr)
	}
	// Every vertex reached from 0 with one-way streets: 120 rows of stats' reachable 119.
	stats := filepath.Join(dir, "stats.csv")
	if r := pathctl(t, nil, "run", a, "--engine", "cpu", "--layout", "stats", "--sources", "0", "-o", stats, "--quiet"); r.code != 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	if rows := strings.Split(read(stats), "\n"); len(rows) < 2 || !strings.HasPrefix(rows[1], "0,119,") {
		t.Errorf("stats from vertex 0: %q, want 119 reachable", rows[:min(2, len(rows))])
	}
	for _, bad := range [][]string{{"--oneway", "1.5"}, {"--oneway", "-0.1"}, {"--weights", "1:9"}, {"--rows", "0"}} {
		out, r := gen("bad.csv", bad...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("gen road %v: exit %d, stderr %q; want exit 2 and one line", bad, r.code, r.stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("gen road %v left %s", bad, out)
		}
	}
}
