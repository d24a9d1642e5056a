package hierarchy

import (
	"math"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestNearestAgainstDijkstra checks Nearest on every property graph (ties,
// zero weights, one-way streets, many components) against the serial
// Dijkstra's rows: each vertex's least distance over the sources, and
// among equal ones the smallest source id; repeated sources, one source
// and none included.
func TestNearestAgainstDijkstra(t *testing.T) {
	rng := testgraphs.Rand(t, 44)
	for _, tg := range drawGraphs(t, rng) {
		h, err := Build(tg.g, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		n := tg.g.NumVertices
		if n == 0 {
			continue
		}
		want := oracle(t, tg.g)
		for _, count := range []int{0, 1, 1 + rng.IntN(n), 2 * n} {
			sources := make([]graph.VertexID, count)
			for i := range sources {
				sources[i] = graph.VertexID(rng.IntN(n))
			}
			dist := make([]int64, n)
			from := make([]graph.VertexID, n)
			if err := h.Nearest(sources, dist, from); err != nil {
				t.Fatalf("%s: %v", tg.name, err)
			}
			for v := range n {
				wd, ws := math.Inf(1), graph.VertexID(-1)
				for _, s := range sources {
					if d := want[s][v]; d < wd || (d == wd && !math.IsInf(d, 1) && s < ws) {
						wd, ws = d, s
					}
				}
				if got := h.Float(dist[v]); got != wd || from[v] != ws {
					t.Fatalf("%s, %d sources: vertex %d nearest %v from %d, Dijkstra %v from %d", tg.name, count, v, got, from[v], wd, ws)
				}
			}
		}
	}
	h, err := Build(drawGraphs(t, rng)[0].g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Nearest([]graph.VertexID{graph.VertexID(h.n)}, make([]int64, h.n), make([]graph.VertexID, h.n)); err == nil {
		t.Error("a source out of range: no error")
	}
	if err := h.Nearest(nil, make([]int64, 1), make([]graph.VertexID, h.n)); err == nil {
		t.Error("a short distance buffer: no error")
	}
}
