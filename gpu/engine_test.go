package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// openEngine opens the GPU engine or skips the test where there is none. At
// cleanup it closes the engine and checks that no device memory was left.
func openEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New()
	if err != nil {
		t.Skip("no CUDA device: " + err.Error())
	}
	t.Cleanup(func() {
		if live := e.LiveBytes(); live != 0 {
			t.Errorf("%d device bytes still allocated after every runner closed", live)
		}
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if live := e.LiveBytes(); live != 0 {
			t.Errorf("%d device bytes still allocated after Close", live)
		}
	})
	return e
}

// weightedAlgorithms run on weights; hopAlgorithms count hops.
var (
	weightedAlgorithms = []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge, graph.BellmanFord}
	hopAlgorithms      = []graph.Algorithm{graph.BFS, graph.BFSLevel}
)

// distKind is one distance type of the randomised tests.
type distKind struct {
	name string
	kind testgraphs.WeightKind
	typ  graph.DistType // forced with BuildOptions.DistType, or 0
	// uniform draws float weights uniformly instead of as multiples of 1/8,
	// so that sums round: the kernels add along paths exactly as the
	// oracle does, so the results must still be equal bit for bit.
	uniform bool
}

var distKinds = []distKind{
	{"int32", testgraphs.Int, 0, false},
	{"int64", testgraphs.Int, graph.DistInt64, false},
	{"float32", testgraphs.Float32, 0, false},
	{"float64", testgraphs.Float64, 0, false},
	{"unweighted", testgraphs.Unweighted, 0, false},
	{"float32-uniform", testgraphs.Float32, 0, true},
	{"float64-uniform", testgraphs.Float64, 0, true},
}

// poison fills a block with values no run produces, so that entries a run
// leaves unwritten show.
func poison(b *graph.Block) {
	switch d := b.Dist.(type) {
	case []int32:
		for i := range d {
			d[i] = -7
		}
	case []int64:
		for i := range d {
			d[i] = -7
		}
	case []float32:
		for i := range d {
			d[i] = float32(math.NaN())
		}
	case []float64:
		for i := range d {
			d[i] = math.NaN()
		}
	}
	for i := range b.Pred {
		b.Pred[i] = -7
	}
}

// runBlocks runs sources through r in blocks of at most size sources and
// returns one block holding every row.
func runBlocks(t *testing.T, r *Runner, n int, sources []graph.VertexID, size int, withPred bool) *graph.Block {
	t.Helper()
	all := graph.NewBlock(sources, n, r.DistType(), withPred)
	for lo := 0; lo < len(sources); lo += size {
		hi := min(lo+size, len(sources))
		b := graph.NewBlock(sources[lo:hi], n, r.DistType(), withPred)
		poison(b)
		if err := r.Run(context.Background(), b); err != nil {
			t.Fatalf("Run(sources %d..%d): %v", lo, hi, err)
		}
		copyRows(all, b, lo)
	}
	return all
}

func copyRows(dst, src *graph.Block, at int) {
	n := dst.NumVertices
	switch d := dst.Dist.(type) {
	case []int32:
		copy(d[at*n:], src.Dist.([]int32))
	case []int64:
		copy(d[at*n:], src.Dist.([]int64))
	case []float32:
		copy(d[at*n:], src.Dist.([]float32))
	case []float64:
		copy(d[at*n:], src.Dist.([]float64))
	}
	if dst.Pred != nil {
		copy(dst.Pred[at*n:], src.Pred)
	}
}

