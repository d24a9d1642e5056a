package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// statsTolerance bounds how far a float sum the device adds in its own
// order (kernels/stats.cu: strided per thread, then a fixed tree) may lie
// from the CPU's sum in vertex order: relative to the sum of the terms'
// magnitudes, which bounds the rounding of either order (about n·2⁻⁵³ at
// worst, far below 1e-12 for the graphs here; typical errors are ~√n·2⁻⁵³).
// Integer sums, counts and maxima are exact and compared exactly.
const statsTolerance = 1e-12

// cpuStats runs the CPU engine over g from sources and reduces its block
// with graph.ComputeStats, the reference of the stats layout. It also
// returns, per source, the sums of |d| and |1/d| over the reached vertices,
// the scales of the float tolerances.
func cpuStats(t *testing.T, g *graph.CSR, req graph.Request, sources []graph.VertexID) (*graph.Stats, []float64, []float64) {
	t.Helper()
	r, err := cpu.New(cpu.WithThreads(2)).Prepare(context.Background(), g, req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := graph.NewBlock(sources, g.NumVertices, r.DistType(), false)
	if err := r.Run(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return blockStats(b)
}

// blockStats reduces b with graph.ComputeStats and returns, per source,
// the sums of |d| and |1/d| over the reached vertices, the scales of the
// float tolerances (compareStats).
func blockStats(b *graph.Block) (*graph.Stats, []float64, []float64) {
	sources := b.Sources
	absSum := make([]float64, len(sources))
	absHarm := make([]float64, len(sources))
	for i, s := range sources {
		for v := range b.NumVertices {
			d := distAtRow(b, i, v)
			if math.IsInf(d, 1) || v == int(s) {
				continue
			}
			absSum[i] += math.Abs(d)
			if d != 0 {
				absHarm[i] += math.Abs(1 / d)
			}
		}
	}
	return graph.ComputeStats(b), absSum, absHarm
}

// distAtRow is entry v of row i as float64, +Inf where unreachable.
func distAtRow(b *graph.Block, i, v int) float64 {
	n := b.NumVertices
	switch d := b.Dist.(type) {
	case []int32:
		if x := d[i*n+v]; x != math.MaxInt32 {
			return float64(x)
		}
		return math.Inf(1)
	case []int64:
		if x := d[i*n+v]; x != math.MaxInt64 {
			return float64(x)
		}
		return math.Inf(1)
	case []float32:
		return float64(d[i*n+v])
	}
	return b.Dist.([]float64)[i*n+v]
}

// near reports whether got is within statsTolerance·scale of want.
func near(got, want, scale float64) bool {
	return math.Abs(got-want) <= statsTolerance*scale
}

// compareStats checks got against the CPU reference want: reachable,
// eccentricity and integer sums exactly; closeness exactly where the sum is
// an integer (both sides evaluate one expression on the same numbers);
// float sums, float closeness and harmonic sums within statsTolerance.
func compareStats(t *testing.T, got, want *graph.Stats, absSum, absHarm []float64) {
	t.Helper()
	if got.Type != want.Type || len(got.Sources) != len(want.Sources) {
		t.Fatalf("stats of %d %s sources, want %d %s", len(got.Sources), got.Type, len(want.Sources), want.Type)
	}
	for i, s := range want.Sources {
		if got.Sources[i] != s {
			t.Fatalf("source %d is %d, want %d", i, got.Sources[i], s)
		}
		if got.Reachable[i] != want.Reachable[i] {
			t.Fatalf("source %d: reachable %d, want %d", s, got.Reachable[i], want.Reachable[i])
		}
		if got.Eccentricity[i] != want.Eccentricity[i] {
			t.Fatalf("source %d: eccentricity %v, want %v", s, got.Eccentricity[i], want.Eccentricity[i])
		}
		if want.Type.IsFloat() {
			if !near(got.SumFloat[i], want.SumFloat[i], absSum[i]) {
				t.Fatalf("source %d: sum %v, want %v", s, got.SumFloat[i], want.SumFloat[i])
			}
			// closeness = r²/(sum·(n−1)): its relative error is the sum's.
			scale := 0.0
			if want.SumFloat[i] > 0 {
				scale = 2 * want.Closeness[i] * absSum[i] / want.SumFloat[i]
			}
			if !near(got.Closeness[i], want.Closeness[i], scale) {
				t.Fatalf("source %d: closeness %v, want %v", s, got.Closeness[i], want.Closeness[i])
			}
		} else {
			if got.SumInt[i] != want.SumInt[i] {
				t.Fatalf("source %d: sum %d, want %d", s, got.SumInt[i], want.SumInt[i])
			}
			if got.Closeness[i] != want.Closeness[i] {
				t.Fatalf("source %d: closeness %v, want %v", s, got.Closeness[i], want.Closeness[i])
			}
		}
		if !near(got.Harmonic[i], want.Harmonic[i], absHarm[i]) {
			t.Fatalf("source %d: harmonic %v, want %v", s, got.Harmonic[i], want.Harmonic[i])
		}
	}
}

// TestRunStatsAgainstCPU checks RunStats of every algorithm and distance
// type against graph.ComputeStats of the CPU engine's blocks, on random
// graphs with unreachable vertices, zero weights (1/0 counted as 0), vertex
// counts no multiple of the 256 threads, and in blocks that run in several
// chunks; and that two runs give the same bits.
func TestRunStatsAgainstCPU(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, n := range []int{1, 2, 300, 1999} {
		for _, dk := range distKinds {
			for _, undirected := range []bool{false, true} {
				o := testgraphs.RandomOptions{N: n, M: 2 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
					Dyadic: !dk.uniform, Duplicates: n / 10}
				edges, _ := testgraphs.Random(rng, o)
				g, err := graph.Build(edges, graph.BuildOptions{Undirected: undirected, DistType: dk.typ})
				if err != nil {
					t.Fatal(err)
				}
				sources := pickSources(rng, n)
				for _, alg := range []graph.Algorithm{graph.Delta, graph.BellmanFord, graph.BFS} {
					t.Run(fmt.Sprintf("n=%d/%s/undirected=%v/%s", n, dk.name, undirected, alg), func(t *testing.T) {
						req := graph.Request{Algorithm: alg}
						want, absSum, absHarm := cpuStats(t, g, req, sources)
						r, err := e.Prepare(context.Background(), g, req)
						if err != nil {
							t.Fatal(err)
						}
						defer r.Close()
						got, err := r.RunStats(context.Background(), sources)
						if err != nil {
							t.Fatal(err)
						}
						compareStats(t, got, want, absSum, absHarm)
						again, err := r.RunStats(context.Background(), sources)
						if err != nil {
							t.Fatal(err)
						}
						if fmt.Sprint(again) != fmt.Sprint(got) {
							t.Fatal("two RunStats of the same sources differ")
						}
					})
				}
			}
		}
	}
}

// TestRunStatsNegative checks RunStats on negative weights (negative sums
// and eccentricities) against the CPU, and that a reachable negative cycle
// gives the *graph.NegativeCycleError Run gives.
func TestRunStatsNegative(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, dk := range distKinds[:4] {
		t.Run(dk.name, func(t *testing.T) {
			n := 203
			o := testgraphs.RandomOptions{N: n, M: 4 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20, Dyadic: true, Potential: 15}
			edges, _ := testgraphs.Random(rng, o)
			g, err := graph.Build(edges, graph.BuildOptions{DistType: dk.typ})
			if err != nil {
				t.Fatal(err)
			}
			req := graph.Request{Algorithm: graph.BellmanFord}
			sources := allVertices(n)
			want, absSum, absHarm := cpuStats(t, g, req, sources)
			r, err := e.Prepare(context.Background(), g, req)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := r.RunStats(context.Background(), sources)
			if err != nil {
				t.Fatal(err)
			}
			compareStats(t, got, want, absSum, absHarm)

			o = testgraphs.RandomOptions{N: 50, M: 100, Kind: dk.kind, MinWeight: 6, MaxWeight: 30, Cycle: 4}
			edges, cycle := testgraphs.Random(rng, o)
			g, err = graph.Build(edges, graph.BuildOptions{DistType: dk.typ})
			if err != nil {
				t.Fatal(err)
			}
			rc, err := e.Prepare(context.Background(), g, req)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			_, err = rc.RunStats(context.Background(), []graph.VertexID{cycle[1], cycle[0]})
			var nc *graph.NegativeCycleError
			if !errors.As(err, &nc) {
				t.Fatalf("RunStats from a vertex on a negative cycle: err = %v", err)
			}
		})
	}
}

// TestRunStatsErrors checks the arguments RunStats refuses.
func TestRunStatsErrors(t *testing.T) {
	e := openEngine(t)
	g := smallCSR(t, []int64{1, 2, 3, 4}, 0)
	r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Dijkstra})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunStats(context.Background(), []graph.VertexID{5}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("source out of range: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.RunStats(ctx, []graph.VertexID{0}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	if s, err := r.RunStats(context.Background(), nil); err != nil || len(s.Reachable) != 0 {
		t.Errorf("no sources: %v, %v", s, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunStats(context.Background(), []graph.VertexID{0}); err == nil {
		t.Error("RunStats on a closed runner: no error")
	}
}
