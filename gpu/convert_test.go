package gpu

import (
	"context"
	"math"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestConvertValues runs integer-weighted graphs (int32 and int64
// distances, an isolated vertex so that some pairs are unreachable)
// through a runner that converts its blocks to floats on the device
// (ConvertValues), by Run, by blocks started ahead and by a resident
// block's rows, and compares every value with a plain runner's distances
// converted on the host: the same number, +Inf for unreachable. It also
// checks the requests ConvertValues refuses.
func TestConvertValues(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	ctx := context.Background()
	n := 403
	for _, dk := range []distKind{distKinds[0], distKinds[1]} {
		edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n - 1, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 50})
		edges.NumVertices = n // vertex n-1 has no arc
		g, err := graph.Build(edges, graph.BuildOptions{DistType: dk.typ})
		if err != nil {
			t.Fatal(err)
		}
		to := graph.DistFloat32
		if g.Type == graph.DistInt64 {
			to = graph.DistFloat64
		}
		var sources []graph.VertexID
		for _, p := range rng.Perm(n)[:90] {
			sources = append(sources, graph.VertexID(p))
		}
		plain, err := e.Prepare(ctx, g, graph.Request{Algorithm: Batched})
		if err != nil {
			t.Fatal(err)
		}
		want := runBlocks(t, plain, n, sources, 90, false)
		if err := plain.Close(); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"run", "ahead", "resident"} {
			r, err := e.Prepare(ctx, g, graph.Request{Algorithm: Batched})
			if err != nil {
				t.Fatal(err)
			}
			if r.ConvertValues(graph.DistFloat32 + graph.DistFloat64 - to) {
				t.Errorf("%s: ConvertValues(%s) of %s distances: true", dk.name, graph.DistFloat32+graph.DistFloat64-to, g.Type)
			}
			if !r.ConvertValues(to) {
				t.Fatalf("%s: ConvertValues(%s) refused", dk.name, to)
			}
			got := graph.NewBlock(sources, n, to, false)
			switch how {
			case "run":
				if err := r.Run(ctx, graph.NewBlock(sources[:3], n, g.Type, false)); err == nil {
					t.Errorf("%s: a block of %s distances into a converting runner: no error", dk.name, g.Type)
				}
				if err := r.Run(ctx, got); err != nil {
					t.Fatal(err)
				}
			case "ahead":
				got = startAhead(t, r, n, sources, []int{31, 1, 40, 18}, 1, false)
			case "resident":
				res, err := r.ComputeResident(ctx, sources)
				if err != nil {
					t.Fatal(err)
				}
				got = startWith(t, r, n, sources, []int{50, 40}, 2, false, func(lo, hi int, b *graph.Block) (*Pending, error) {
					return res.Start(ctx, lo, hi, b)
				})
			}
			if got.Type != to {
				t.Fatalf("%s %s: block of %s", dk.name, how, got.Type)
			}
			unreachable := compareConverted(t, dk.name+" "+how, want, got)
			if unreachable == 0 {
				t.Fatalf("%s %s: no unreachable pair to check", dk.name, how)
			}
			if r.ConvertValues(to) {
				t.Errorf("%s %s: ConvertValues after a block ran: true", dk.name, how)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for name, req := range map[string]graph.Request{
			"predecessors": {Algorithm: Batched, WithPredecessors: true},
			"targets":      {Algorithm: Batched, Targets: sources[:5]},
		} {
			r, err := e.Prepare(ctx, g, req)
			if err != nil {
				t.Fatal(err)
			}
			if r.ConvertValues(to) {
				t.Errorf("%s: ConvertValues with %s: true", dk.name, name)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// compareConverted checks that got (float values) holds want's integer
// distances, +Inf where want has Infinity, and returns the unreachable
// pairs it saw.
func compareConverted(t *testing.T, name string, want, got *graph.Block) int {
	t.Helper()
	at := func(b *graph.Block, i int) float64 {
		switch d := b.Dist.(type) {
		case []int32:
			if d[i] == math.MaxInt32 {
				return math.Inf(1)
			}
			return float64(d[i])
		case []int64:
			if d[i] == math.MaxInt64 {
				return math.Inf(1)
			}
			return float64(d[i])
		case []float32:
			return float64(d[i])
		case []float64:
			return d[i]
		}
		t.Fatalf("%s: block of %T", name, b.Dist)
		return 0
	}
	unreachable := 0
	for i := range len(want.Sources) * want.NumVertices {
		w, g := at(want, i), at(got, i)
		if w != g {
			t.Fatalf("%s: cell %d (source %d) = %v, want %v", name, i, want.Sources[i/want.NumVertices], g, w)
		}
		if math.IsInf(w, 1) {
			unreachable++
		}
	}
	return unreachable
}