// checkRows compares every row of b with the oracle's and, where b has
// predecessors, checks them by the properties of a shortest-path tree.
func checkRows[D graph.Number](t *testing.T, g *graph.CSR, b *graph.Block, want [][]D, pg *graph.CSR) {
	t.Helper()
	for i, s := range b.Sources {
		got := graph.Row[D](b, i)
		for v := range got {
			if got[v] != want[i][v] {
				t.Fatalf("source %d: dist[%d] = %v, want %v", s, v, got[v], want[i][v])
			}
		}
		if b.Pred != nil {
			pred := b.Pred[i*b.NumVertices : (i+1)*b.NumVertices]
			if err := ref.CheckPredecessors[D](pg, s, got, pred); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// unitGraph is g with every weight 1, for checking hop-count predecessors.
func unitGraph(g *graph.CSR) *graph.CSR {
	u := *g
	w := make([]int32, len(g.Targets))
	for i := range w {
		w[i] = 1
	}
	u.Weights, u.Type = w, graph.DistInt32
	return &u
}

// oracle computes the rows from sources with fn.
func oracle[D graph.Number](t *testing.T, g *graph.CSR, sources []graph.VertexID, fn func(*graph.CSR, graph.VertexID) ([]D, error)) [][]D {
	t.Helper()
	rows := make([][]D, len(sources))
	for i, s := range sources {
		var err error
		if rows[i], err = fn(g, s); err != nil {
			t.Fatalf("oracle from %d: %v", s, err)
		}
	}
	return rows
}

func pickSources(rng *rand.Rand, n int) []graph.VertexID {
	if n <= 300 {
		s := make([]graph.VertexID, n)
		for i := range s {
			s[i] = graph.VertexID(i)
		}
		return s
	}
	s := make([]graph.VertexID, 0, 96)
	for _, p := range rng.Perm(n)[:96] {
		s = append(s, graph.VertexID(p))
	}
	return s
}

func newSeed(t *testing.T) *rand.Rand { return testgraphs.Rand(t, 0x9a7c) }

// TestAlgorithmsAgainstOracles runs every algorithm on every distance type,
// directed and undirected, with and without predecessors, on random graphs
// whose vertex counts are no multiples of 32 or 256, against the serial
// oracles of internal/ref.
func TestAlgorithmsAgainstOracles(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, n := range []int{1, 37, 300, 777} {
		for _, dk := range distKinds {
			for _, undirected := range []bool{false, true} {
				o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
					Dyadic: !dk.uniform, Duplicates: n / 10}
				edges, _ := testgraphs.Random(rng, o)
				g, err := graph.Build(edges, graph.BuildOptions{Undirected: undirected, DistType: dk.typ})
				if err != nil {
					t.Fatal(err)
				}
				sources := pickSources(rng, n)
				name := fmt.Sprintf("n=%d/%s/undirected=%v", n, dk.name, undirected)
				t.Run(name, func(t *testing.T) {
					checkGraph(t, e, g, sources, weightedAlgorithms)
				})
			}
		}
	}
}

// checkGraph runs algs and the hop algorithms on g from sources, in blocks of
// several sizes, against the oracles.
func checkGraph(t *testing.T, e *Engine, g *graph.CSR, sources []graph.VertexID, algs []graph.Algorithm) {
	t.Helper()
	hops := oracle(t, g, sources, ref.BFS)
	unit := unitGraph(g)
	var want any
	switch g.Type {
	case graph.DistInt32:
		want = oracle(t, g, sources, ref.BellmanFord[int32])
	case graph.DistInt64:
		want = oracle(t, g, sources, ref.BellmanFord[int64])
	case graph.DistFloat32:
		want = oracle(t, g, sources, ref.BellmanFord[float32])
	case graph.DistFloat64:
		want = oracle(t, g, sources, ref.BellmanFord[float64])
	}
	if !g.HasNegative() {
		// Dijkstra is the oracle of the non-negative cases; it must agree
		// with Bellman-Ford's rows, which the negative cases use.
		switch g.Type {
		case graph.DistInt32:
			want = oracle(t, g, sources, ref.Dijkstra[int32])
		case graph.DistInt64:
			want = oracle(t, g, sources, ref.Dijkstra[int64])
		case graph.DistFloat32:
			want = oracle(t, g, sources, ref.Dijkstra[float32])
		case graph.DistFloat64:
			want = oracle(t, g, sources, ref.Dijkstra[float64])
		}
	}
	for _, alg := range append(slices.Clone(algs), hopAlgorithms...) {
		for _, withPred := range []bool{false, true} {
			if withPred && !alg.HasPredecessors() {
				continue
			}
			t.Run(fmt.Sprintf("%s/pred=%v", alg, withPred), func(t *testing.T) {
				r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg, WithPredecessors: withPred})
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := r.Close(); err != nil {
						t.Error(err)
					}
				}()
				// One block of every source, then blocks of 7 (the runner
				// keeps its larger buffers). Both runs must agree exactly:
				// a result that moves between runs is a race. Only
				// bellman-ford's packed 32-bit cells may pick another of
				// several shortest-path predecessors.
				var first *graph.Block
				for _, size := range []int{len(sources), 7} {
					b := runBlocks(t, r, g.NumVertices, sources, size, withPred)
					if first == nil {
						first = b
					} else {
						samePred := !(alg == graph.BellmanFord && packsPredecessors(r.DistType()))
						if !sameBlock(first, b, samePred) {
							t.Fatalf("blocks of %d and of 7 sources differ", len(sources))
						}
					}
					if alg.CountsHops() {
						checkRows(t, g, b, hops, unit)
						continue
					}
					switch w := want.(type) {
					case [][]int32:
						checkRows(t, g, b, w, g)
					case [][]int64:
						checkRows(t, g, b, w, g)
					case [][]float32:
						checkRows(t, g, b, w, g)
					case [][]float64:
						checkRows(t, g, b, w, g)
					}
				}
			})
		}
	}
}

