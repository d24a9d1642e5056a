package cpu

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestCHAgainstDijkstra: ch on random graphs of every shape (directed and
// undirected, zero weights, sparse draws with several components, dyadic
// float weights whose sums are exact) against ref.Dijkstra, for all
// sources, for some targets' columns and under a cutoff.
func TestCHAgainstDijkstra(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 40))
	for _, sh := range shapes() {
		for trial := range 6 {
			n := 1 + rng.IntN(120)
			e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{
				N: n, M: rng.IntN(3*n + 1), Kind: sh.kind, MinWeight: 0, MaxWeight: rng.IntN(20),
				Dyadic: true, Duplicates: rng.IntN(n + 1),
			})
			g, err := graph.Build(e, graph.BuildOptions{Undirected: sh.undirected, DistType: sh.distType})
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			sources := allSources(n)
			want := oracleRows(t, g, sources, false)
			for ename, eng := range engines() {
				out, err := run(eng, g, graph.Request{Algorithm: graph.CH}, sources)
				if err != nil {
					t.Fatalf("seed %d %s trial %d %s: %v", seed, sh, trial, ename, err)
				}
				if out.Type != g.Type {
					t.Fatalf("seed %d %s: ch gives %v distances on a graph of %v", seed, sh, out.Type, g.Type)
				}
				if got := asFloat(out); !slices.Equal(got, want) {
					i := firstDiff(got, want)
					t.Fatalf("seed %d %s trial %d %s (n=%d): source %d vertex %d: got %v, want %v",
						seed, sh, trial, ename, n, i/n, i%n, got[i], want[i])
				}
			}

			// Some targets (repeated, in any order) under a cutoff, as
			// dijkstra answers the same request.
			targets := make([]graph.VertexID, 1+rng.IntN(n))
			for i := range targets {
				targets[i] = graph.VertexID(rng.IntN(n))
			}
			req := graph.Request{Algorithm: graph.CH, Targets: targets, HasCutoff: rng.IntN(2) == 0, Cutoff: float64(rng.IntN(30))}
			got := narrowRun(t, New(WithThreads(2)), g, req, sources)
			req.Algorithm = graph.Dijkstra
			if w := narrowRun(t, New(WithThreads(1)), g, req, sources); !slices.Equal(got, w) {
				t.Fatalf("seed %d %s trial %d: %d targets, cutoff %v (%v): ch differs from dijkstra at %d",
					seed, sh, trial, len(targets), req.Cutoff, req.HasCutoff, firstDiff(got, w))
			}
		}
	}
}

// narrowRun runs one block of sources × req.Targets.
func narrowRun(t *testing.T, e *Engine, g *graph.CSR, req graph.Request, sources []graph.VertexID) []float64 {
	t.Helper()
	ctx := context.Background()
	r, err := e.Prepare(ctx, g, req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := graph.NewTargetBlock(sources, req.Targets, g.NumVertices, r.DistType(), false)
	if err := r.Run(ctx, out); err != nil {
		t.Fatal(err)
	}
	return asFloat(out)
}

// TestCHFloat32Exact: float32 weights with fractions are summed exactly
// by the hierarchy and rounded once to float32, so ch's rows equal the
// float64 Dijkstra's rounded to float32 (dijkstra's own float32 rows may
// differ from both in the last bits: it rounds at every step).
func TestCHFloat32Exact(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 41))
	n := 200
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: 4 * n, Kind: testgraphs.Float32, MinWeight: 0, MaxWeight: 1000})
	g, err := graph.Build(e, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hierarchy.Exact(g) {
		t.Fatalf("seed %d: float32 weights in [0, 1000] on %d vertices are not exact", seed, n)
	}
	wide, err := graph.Build(e, graph.BuildOptions{DistType: graph.DistFloat64})
	if err != nil {
		t.Fatal(err)
	}
	sources := []graph.VertexID{0, graph.VertexID(rng.IntN(n)), graph.VertexID(n - 1)}
	out, err := run(New(WithThreads(2)), g, graph.Request{Algorithm: graph.CH}, sources)
	if err != nil {
		t.Fatal(err)
	}
	got := graph.DistOf[float32](out)
	for i, s := range sources {
		exact, err := ref.Dijkstra[float64](wide, s)
		if err != nil {
			t.Fatal(err)
		}
		for v, d := range exact {
			if want := float32(d); got[i*n+v] != want {
				t.Fatalf("seed %d: source %d vertex %d: got %v, want %v (exact %v)", seed, s, v, got[i*n+v], want, d)
			}
		}
	}
}

