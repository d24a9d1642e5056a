package gpu

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestBetweennessAgainstBrandes runs RunBetweenness and RunEdgeBetweenness
// (per arc) on the device over
// random graphs (components, isolated vertices, repeated arcs, weights
// 1..3 with many ties, wide weights, int64 and float64 distances, hop
// counts of weighted graphs), street grids with one-way streets, a star
// and hubs of hundreds of arcs, directed and undirected, with and without endpoints, from every
// vertex and from repeated sources in blocks of several sizes, with the
// device's slots and with 3 slots (each running many sources in turn,
// kernels/brandes.cu), against the serial Brandes of internal/ref.
func TestBetweennessAgainstBrandes(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	ctx := context.Background()
	t.Cleanup(func() { brandesSlotCap = 0 })
	type graphCase struct {
		name  string
		edges *graph.Edges
		opt   graph.BuildOptions
		hops  bool
	}
	random := func(n, m, lo, hi int, kind testgraphs.WeightKind) *graph.Edges {
		edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: m, Kind: kind, MinWeight: lo, MaxWeight: hi, Dyadic: true, Duplicates: 5})
		return edges
	}
	star := &graph.Edges{NumVertices: 200}
	for v := 1; v < 200; v++ {
		star.Src, star.Dst = append(star.Src, 0), append(star.Dst, graph.VertexID(v))
	}
	// hubs: vertex 0 reaches 300 hubs, each with 600 arcs of weight 1..3
	// into 1,000 leaves: one level with more big vertices than a block
	// lists (brandes.cu's BigMax), every hub's arcs past BigWords words.
	hubs := &graph.Edges{NumVertices: 1301}
	for h := 1; h <= 300; h++ {
		hubs.Src, hubs.Dst, hubs.IntWeights = append(hubs.Src, 0), append(hubs.Dst, graph.VertexID(h)), append(hubs.IntWeights, 1)
		for range 600 {
			hubs.Src, hubs.Dst = append(hubs.Src, graph.VertexID(h)), append(hubs.Dst, graph.VertexID(301+rng.IntN(1000)))
			hubs.IntWeights = append(hubs.IntWeights, int64(1+rng.IntN(3)))
		}
	}
	cases := []graphCase{
		{"hubs", hubs, graph.BuildOptions{}, false},
		{"hubs-undirected-hops", hubs, graph.BuildOptions{Undirected: true}, true},
		{"ties", random(300, 900, 1, 3, testgraphs.Int), graph.BuildOptions{}, false},
		{"ties-undirected", random(277, 700, 1, 3, testgraphs.Int), graph.BuildOptions{Undirected: true}, false},
		{"sparse-components", random(400, 300, 1, 9, testgraphs.Int), graph.BuildOptions{}, false},
		{"wide-int64", random(150, 600, 1, 1<<20, testgraphs.Int), graph.BuildOptions{DistType: graph.DistInt64}, false},
		{"float64", random(200, 700, 1, 4, testgraphs.Float64), graph.BuildOptions{Undirected: true}, false},
		{"hops-of-weights", random(300, 1000, 1, 50, testgraphs.Int), graph.BuildOptions{}, true},
		{"unweighted", random(333, 1200, 1, 1, testgraphs.Unweighted), graph.BuildOptions{Undirected: true}, false},
		{"streets", testgraphs.RoadGrid(rng, 17, 23, 0.3, 0, 12), graph.BuildOptions{}, false},
		{"star", star, graph.BuildOptions{Undirected: true}, false},
	}
	for _, c := range cases {
		g, err := graph.Build(c.edges, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		req := graph.Request{Algorithm: Batched}
		if c.hops || !g.Weighted {
			req.Algorithm = graph.BFS
		}
		r, err := e.Prepare(ctx, g, req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		all := make([]graph.VertexID, g.NumVertices)
		for i := range all {
			all[i] = graph.VertexID(i)
		}
		some := make([]graph.VertexID, 90)
		for i := range some {
			some[i] = graph.VertexID(rng.IntN(g.NumVertices))
		}
		some[0] = 0
		runs := [][]graph.VertexID{all, some}
		if g.NumVertices > 1000 {
			runs = runs[1:] // the oracle scans every vertex a step
		}
		check := func(sources []graph.VertexID, endpoints bool) {
			want, err := ref.Brandes(g, sources, endpoints, c.hops)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got, err := RunBetweenness(ctx, r, sources, endpoints)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			checkBetweenness(t, fmt.Sprintf("%s, %d slots at most", c.name, brandesSlotCap), got, want)
			again, err := RunBetweenness(ctx, r, sources, endpoints)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for v := range got { // the slots' sums are added in one order
				if math.Float64bits(again[v]) != math.Float64bits(got[v]) {
					t.Fatalf("%s: vertex %d: %v, then %v in the same run again", c.name, v, got[v], again[v])
				}
			}
		}
		checkEdges := func(sources []graph.VertexID) {
			want, err := ref.EdgeBrandes(g, sources, c.hops)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got, err := RunEdgeBetweenness(ctx, r, sources)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			checkBetweenness(t, fmt.Sprintf("%s edges, %d slots at most", c.name, brandesSlotCap), got, want)
		}
		brandesSlotCap = 3
		check(runs[0], true)
		checkEdges(runs[0])
		brandesSlotCap = 0
		for _, sources := range runs {
			for _, endpoints := range []bool{false, true} {
				check(sources, endpoints)
			}
			checkEdges(sources)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkBetweenness compares sums within a relative 1e-9.
func checkBetweenness(t *testing.T, name string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d sums, want %d", name, len(got), len(want))
	}
	for v := range want {
		if d := math.Abs(got[v] - want[v]); d > 1e-9*math.Max(1, math.Abs(want[v])) {
			t.Fatalf("%s: vertex or arc %d: %v, want %v", name, v, got[v], want[v])
		}
	}
}

// TestBetweennessRefused checks what RunBetweenness refuses: float32
// distances and narrowed runners.
func TestBetweennessRefused(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	ctx := context.Background()
	edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 50, M: 200, Kind: testgraphs.Float32, MinWeight: 1, MaxWeight: 5})
	g, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Prepare(ctx, g, graph.Request{Algorithm: Batched})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := RunBetweenness(ctx, r, []graph.VertexID{0}, false); err == nil || !strings.Contains(err.Error(), "float32") {
		t.Fatalf("float32 distances: %v, want a refusal naming float32", err)
	}
	if _, err := RunEdgeBetweenness(ctx, r, []graph.VertexID{0}); err == nil || !strings.Contains(err.Error(), "float32") {
		t.Fatalf("edges of float32 distances: %v, want a refusal naming float32", err)
	}
	ints, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 50, M: 200, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 5})
	gi, err := graph.Build(ints, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nr, err := e.Prepare(ctx, gi, graph.Request{Algorithm: graph.Dijkstra, Targets: []graph.VertexID{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer nr.Close()
	if _, err := RunBetweenness(ctx, nr, []graph.VertexID{0}, false); err == nil || !strings.Contains(err.Error(), "narrowed") {
		t.Fatalf("a narrowed runner: %v, want a refusal", err)
	}
}