// TestBellmanFordNegativeWeights checks bellman-ford on negative weights
// without negative cycles (a random potential added to non-negative weights)
// and that the other weighted algorithms refuse them.
func TestBellmanFordNegativeWeights(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, dk := range distKinds[:4] {
		for _, undirected := range []bool{false} {
			n := 203
			o := testgraphs.RandomOptions{N: n, M: 4 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20, Dyadic: true, Potential: 15}
			edges, _ := testgraphs.Random(rng, o)
			g, err := graph.Build(edges, graph.BuildOptions{Undirected: undirected, DistType: dk.typ})
			if err != nil {
				t.Fatal(err)
			}
			if !g.HasNegative() {
				t.Fatalf("%s: the potential left no negative weight", dk.name)
			}
			t.Run(dk.name, func(t *testing.T) {
				checkGraph(t, e, g, pickSources(rng, n), []graph.Algorithm{graph.BellmanFord})
				for _, alg := range []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge} {
					_, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg})
					var nw *graph.NegativeWeightError
					if !errors.As(err, &nw) || nw.Weight >= 0 || nw.Algorithm != alg {
						t.Errorf("%s on negative weights: err = %v, want a *graph.NegativeWeightError", alg, err)
					}
				}
			})
		}
	}
}

// TestBellmanFordNegativeCycle plants one negative cycle and checks that a
// block whose sources reach it fails naming a vertex on it, while a block of
// sources that cannot reach it succeeds.
func TestBellmanFordNegativeCycle(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, dk := range distKinds[:4] {
		for _, withPred := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pred=%v", dk.name, withPred), func(t *testing.T) {
				n := 121
				o := testgraphs.RandomOptions{N: n, M: 2 * n, Kind: dk.kind, MinWeight: 6, MaxWeight: 30, Cycle: 5}
				edges, cycle := testgraphs.Random(rng, o)
				g, err := graph.Build(edges, graph.BuildOptions{DistType: dk.typ})
				if err != nil {
					t.Fatal(err)
				}
				r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.BellmanFord, WithPredecessors: withPred})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				reach := oracle(t, g, allVertices(n), ref.BFS)
				var reaching, clear []graph.VertexID
				for s := range n {
					if reach[s][cycle[0]] != graph.Infinity[int32]() {
						reaching = append(reaching, graph.VertexID(s))
					} else {
						clear = append(clear, graph.VertexID(s))
					}
				}
				b := graph.NewBlock(reaching, n, r.DistType(), withPred)
				err = r.Run(context.Background(), b)
				var nc *graph.NegativeCycleError
				if !errors.As(err, &nc) {
					t.Fatalf("Run from sources reaching the cycle: err = %v, want a *graph.NegativeCycleError", err)
				}
				if !slices.Contains(cycle, nc.Vertex) || !slices.Contains(reaching, nc.Source) {
					t.Fatalf("negative cycle error %v: vertex not on the cycle %v or source not reaching it", nc, cycle)
				}
				if len(clear) > 0 {
					b := graph.NewBlock(clear, n, r.DistType(), withPred)
					if err := r.Run(context.Background(), b); err != nil {
						t.Fatalf("Run from sources not reaching the cycle: %v", err)
					}
				}
			})
		}
	}
}