// TestCHRefuses: predecessors, negative weights and float weights whose
// sums round each get one clear error.
func TestCHRefuses(t *testing.T) {
	ctx := context.Background()
	path := &graph.Edges{NumVertices: 3, Src: []graph.VertexID{0, 1}, Dst: []graph.VertexID{1, 2}}
	withWeights := func(f []float64) *graph.CSR {
		e := *path
		e.Float64Weights = f
		g, err := graph.Build(&e, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	plain, err := graph.Build(path, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New().Prepare(ctx, plain, graph.Request{Algorithm: graph.CH, WithPredecessors: true}); err == nil ||
		!strings.Contains(err.Error(), "cpu: ch keeps no predecessors but on the paths to stop-at targets; use dijkstra") {
		t.Errorf("predecessors: %v", err)
	}
	// Predecessors along the paths to stop-at targets: the targets'
	// distances, and predecessors that lead back to the source.
	r, err := New().Prepare(ctx, plain, graph.Request{Algorithm: graph.CH, WithPredecessors: true, StopAt: []graph.VertexID{2}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	blk := graph.NewBlock([]graph.VertexID{0}, plain.NumVertices, r.DistType(), true)
	if err := r.Run(ctx, blk); err != nil {
		t.Fatal(err)
	}
	want, err := ref.Distances[int32](plain, 0)
	if err != nil {
		t.Fatal(err)
	}
	if blk.Dist.([]int32)[2] != want[2] || blk.Pred[2] != 1 || blk.Pred[1] != 0 {
		t.Errorf("path to stop-at target 2: distance %v (want %v), predecessors %v", blk.Dist.([]int32)[2], want[2], blk.Pred)
	}
	var nw *graph.NegativeWeightError
	if _, err := New().Prepare(ctx, withWeights([]float64{1, -2}), graph.Request{Algorithm: graph.CH}); !errors.As(err, &nw) {
		t.Errorf("negative weight: %v, want a *graph.NegativeWeightError", err)
	}
	_, err = New().Prepare(ctx, withWeights([]float64{0.1, math.Pi}), graph.Request{Algorithm: graph.CH})
	if !errors.Is(err, hierarchy.ErrInexact) || !strings.Contains(err.Error(), "use dijkstra") || strings.Contains(err.Error(), "\n") {
		t.Errorf("inexact float weights: %v, want one line wrapping hierarchy.ErrInexact and naming dijkstra", err)
	}
}

// TestCHWithHierarchy: a hierarchy given to the engine (as read from an
// index file) answers as one built by Prepare, and its Reverse answers on
// the transposed graph.
func TestCHWithHierarchy(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 42))
	n := 80
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: 3 * n, Kind: testgraphs.Int, MinWeight: 0, MaxWeight: 9})
	g, err := graph.Build(e, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := hierarchy.Build(g, hierarchy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sources := allSources(n)
	req := graph.Request{Algorithm: graph.CH}
	for name, c := range map[string]struct {
		g *graph.CSR
		h *hierarchy.Hierarchy
	}{"forward": {g, h}, "reverse": {graph.Transpose(g), h.Reverse()}} {
		out, err := run(New(WithHierarchy(c.h)), c.g, req, sources)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := asFloat(out), oracleRows(t, c.g, sources, false); !slices.Equal(got, want) {
			t.Fatalf("seed %d %s: differs from Dijkstra at %d", seed, name, firstDiff(got, want))
		}
	}
	other, err := graph.Build(&graph.Edges{NumVertices: 2, Src: []graph.VertexID{0}, Dst: []graph.VertexID{1}}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(WithHierarchy(h)).Prepare(context.Background(), other, req); err == nil || !strings.Contains(err.Error(), "a hierarchy of 80 vertices for a graph of 2") {
		t.Errorf("hierarchy of another graph: %v", err)
	}
}
