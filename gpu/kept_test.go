package gpu

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestKeptCSRLentToRunners checks KeepCSR: the graph is copied once
// (GraphUploads), every later Prepare of it borrows the copy (no upload,
// no new graph bytes), the results equal the oracle's for a weighted
// algorithm, a hop-counting one and auto (the batched kernel, whose plans
// share the kept copy's measure of the graph), a DropCSR while a runner
// borrows the copy frees it only when that runner closes, and a Prepare
// after the drop uploads.
func TestKeptCSRLentToRunners(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	g, err := graph.Build(messyEdges(rng, 400, 2400, testgraphs.Int, false), graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := e.KeepCSR(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	wantBytes := 8*int64(g.NumVertices+1) + 4*g.NumEdges() + int64(g.Type.Size())*g.NumEdges()
	if kept != wantBytes || e.LiveBytes() != wantBytes || e.KeptBytes() != wantBytes {
		t.Fatalf("KeepCSR: %d bytes, LiveBytes %d, KeptBytes %d; want %d", kept, e.LiveBytes(), e.KeptBytes(), wantBytes)
	}
	if again, err := e.KeepCSR(context.Background(), g); err != nil || again != kept {
		t.Fatalf("KeepCSR again: %d bytes, %v", again, err)
	}
	if up := e.GraphUploads(); up != 1 {
		t.Fatalf("GraphUploads = %d after KeepCSR, want 1", up)
	}
	sources := pickSources(rng, g.NumVertices)
	want := oracle(t, g, sources, ref.Dijkstra[int32])
	wantHops := oracle(t, g, sources, func(g *graph.CSR, s graph.VertexID) ([]int32, error) { return ref.BFS(g, s) })
	var open []*Runner
	for i, alg := range []graph.Algorithm{graph.Dijkstra, graph.BFSLevel, graph.Auto, graph.Dijkstra} {
		r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg})
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, r)
		if up := e.GraphUploads(); up != 1 {
			t.Errorf("Prepare %d (%s): GraphUploads = %d, want 1: the kept copy was not lent", i, alg, up)
		}
		e.graphs.mu.Lock()
		shared := r.bk.graph == e.graphs.kept[g].plan
		e.graphs.mu.Unlock()
		if !shared {
			t.Errorf("Prepare %d (%s): the runner measures the graph again instead of sharing the kept copy's measure", i, alg)
		}
		b := runBlocks(t, r, g.NumVertices, sources, 32, false)
		if alg == graph.BFSLevel {
			checkRows(t, g, b, wantHops, nil)
		} else {
			checkRows(t, g, b, want, nil)
		}
	}
	// The runners' own buffers go with them; the graph stays.
	for _, r := range open[:3] {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.DropCSR(g); err != nil {
		t.Fatal(err)
	}
	if e.KeptBytes() != 0 {
		t.Errorf("KeptBytes = %d after DropCSR", e.KeptBytes())
	}
	if got := e.LiveBytes(); got < wantBytes {
		t.Fatalf("LiveBytes = %d after DropCSR with a runner still borrowing the copy, want at least %d", got, wantBytes)
	}
	b := runBlocks(t, open[3], g.NumVertices, sources, 32, false)
	checkRows(t, g, b, want, nil)
	if err := open[3].Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.LiveBytes(); got != 0 {
		t.Fatalf("LiveBytes = %d once the last borrower closed after DropCSR", got)
	}
	r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Dijkstra})
	if err != nil {
		t.Fatal(err)
	}
	if up := e.GraphUploads(); up != 2 {
		t.Errorf("Prepare after DropCSR: GraphUploads = %d, want 2", up)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBuildKeptCSR checks BuildKeptCSR: the CSR equals graph.Build's, no
// Prepare uploads it, the stats reduced on the borrowed copy equal those of
// the uploaded graph, and Close frees a copy never dropped.
func TestBuildKeptCSR(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	rng := newSeed(t)
	edges := messyEdges(rng, 300, 2000, testgraphs.Int, false)
	g, kept, err := e.BuildKeptCSR(context.Background(), edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameCSR(g, host); diff != "" {
		t.Fatal(diff)
	}
	if kept != e.LiveBytes() || kept == 0 {
		t.Fatalf("BuildKeptCSR kept %d bytes, LiveBytes %d", kept, e.LiveBytes())
	}
	sources := allVertices(g.NumVertices)
	var stats [2]*graph.Stats
	for i, c := range []*graph.CSR{g, g} {
		r, err := e.Prepare(context.Background(), c, graph.Request{Algorithm: graph.Delta})
		if err != nil {
			t.Fatal(err)
		}
		if stats[i], err = r.RunStats(context.Background(), sources); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if up := e.GraphUploads(); up != 0 {
		t.Errorf("GraphUploads = %d after two runs on a graph built on the device, want 0", up)
	}
	r, err := e.Prepare(context.Background(), host, graph.Request{Algorithm: graph.Delta})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	uploaded, err := r.RunStats(context.Background(), sources)
	if err != nil {
		t.Fatal(err)
	}
	for i := range stats {
		if !sameStats(stats[i], uploaded) {
			t.Errorf("run %d: stats on the kept copy differ from those on an uploaded copy", i)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.LiveBytes(); got != 0 {
		t.Fatalf("LiveBytes = %d after Close with a kept copy", got)
	}
	if _, err := e.KeepCSR(context.Background(), host); err == nil {
		t.Error("KeepCSR on a closed engine: no error")
	}
}

// sameStats compares two stats reductions of integer distances: counts,
// eccentricities and sums exactly, the float quotients to a relative
// 1e-12 (the device may add the harmonic terms in any order).
func sameStats(a, b *graph.Stats) bool {
	if !slices.Equal(a.Sources, b.Sources) || !slices.Equal(a.Reachable, b.Reachable) ||
		!slices.Equal(a.Eccentricity, b.Eccentricity) || !slices.Equal(a.SumInt, b.SumInt) {
		return false
	}
	near := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Abs(x[i]-y[i]) > 1e-12*math.Max(math.Abs(x[i]), 1) {
				return false
			}
		}
		return true
	}
	return near(a.Closeness, b.Closeness) && near(a.Harmonic, b.Harmonic)
}
