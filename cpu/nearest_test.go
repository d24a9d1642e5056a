package cpu

import (
	"context"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestNearestAgainstDijkstra checks Nearest on small integer weights with
// many ties, wide ones, int64 distances, unweighted graphs, zero weights
// and floats, directed and undirected, with and without a cutoff, against
// one serial Dijkstra per source: every vertex's nearest distance, ties
// to the smaller source; the same through a contraction hierarchy (the
// algorithm ch).
func TestNearestAgainstDijkstra(t *testing.T) {
	rng := testgraphs.Rand(t, 0x4ea7)
	ctx := context.Background()
	type shape struct {
		name   string
		kind   testgraphs.WeightKind
		lo, hi int
		opt    graph.BuildOptions
	}
	shapes := []shape{
		{"ties", testgraphs.Int, 1, 3, graph.BuildOptions{}},
		{"wide", testgraphs.Int, 1, maxDialWeight, graph.BuildOptions{Undirected: true}},
		{"int64", testgraphs.Int, 1, 9, graph.BuildOptions{DistType: graph.DistInt64}},
		{"unweighted", testgraphs.Unweighted, 1, 1, graph.BuildOptions{Undirected: true}},
		{"zero", testgraphs.Int, 0, 3, graph.BuildOptions{}},
		{"heavy", testgraphs.Int, 1, 3 * maxDialWeight, graph.BuildOptions{}},
		{"float", testgraphs.Float64, 1, 4, graph.BuildOptions{}},
	}
	for _, sh := range shapes {
		for trial := range 6 {
			n := 2 + rng.IntN(200)
			edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: rng.IntN(3 * n), Kind: sh.kind, MinWeight: sh.lo, MaxWeight: sh.hi, Dyadic: true})
			g, err := graph.Build(edges, sh.opt)
			if err != nil {
				t.Fatal(err)
			}
			sources := make([]graph.VertexID, 1+rng.IntN(12))
			for i := range sources {
				sources[i] = graph.VertexID(rng.IntN(n))
			}
			req := graph.Request{}
			if trial%2 == 1 {
				req.HasCutoff, req.Cutoff = true, float64(sh.hi*(1+rng.IntN(3)))
			}
			wantDist, wantFrom := nearestByDijkstra(t, g, sources, req)
			for _, algo := range []graph.Algorithm{graph.Auto, graph.CH} {
				req.Algorithm = algo
				got, err := New().Nearest(ctx, g, sources, req)
				if err != nil {
					t.Fatal(err)
				}
				for v := range n {
					d := distAt(got.Dist, v)
					if got.Source[v] != wantFrom[v] || (wantFrom[v] >= 0 && d != wantDist[v]) {
						t.Fatalf("%s trial %d, %s: vertex %d: (%v, %d), want (%v, %d)", sh.name, trial, algo, v, d, got.Source[v], wantDist[v], wantFrom[v])
					}
				}
			}
		}
	}
}

// nearestByDijkstra is the nearest source of every vertex (-1 where none
// reaches it within the cutoff) from one ref.Dijkstra per source.
func nearestByDijkstra(t *testing.T, g *graph.CSR, sources []graph.VertexID, req graph.Request) ([]float64, []graph.VertexID) {
	t.Helper()
	n := g.NumVertices
	dist, from := make([]float64, n), make([]graph.VertexID, n)
	for v := range from {
		from[v] = -1
	}
	for _, s := range sources {
		var row []float64
		switch g.Type {
		case graph.DistInt32:
			d, err := ref.Dijkstra[int32](g, s)
			if err != nil {
				t.Fatal(err)
			}
			row = widen(d, graph.Infinity[int32]())
		case graph.DistInt64:
			d, err := ref.Dijkstra[int64](g, s)
			if err != nil {
				t.Fatal(err)
			}
			row = widen(d, graph.Infinity[int64]())
		default:
			d, err := ref.Dijkstra[float64](g, s)
			if err != nil {
				t.Fatal(err)
			}
			row = widen(d, graph.Infinity[float64]())
		}
		for v, d := range row {
			if d < 0 || (req.HasCutoff && d > req.Cutoff) {
				continue
			}
			if from[v] < 0 || d < dist[v] || (d == dist[v] && s < from[v]) {
				dist[v], from[v] = d, s
			}
		}
	}
	return dist, from
}

// widen is row as float64, -1 for unreached.
func widen[D graph.Number](row []D, inf D) []float64 {
	out := make([]float64, len(row))
	for v, d := range row {
		out[v] = float64(d)
		if d == inf {
			out[v] = -1
		}
	}
	return out
}

// distAt is the distance of v in a Nearest's Dist, as float64.
func distAt(dist any, v int) float64 {
	switch d := dist.(type) {
	case []int32:
		return float64(d[v])
	case []int64:
		return float64(d[v])
	case []float32:
		return float64(d[v])
	}
	return dist.([]float64)[v]
}