func allVertices(n int) []graph.VertexID {
	s := make([]graph.VertexID, n)
	for i := range s {
		s[i] = graph.VertexID(i)
	}
	return s
}

// TestSmallCases runs the shared table of small graphs with known answers
// through every algorithm (also the case for compute-sanitizer).
func TestSmallCases(t *testing.T) {
	e := openEngine(t)
	for _, c := range testgraphs.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			g, err := c.CSR()
			if err != nil {
				t.Fatal(err)
			}
			n := g.NumVertices
			want, hops := c.WantMatrix(), c.HopMatrix()
			for _, alg := range append(slices.Clone(weightedAlgorithms), hopAlgorithms...) {
				withPred := alg.HasPredecessors()
				r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg, WithPredecessors: withPred})
				if c.HasNegative() && !alg.AcceptsNegative() && !alg.CountsHops() {
					if !errors.Is(err, graph.ErrNegativeWeight) {
						t.Errorf("%s: err = %v, want a negative weight error", alg, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", alg, err)
				}
				for s := range n {
					src := graph.VertexID(s)
					b := graph.NewBlock([]graph.VertexID{src}, n, r.DistType(), withPred)
					poison(b)
					err := r.Run(context.Background(), b)
					exp := want
					if alg.CountsHops() {
						exp = hops
					} else if math.IsNaN(want[s*n]) {
						if !errors.Is(err, graph.ErrNegativeCycle) {
							t.Errorf("%s from %d: err = %v, want a negative cycle", alg, s, err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s from %d: %v", alg, s, err)
					}
					for v := range n {
						if got := distAt(b, v); got != exp[s*n+v] {
							t.Errorf("%s from %d: dist[%d] = %v, want %v", alg, s, v, got, exp[s*n+v])
						}
					}
				}
				if err := r.Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// distAt returns entry v of a one-row block as float64, +Inf where
// unreachable.
func distAt(b *graph.Block, v int) float64 {
	switch d := b.Dist.(type) {
	case []int32:
		if d[v] == math.MaxInt32 {
			return math.Inf(1)
		}
		return float64(d[v])
	case []int64:
		if d[v] == math.MaxInt64 {
			return math.Inf(1)
		}
		return float64(d[v])
	case []float32:
		return float64(d[v])
	}
	return b.Dist.([]float64)[v]
}

// TestRunnerErrors checks bad blocks and requests are refused with errors,
// on a device, and that auto is resolved by Prepare.
func TestRunnerErrors(t *testing.T) {
	e := openEngine(t)
	g, err := graph.Build(&graph.Edges{NumVertices: 3, Src: []graph.VertexID{0, 1}, Dst: []graph.VertexID{1, 2}}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.BFSLevel, WithPredecessors: true}); err == nil {
		t.Error("bfs-level with predecessors: no error")
	}
	if r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Auto}); err != nil {
		t.Errorf("auto: %v", err)
	} else {
		if d := r.Describe(); !strings.HasPrefix(d, "auto: ") {
			t.Errorf("auto runs %q, not named as auto's choice", d)
		}
		r.Close()
	}
	r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Dijkstra})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, b := range map[string]*graph.Block{
		"source out of range":  graph.NewBlock([]graph.VertexID{3}, 3, graph.DistInt32, false),
		"wrong type":           graph.NewBlock([]graph.VertexID{0}, 3, graph.DistInt64, false),
		"wrong size":           graph.NewBlock([]graph.VertexID{0}, 2, graph.DistInt32, false),
		"unasked predecessors": graph.NewBlock([]graph.VertexID{0}, 3, graph.DistInt32, true),
	} {
		if err := r.Run(context.Background(), b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Run(ctx, graph.NewBlock([]graph.VertexID{0}, 3, graph.DistInt32, false)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: err = %v", err)
	}
	// Two distance rows (computing, copying out), predist, changed flags.
	if got := r.BytesPerSource(); got != 3*(2*4+4+1)+perSourceBytes {
		t.Errorf("dijkstra int32 BytesPerSource = %d, want %d", got, 3*(2*4+4+1)+perSourceBytes)
	}
}

// TestLargerGraphs checks a few sources on graphs of tens of thousands of
// vertices (many vertices per thread, long relaxation loops).
func TestLargerGraphs(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, tc := range []struct {
		name       string
		edges      *graph.Edges
		undirected bool
	}{
		{"rmat14", rmatEdges(14, 8, rng.Uint64()), false},
		{"grid150", gridEdges(150, rng.Uint64()), true},
	} {
		g, err := graph.Build(tc.edges, graph.BuildOptions{Undirected: tc.undirected})
		if err != nil {
			t.Fatal(err)
		}
		var sources []graph.VertexID
		for _, p := range rng.Perm(g.NumVertices)[:13] {
			sources = append(sources, graph.VertexID(p))
		}
		t.Run(tc.name, func(t *testing.T) { checkGraph(t, e, g, sources, weightedAlgorithms) })
	}
}

// sameBlock reports whether a and b hold the same distances (bit for bit)
// and, when pred, the same predecessors.
func sameBlock(a, b *graph.Block, pred bool) bool {
	da, _ := sliceBytes(a.Dist)
	db, _ := sliceBytes(b.Dist)
	if !slices.Equal(da, db) {
		return false
	}
	return !pred || slices.Equal(a.Pred, b.Pred)
}

// TestCloseReleasesOpenRunners checks that closing the engine frees the
// device memory of runners nobody closed, and that they refuse to run after.
func TestCloseReleasesOpenRunners(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Skip("no CUDA device: " + err.Error())
	}
	edges, _ := testgraphs.Random(rand.New(rand.NewPCG(1, 2)), testgraphs.RandomOptions{N: 100, M: 400, Kind: testgraphs.Int, MaxWeight: 9})
	g, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Edge, WithPredecessors: true})
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBlock([]graph.VertexID{0, 1, 2}, 100, r.DistType(), true)
	if err := r.Run(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	free, err := e.FreeMemory()
	if err != nil || free <= 0 {
		t.Fatalf("FreeMemory = %d, %v", free, err)
	}
	// The graph (offsets, targets, weights, arc sources) and three sources'
	// buffers (source id, status, dist, level row, predecessors, stats).
	want := int64(8*101+3*4*g.NumEdges()) + 3*r.BytesPerSource()
	if got := e.LiveBytes(); got != want {
		t.Errorf("LiveBytes = %d with one runner of 3 sources, want %d", got, want)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.LiveBytes(); got != 0 {
		t.Errorf("LiveBytes = %d after Close", got)
	}
	if err := r.Run(context.Background(), b); err == nil {
		t.Error("Run after the engine closed: no error")
	}
	if _, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Edge}); err == nil {
		t.Error("Prepare after Close: no error")
	}
}
