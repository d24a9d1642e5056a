package cpu

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestCases runs every algorithm on every shared case, with and without
// predecessors, on every engine configuration, against the hand-written
// answers.
func TestCases(t *testing.T) {
	for ename, e := range engines() {
		for _, c := range testgraphs.Cases() {
			g, err := c.CSR()
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			for _, algo := range graph.Algorithms {
				for _, withPred := range []bool{false, true} {
					name := ename + "/" + c.Name + "/" + string(algo)
					if withPred {
						name += "/pred"
					}
					t.Run(name, func(t *testing.T) { checkCase(t, e, &c, g, algo, withPred) })
				}
			}
		}
	}
}

func checkCase(t *testing.T, e *Engine, c *testgraphs.Case, g *graph.CSR, algo graph.Algorithm, withPred bool) {
	req := graph.Request{Algorithm: algo, WithPredecessors: withPred}
	n := g.NumVertices
	ids := c.Vertices()
	hops := algo.CountsHops() || algo == graph.Auto && c.Kind == testgraphs.Unweighted
	negative := c.HasNegative() && !hops && algo != graph.BellmanFord && algo != graph.Auto

	r, err := e.Prepare(context.Background(), g, req)
	switch {
	case !algo.HasPredecessors() && withPred:
		want := "bfs-level stores no predecessors; use bfs"
		if algo == graph.CH {
			want = "ch keeps no predecessors"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Prepare: %v, want the %s predecessor error", err, algo)
		}
		return
	case negative:
		var nw *graph.NegativeWeightError
		if !errors.As(err, &nw) || !errors.Is(err, graph.ErrNegativeWeight) || !strings.Contains(err.Error(), "bellman-ford") {
			t.Fatalf("Prepare: %v, want a negative weight error naming bellman-ford", err)
		}
		if w, ok := arcWeightOf(g, nw.From, nw.To); !ok || w >= 0 || w != nw.Weight {
			t.Fatalf("error names arc %d -> %d of weight %v, which is not a negative arc (%v, %v)", nw.From, nw.To, nw.Weight, w, ok)
		}
		return
	case err != nil:
		t.Fatalf("Prepare: %v", err)
	}
	r.Close()
	wantType := g.Type
	if hops {
		wantType = graph.DistInt32
	}
	if r.DistType() != wantType {
		t.Fatalf("DistType %v, want %v", r.DistType(), wantType)
	}
	if min := int64(n * wantType.Size()); r.BytesPerSource() < min {
		t.Fatalf("BytesPerSource %d below one output row (%d)", r.BytesPerSource(), min)
	}

	want := c.WantMatrix()
	if hops {
		want = c.HopMatrix()
	}
	// All sources in one block, then every source in a block of its own.
	out, err := run(e, g, req, allSources(n))
	reachesCycle := slices.ContainsFunc(ids, c.ReachesCycle) && !hops
	if reachesCycle {
		var nc *graph.NegativeCycleError
		if !errors.As(err, &nc) || !c.ReachesCycle(ids[nc.Source]) || !slices.Contains(c.CycleVertices, ids[nc.Vertex]) {
			t.Fatalf("Run: %v, want a negative cycle through one of %v", err, c.CycleVertices)
		}
	} else {
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := asFloat(out); !slices.Equal(got, want) {
			t.Fatalf("distances\n got %v\nwant %v", got, want)
		}
		checkPreds(t, g, out, hops)
	}
	for s := range n {
		out, err := run(e, g, req, []graph.VertexID{graph.VertexID(s)})
		if !hops && c.ReachesCycle(ids[s]) {
			var nc *graph.NegativeCycleError
			if !errors.As(err, &nc) || nc.Source != graph.VertexID(s) || !slices.Contains(c.CycleVertices, ids[nc.Vertex]) {
				t.Fatalf("source %s: %v, want a negative cycle through one of %v", ids[s], err, c.CycleVertices)
			}
			continue
		}
		if err != nil {
			t.Fatalf("source %s: %v", ids[s], err)
		}
		if got := asFloat(out); !slices.Equal(got, want[s*n:(s+1)*n]) {
			t.Fatalf("source %s: got %v, want %v", ids[s], got, want[s*n:(s+1)*n])
		}
		checkPreds(t, g, out, hops)
	}
}

