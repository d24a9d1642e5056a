package testgraphs

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestTableShape checks the table's own consistency: every answer names
// vertices of its graph, the hop and distance tables agree on reachability,
// Build accepts every graph with the promised distance type, and the
// helpers agree with each other. (The answers themselves are checked
// against the oracles in internal/ref.)
func TestTableShape(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Cases() {
		if names[c.Name] {
			t.Errorf("duplicate case name %q", c.Name)
		}
		names[c.Name] = true
		if len(c.Src) != len(c.Dst) || c.Kind != Unweighted && len(c.Weights) != len(c.Src) {
			t.Errorf("%s: %d sources, %d targets, %d weights", c.Name, len(c.Src), len(c.Dst), len(c.Weights))
			continue
		}
		ids := c.Vertices()
		idx := c.Index()
		for _, p := range slices.Concat(keys(c.Want), keys(c.Hops)) {
			if _, ok := idx[p[0]]; !ok {
				t.Errorf("%s: pair %v names an unknown vertex", c.Name, p)
			}
			if _, ok := idx[p[1]]; !ok {
				t.Errorf("%s: pair %v names an unknown vertex", c.Name, p)
			}
			if p[0] == p[1] {
				t.Errorf("%s: pair %v on the diagonal", c.Name, p)
			}
		}
		g, err := c.CSR()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if g.NumVertices != len(ids) || g.Type != c.WantType {
			t.Errorf("%s: %d vertices of %v, want %d of %v", c.Name, g.NumVertices, g.Type, len(ids), c.WantType)
		}
		if (c.WantErr != nil) != g.HasNegative() {
			t.Errorf("%s: WantErr %v but HasNegative %v", c.Name, c.WantErr, g.HasNegative())
		}
		if errors.Is(c.WantErr, graph.ErrNegativeCycle) != (len(c.CycleVertices) > 0) || len(c.CycleVertices) > 0 != (len(c.CycleSources) > 0) {
			t.Errorf("%s: cycle fields inconsistent", c.Name)
		}
		n := len(ids)
		want, hops := c.WantMatrix(), c.HopMatrix()
		for i := range n * n {
			s := ids[i/n]
			if c.ReachesCycle(s) {
				if !math.IsNaN(want[i]) {
					t.Errorf("%s: row of %s should be NaN", c.Name, s)
				}
				continue
			}
			if math.IsInf(want[i], 1) != math.IsInf(hops[i], 1) {
				t.Errorf("%s: %s -> %s reachable in one table only", c.Name, s, ids[i%n])
			}
		}
		if !c.StringIDs {
			src, dst, err := c.IntIDs()
			if err != nil || len(src) != len(c.Src) || len(dst) != len(c.Dst) {
				t.Errorf("%s: IntIDs: %v", c.Name, err)
			}
			for i := 1; i < n; i++ {
				if x, y := parse(ids[i-1]), parse(ids[i]); x >= y {
					t.Errorf("%s: vertex order %v not numeric", c.Name, ids)
				}
			}
		} else if !slices.IsSorted(ids) {
			t.Errorf("%s: vertex order %v not byte-wise", c.Name, ids)
		}
	}
	for _, name := range []string{"empty", "single-vertex", "self-loops", "duplicate-edges", "zero-weights",
		"unreachable", "string-ids", "ties", "negative-weights", "negative-cycle", "undirected",
		"float64-weights", "float32-weights", "large-int64", "disconnected-components", "unweighted"} {
		if _, err := Find(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := Find("nope"); err == nil {
		t.Error("Find of an unknown case succeeded")
	}
}

func parse(s string) int64 {
	c := Case{Src: []string{s}}
	v, _, _ := c.IntIDs()
	return v[0]
}

func keys[V any](m map[Pair]V) []Pair {
	var out []Pair
	for p := range m {
		out = append(out, p)
	}
	return out
}

// TestRandom checks the generator's promises: sizes, weight ranges, the
// planted cycle, and potentials that keep cycle weights.
func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	e, cycle := Random(rng, RandomOptions{N: 50, M: 200, Kind: Int, MinWeight: 5, MaxWeight: 9, Duplicates: 10, Cycle: 4})
	if e.Len() != 214 || len(e.IntWeights) != 214 || len(cycle) != 4 {
		t.Fatalf("%d rows, %d weights, cycle %v", e.Len(), len(e.IntWeights), cycle)
	}
	for i, w := range e.IntWeights[:210] {
		if w < 5 || w > 9 {
			t.Fatalf("row %d weight %d outside [5, 9]", i, w)
		}
	}
	for i, v := range cycle {
		j := 210 + i
		if e.Src[j] != v || e.Dst[j] != cycle[(i+1)%4] || e.IntWeights[j] != -1 {
			t.Fatalf("planted arc %d: %d -> %d (%d)", i, e.Src[j], e.Dst[j], e.IntWeights[j])
		}
	}
	e, _ = Random(rng, RandomOptions{N: 30, M: 100, Kind: Float64, MinWeight: 0, MaxWeight: 3, Dyadic: true})
	for _, w := range e.Float64Weights {
		if w*8 != math.Trunc(w*8) || w < 0 || w > 3 {
			t.Fatalf("weight %v not a multiple of 1/8 in [0, 3]", w)
		}
	}
	// With potentials, a closed walk keeps its base weight: check 2-cycles.
	e, _ = Random(rng, RandomOptions{N: 5, M: 400, Kind: Int, MinWeight: 0, MaxWeight: 0, Potential: 9})
	base := map[[2]graph.VertexID]int64{}
	for i := range e.Src {
		base[[2]graph.VertexID{e.Src[i], e.Dst[i]}] = e.IntWeights[i]
	}
	for p, w := range base {
		if back, ok := base[[2]graph.VertexID{p[1], p[0]}]; ok && w+back != 0 {
			t.Fatalf("2-cycle %v weighs %d, want 0", p, w+back)
		}
	}
}
