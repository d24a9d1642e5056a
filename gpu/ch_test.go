package gpu

import (
	"context"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestCHAgainstOracles runs the algorithm ch on the device over
// hierarchies of street grids with one-way streets and zero weights, and
// of random graphs (unreachable pairs, zero weights, repeated sources), by
// Run in blocks,
// by blocks started ahead and by RunStats, against the serial Dijkstra
// and against a plain runner's stats; and checks what PrepareCH refuses.
func TestCHAgainstOracles(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	ctx := context.Background()
	statsThreads := chStatsThreads
	defer func() { chStatsThreads = statsThreads }()
	random, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 300, M: 500, Kind: testgraphs.Int, MinWeight: 0, MaxWeight: 30})
	for name, edges := range map[string]*graph.Edges{
		"streets": testgraphs.RoadGrid(rng, 23, 31, 0.3, 0.1, 12),
		"random":  random,
	} {
		g, err := graph.Build(edges, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h, err := hierarchy.Build(g, hierarchy.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := g.NumVertices
		sources := make([]graph.VertexID, 70)
		for i := range sources {
			sources[i] = graph.VertexID(rng.IntN(n))
		}
		want := oracle(t, g, sources, ref.Dijkstra[int32])
		r, err := e.PrepareCH(ctx, g, graph.Request{Algorithm: graph.CH}, h)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkRows(t, g, runBlocks(t, r, n, sources, 29, false), want, g)
		checkRows(t, g, startAhead(t, r, n, sources, []int{17, 1, 40}, 1, false), want, g)
		plain, err := e.Prepare(ctx, g, graph.Request{Algorithm: graph.Dijkstra})
		if err != nil {
			t.Fatal(err)
		}
		wantStats, err := plain.RunStats(ctx, sources)
		if err != nil {
			t.Fatal(err)
		}
		// The stats are reduced from the table in chunks of positions: one
		// position a chunk (the default on a graph this small), chunks of
		// about 40 positions, and one chunk.
		for _, threads := range []int{statsThreads, len(sources) * n / 40, 1} {
			chStatsThreads = threads
			st, err := r.RunStats(ctx, sources)
			if err != nil {
				t.Fatal(err)
			}
			for i := range sources {
				if st.Reachable[i] != wantStats.Reachable[i] || st.Eccentricity[i] != wantStats.Eccentricity[i] || st.SumInt[i] != wantStats.SumInt[i] ||
					!near(st.Harmonic[i], wantStats.Harmonic[i], max(1, wantStats.Harmonic[i])) {
					t.Fatalf("%s, %d threads: stats of source %d: %d %v %d %v, dijkstra %d %v %d %v", name, threads, sources[i],
						st.Reachable[i], st.Eccentricity[i], st.SumInt[i], st.Harmonic[i],
						wantStats.Reachable[i], wantStats.Eccentricity[i], wantStats.SumInt[i], wantStats.Harmonic[i])
				}
			}
		}
		for _, x := range []*Runner{r, plain} {
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	g, _ := graph.Build(testgraphs.RoadGrid(rng, 4, 4, 0, 0, 3), graph.BuildOptions{})
	h, _ := hierarchy.Build(g, hierarchy.Options{})
	f, _ := graph.Build(testgraphs.RoadGrid(rng, 4, 4, 0, 0, 3), graph.BuildOptions{DistType: graph.DistInt64})
	for _, c := range []struct {
		g    *graph.CSR
		req  graph.Request
		want string
	}{
		{g, graph.Request{Algorithm: graph.Dijkstra}, "PrepareCH of the algorithm dijkstra"},
		{g, graph.Request{Algorithm: graph.CH, WithPredecessors: true}, "no predecessors"},
		{f, graph.Request{Algorithm: graph.CH}, "int32 distances only"},
	} {
		if _, err := e.PrepareCH(ctx, c.g, c.req, h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PrepareCH(%+v): err = %v, want %q", c.req, err, c.want)
		}
	}
	if _, err := e.Prepare(ctx, g, graph.Request{Algorithm: graph.CH}); err == nil || !strings.Contains(err.Error(), "PrepareCH") {
		t.Errorf("Prepare of ch: err = %v", err)
	}
}