// checkPreds checks a block's predecessors by their properties (on the
// unit-weight graph for hop counts).
func checkPreds(t *testing.T, g *graph.CSR, out *graph.Block, hops bool) {
	t.Helper()
	if out.Pred == nil {
		return
	}
	n := g.NumVertices
	if hops {
		g = unitWeights(g)
	}
	for i, s := range out.Sources {
		var err error
		pred := out.Pred[i*n : (i+1)*n]
		switch out.Type {
		case graph.DistInt32:
			err = ref.CheckPredecessors(g, s, graph.Row[int32](out, i), pred)
		case graph.DistInt64:
			err = ref.CheckPredecessors(g, s, graph.Row[int64](out, i), pred)
		case graph.DistFloat32:
			err = ref.CheckPredecessors(g, s, graph.Row[float32](out, i), pred)
		case graph.DistFloat64:
			err = ref.CheckPredecessors(g, s, graph.Row[float64](out, i), pred)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// unitWeights is g with every weight 1 in int32, for checking hop trees.
func unitWeights(g *graph.CSR) *graph.CSR {
	h := *g
	w := make([]int32, len(g.Targets))
	fill(w, 1)
	h.Weights, h.Type, h.MinWeight, h.MaxWeight = w, graph.DistInt32, 1, 1
	if len(w) == 0 {
		h.MinWeight, h.MaxWeight = 0, 0
	}
	return &h
}

func arcWeightOf(g *graph.CSR, u, v graph.VertexID) (float64, bool) {
	if u < 0 || int(u) >= g.NumVertices {
		return 0, false
	}
	for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
		if g.Targets[k] == v {
			return g.WeightAt(k), true
		}
	}
	return 0, false
}

// TestResolve checks auto's choice on each kind of graph.
func TestResolve(t *testing.T) {
	e := New()
	for _, tc := range []struct {
		name, want string
	}{
		{"unweighted", "breadth-first"},
		{"negative-weights", "bellman-ford"},
		{"ties", "Dial"},
		{"large-int64", "heap"},
		{"float64-weights", "heap"},
	} {
		c, err := testgraphs.Find(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		g, err := c.CSR()
		if err != nil {
			t.Fatal(err)
		}
		got := e.Resolve(g, graph.Request{Algorithm: graph.Auto})
		if !strings.Contains(got, tc.want) || strings.Contains(got, "\n") {
			t.Errorf("%s: Resolve = %q, want one line mentioning %q", tc.name, got, tc.want)
		}
		if got := e.Resolve(g, graph.Request{Algorithm: graph.Delta}); !strings.HasPrefix(got, "delta") {
			t.Errorf("%s: Resolve(delta) = %q", tc.name, got)
		}
	}
}

// TestBadInput checks that bad requests and blocks give errors, not panics.
func TestBadInput(t *testing.T) {
	c, _ := testgraphs.Find("ties")
	g, err := c.CSR()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := New()
	if _, err := e.Prepare(ctx, g, graph.Request{Algorithm: "nope"}); err == nil || !strings.HasPrefix(err.Error(), "cpu: ") {
		t.Errorf("unknown algorithm: %v", err)
	}
	if _, err := e.Prepare(ctx, g, graph.Request{Algorithm: graph.Delta, Delta: -1}); err == nil {
		t.Error("negative delta accepted")
	}
	if _, err := e.Prepare(ctx, nil, graph.Request{}); err == nil {
		t.Error("nil graph accepted")
	}
	bad := *g
	bad.Weights = []float64{1}
	if _, err := e.Prepare(ctx, &bad, graph.Request{}); err == nil {
		t.Error("mistyped weights accepted")
	}
	r, err := e.Prepare(ctx, g, graph.Request{Algorithm: graph.Dijkstra})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, b := range map[string]*graph.Block{
		"source out of range": graph.NewBlock([]graph.VertexID{9}, g.NumVertices, graph.DistInt32, false),
		"negative source":     graph.NewBlock([]graph.VertexID{-1}, g.NumVertices, graph.DistInt32, false),
		"wrong type":          graph.NewBlock([]graph.VertexID{0}, g.NumVertices, graph.DistFloat64, false),
		"wrong width":         graph.NewBlock([]graph.VertexID{0}, g.NumVertices+1, graph.DistInt32, false),
		"nil":                 nil,
	} {
		if err := r.Run(ctx, b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	b := graph.NewBlock(allSources(g.NumVertices), g.NumVertices, graph.DistInt32, false)
	if err := r.Run(cancelled, b); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	if _, err := e.Prepare(cancelled, g, graph.Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled prepare: %v", err)
	}
}

// TestDeltaChoice checks Δ and the bucket count.
func TestDeltaChoice(t *testing.T) {
	c, _ := testgraphs.Find("ties") // 5 vertices, 5 arcs, max weight 2
	g, _ := c.CSR()
	r, err := New().Prepare(context.Background(), g, graph.Request{Algorithm: graph.Delta})
	if err != nil {
		t.Fatal(err)
	}
	dr := r.(*runner[int32])
	if dr.delta != 2 || dr.deltaBucket != 4 { // 2 / (5/5) = 2; 2/2 + 3 buckets
		t.Errorf("Δ %v with %d buckets, want 2 with 4", dr.delta, dr.deltaBucket)
	}
	r, _ = New().Prepare(context.Background(), g, graph.Request{Algorithm: graph.Delta, Delta: 1.7})
	if dr := r.(*runner[int32]); dr.delta != 1 || dr.deltaBucket != 5 {
		t.Errorf("asked 1.7: Δ %v with %d buckets, want 1 with 5", dr.delta, dr.deltaBucket)
	}
	f, _ := testgraphs.Find("float64-weights") // max weight 2.5
	fg, _ := f.CSR()
	r, _ = New().Prepare(context.Background(), fg, graph.Request{Algorithm: graph.Delta, Delta: 1e-9})
	if dr := r.(*runner[float64]); dr.deltaBucket > maxDeltaBuckets || dr.delta <= 1e-9 || math.IsInf(float64(dr.delta), 0) {
		t.Errorf("tiny Δ not raised: Δ %v with %d buckets", dr.delta, dr.deltaBucket)
	}
}

// countdownContext is cancelled after its Err has been asked a number of
// times, so a test can stop a run in the middle deterministically.
type countdownContext struct {
	context.Context
	left atomic.Int64
}

func (c *countdownContext) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestCancelMidRun stops every algorithm after a few of its checks and
// expects context.Canceled back.
func TestCancelMidRun(t *testing.T) {
	// A long path: every seed kernel needs thousands of rounds.
	n := 5000
	e := &graph.Edges{NumVertices: n, IntWeights: make([]int64, n-1)}
	for i := range n - 1 {
		e.Src = append(e.Src, graph.VertexID(i))
		e.Dst = append(e.Dst, graph.VertexID(i+1))
		e.IntWeights[i] = 3
	}
	g, err := graph.Build(e, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for ename, eng := range engines() {
		for _, algo := range graph.Algorithms {
			r, err := eng.Prepare(context.Background(), g, graph.Request{Algorithm: algo})
			if err != nil {
				t.Fatal(err)
			}
			ctx := &countdownContext{Context: context.Background()}
			ctx.left.Store(50)
			out := graph.NewBlock(allSources(200), n, r.DistType(), false)
			if err := r.Run(ctx, out); !errors.Is(err, context.Canceled) {
				t.Errorf("%s %s: %v, want context.Canceled", ename, algo, err)
			}
			r.Close()
		}
	}
}
