package testgraphs

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/pathctl/pathctl/graph"
)

// WeightKind says which weight column a case has.
type WeightKind uint8

// The weight kinds.
const (
	Unweighted WeightKind = iota // no weight column: every edge weighs 1
	Int                          // integer weights (graph.Edges.IntWeights)
	Float32                      // float32 weights
	Float64                      // float64 weights
)

// String names the kind as an Arrow type would ("int64", "float32", ...).
func (k WeightKind) String() string {
	switch k {
	case Int:
		return "int64"
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return "none"
}

// Pair is a (source, target) pair of external ids.
type Pair = [2]string

// Case is one small graph with its answers.
//
// Want and Hops list the reachable pairs (s, t) with s ≠ t; every vertex
// reaches itself at distance 0 and every pair not listed is unreachable. In
// an undirected case each pair is listed once and holds both ways.
type Case struct {
	Name string
	// StringIDs marks string external ids, ordered byte-wise; otherwise the
	// ids are decimal int64 text, ordered numerically.
	StringIDs bool
	// Src and Dst are the rows of the edge table; Weights is parallel to
	// them unless Kind is Unweighted.
	Src, Dst   []string
	Weights    []float64
	Kind       WeightKind
	Undirected bool

	// WantType is the distance type Build chooses for the weights.
	WantType graph.DistType
	// Want holds the shortest distances (bellman-ford's answers where the
	// case has negative weights).
	Want map[Pair]float64
	// Hops holds the hop counts that bfs and bfs-level report.
	Hops map[Pair]int

	// WantErr is graph.ErrNegativeWeight when some weight is negative: every
	// weighted algorithm except bellman-ford refuses the graph. It is
	// graph.ErrNegativeCycle when, in addition, a negative cycle exists.
	WantErr error
	// CycleVertices are the vertices that lie on a negative cycle, and
	// CycleSources the sources that reach one: bellman-ford fails for them,
	// naming a vertex of CycleVertices, and answers Want for the others.
	CycleVertices []string
	CycleSources  []string
}

// Cases returns the table. The slice and its cases are fresh on every call.
func Cases() []Case {
	return []Case{
		{
			Name: "empty", Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{}, Hops: map[Pair]int{},
		},
		{
			// One self-loop row: the vertex exists, the loop is ignored.
			Name: "single-vertex",
			Src:  []string{"7"}, Dst: []string{"7"}, Weights: []float64{3}, Kind: Int,
			WantType: graph.DistInt32,
			Want:     map[Pair]float64{}, Hops: map[Pair]int{},
		},
		{
			Name:    "self-loops",
			Src:     []string{"1", "1", "2", "2", "3"},
			Dst:     []string{"1", "2", "2", "3", "3"},
			Weights: []float64{1, 4, 0, 5, 2}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{{"1", "2"}: 4, {"1", "3"}: 9, {"2", "3"}: 5},
			Hops: map[Pair]int{{"1", "2"}: 1, {"1", "3"}: 2, {"2", "3"}: 1},
		},
		{
			// Parallel edges keep the smallest weight: 0->1 is 2, 1->2 is 1,
			// so 0->2 is min(4, 2+1) = 3.
			Name:    "duplicate-edges",
			Src:     []string{"0", "0", "0", "1", "1", "0"},
			Dst:     []string{"1", "1", "1", "2", "2", "2"},
			Weights: []float64{5, 2, 7, 3, 1, 4}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{{"0", "1"}: 2, {"1", "2"}: 1, {"0", "2"}: 3},
			Hops: map[Pair]int{{"0", "1"}: 1, {"1", "2"}: 1, {"0", "2"}: 1},
		},
		{
			// A zero-weight cycle 0->1->2->0 and an exit 2->3 (5) cheaper
			// than the direct 0->3 (6).
			Name:    "zero-weights",
			Src:     []string{"0", "1", "2", "2", "0"},
			Dst:     []string{"1", "2", "0", "3", "3"},
			Weights: []float64{0, 0, 0, 5, 6}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{
				{"0", "1"}: 0, {"0", "2"}: 0, {"0", "3"}: 5,
				{"1", "2"}: 0, {"1", "0"}: 0, {"1", "3"}: 5,
				{"2", "0"}: 0, {"2", "1"}: 0, {"2", "3"}: 5,
			},
			Hops: map[Pair]int{
				{"0", "1"}: 1, {"0", "2"}: 2, {"0", "3"}: 1,
				{"1", "2"}: 1, {"1", "0"}: 2, {"1", "3"}: 2,
				{"2", "0"}: 1, {"2", "1"}: 2, {"2", "3"}: 1,
			},
		},
		{
			// Directed: 3 reaches only 2, and nothing reaches 0 or 3.
			Name: "unreachable",
			Src:  []string{"0", "1", "3"}, Dst: []string{"1", "2", "2"},
			Weights: []float64{2, 3, 1}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{{"0", "1"}: 2, {"0", "2"}: 5, {"1", "2"}: 3, {"3", "2"}: 1},
			Hops: map[Pair]int{{"0", "1"}: 1, {"0", "2"}: 2, {"1", "2"}: 1, {"3", "2"}: 1},
		},
		{
			// Byte-wise order: "B" (0x42) < "a" < "ab" < "b".
			Name: "string-ids", StringIDs: true,
			Src:     []string{"b", "a", "B", "b"},
			Dst:     []string{"a", "B", "ab", "ab"},
			Weights: []float64{1, 2, 3, 10}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{
				{"b", "a"}: 1, {"b", "B"}: 3, {"b", "ab"}: 6,
				{"a", "B"}: 2, {"a", "ab"}: 5, {"B", "ab"}: 3,
			},
			Hops: map[Pair]int{
				{"b", "a"}: 1, {"b", "B"}: 2, {"b", "ab"}: 1,
				{"a", "B"}: 1, {"a", "ab"}: 2, {"B", "ab"}: 1,
			},
		},
		{
			// Two shortest paths 0->1->3 and 0->2->3, both of length 3.
			Name:    "ties",
			Src:     []string{"0", "0", "1", "2", "3"},
			Dst:     []string{"1", "2", "3", "3", "4"},
			Weights: []float64{1, 2, 2, 1, 1}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{
				{"0", "1"}: 1, {"0", "2"}: 2, {"0", "3"}: 3, {"0", "4"}: 4,
				{"1", "3"}: 2, {"1", "4"}: 3, {"2", "3"}: 1, {"2", "4"}: 2, {"3", "4"}: 1,
			},
			Hops: map[Pair]int{
				{"0", "1"}: 1, {"0", "2"}: 1, {"0", "3"}: 2, {"0", "4"}: 3,
				{"1", "3"}: 1, {"1", "4"}: 2, {"2", "3"}: 1, {"2", "4"}: 2, {"3", "4"}: 1,
			},
		},
		{
			// 2->1 weighs -3: 0->2->1 = -1 beats 0->1 = 4; no cycle.
			Name:    "negative-weights",
			Src:     []string{"0", "0", "2", "1", "2"},
			Dst:     []string{"1", "2", "1", "3", "3"},
			Weights: []float64{4, 2, -3, 2, 5}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{
				{"0", "1"}: -1, {"0", "2"}: 2, {"0", "3"}: 1,
				{"1", "3"}: 2, {"2", "1"}: -3, {"2", "3"}: -1,
			},
			Hops: map[Pair]int{
				{"0", "1"}: 1, {"0", "2"}: 1, {"0", "3"}: 2,
				{"1", "3"}: 1, {"2", "1"}: 1, {"2", "3"}: 1,
			},
			WantErr: graph.ErrNegativeWeight,
		},
		{
			// The cycle 1->2->3->1 weighs -2-1+2 = -1. 0 reaches it; 4 and 5
			// do not.
			Name:    "negative-cycle",
			Src:     []string{"0", "1", "2", "3", "3", "5"},
			Dst:     []string{"1", "2", "3", "1", "4", "4"},
			Weights: []float64{1, -2, -1, 2, 1, 2}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{{"5", "4"}: 2},
			Hops: map[Pair]int{
				{"0", "1"}: 1, {"0", "2"}: 2, {"0", "3"}: 3, {"0", "4"}: 4,
				{"1", "2"}: 1, {"1", "3"}: 2, {"1", "4"}: 3,
				{"2", "3"}: 1, {"2", "1"}: 2, {"2", "4"}: 2,
				{"3", "1"}: 1, {"3", "4"}: 1, {"3", "2"}: 2,
				{"5", "4"}: 1,
			},
			WantErr:       graph.ErrNegativeCycle,
			CycleVertices: []string{"1", "2", "3"},
			CycleSources:  []string{"0", "1", "2", "3"},
		},
		{
			Name: "undirected", Undirected: true,
			Src:     []string{"1", "2", "1", "3"},
			Dst:     []string{"2", "3", "3", "4"},
			Weights: []float64{3, 4, 10, 1}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{
				{"1", "2"}: 3, {"1", "3"}: 7, {"1", "4"}: 8,
				{"2", "3"}: 4, {"2", "4"}: 5, {"3", "4"}: 1,
			},
			Hops: map[Pair]int{
				{"1", "2"}: 1, {"1", "3"}: 1, {"1", "4"}: 2,
				{"2", "3"}: 1, {"2", "4"}: 2, {"3", "4"}: 1,
			},
		},
		{
			// Dyadic weights: every sum is exact in float32 and float64.
			Name:    "float64-weights",
			Src:     []string{"0", "1", "0", "2", "0"},
			Dst:     []string{"1", "2", "2", "3", "3"},
			Weights: []float64{0.5, 0.25, 1, 1.5, 2.5}, Kind: Float64, WantType: graph.DistFloat64,
			Want: map[Pair]float64{
				{"0", "1"}: 0.5, {"0", "2"}: 0.75, {"0", "3"}: 2.25,
				{"1", "2"}: 0.25, {"1", "3"}: 1.75, {"2", "3"}: 1.5,
			},
			Hops: map[Pair]int{
				{"0", "1"}: 1, {"0", "2"}: 1, {"0", "3"}: 1,
				{"1", "2"}: 1, {"1", "3"}: 2, {"2", "3"}: 1,
			},
		},
		{
			Name:    "float32-weights",
			Src:     []string{"0", "1", "1", "0"},
			Dst:     []string{"1", "0", "2", "2"},
			Weights: []float64{0.125, 0.375, 2.5, 3}, Kind: Float32, WantType: graph.DistFloat32,
			Want: map[Pair]float64{
				{"0", "1"}: 0.125, {"0", "2"}: 2.625,
				{"1", "0"}: 0.375, {"1", "2"}: 2.5,
			},
			Hops: map[Pair]int{{"0", "1"}: 1, {"0", "2"}: 1, {"1", "0"}: 1, {"1", "2"}: 1},
		},
		{
			// (n-1)·max|w| = 2·5e9 does not fit int32: distances are int64.
			// Numeric order of the ids: 3 < 20 < 100.
			Name:    "large-int64",
			Src:     []string{"100", "20", "100"},
			Dst:     []string{"20", "3", "3"},
			Weights: []float64{2e9, 2e9, 5e9}, Kind: Int, WantType: graph.DistInt64,
			Want: map[Pair]float64{{"100", "20"}: 2e9, {"100", "3"}: 4e9, {"20", "3"}: 2e9},
			Hops: map[Pair]int{{"100", "20"}: 1, {"100", "3"}: 1, {"20", "3"}: 1},
		},
		{
			Name:    "disconnected-components",
			Src:     []string{"0", "1", "2", "3", "4"},
			Dst:     []string{"1", "2", "0", "4", "3"},
			Weights: []float64{1, 1, 1, 2, 2}, Kind: Int, WantType: graph.DistInt32,
			Want: map[Pair]float64{
				{"0", "1"}: 1, {"0", "2"}: 2, {"1", "2"}: 1, {"1", "0"}: 2,
				{"2", "0"}: 1, {"2", "1"}: 2, {"3", "4"}: 2, {"4", "3"}: 2,
			},
			Hops: map[Pair]int{
				{"0", "1"}: 1, {"0", "2"}: 2, {"1", "2"}: 1, {"1", "0"}: 2,
				{"2", "0"}: 1, {"2", "1"}: 2, {"3", "4"}: 1, {"4", "3"}: 1,
			},
		},
		unweightedCase(),
	}
}

// unweightedCase has no weight column, so distances are hop counts; its
// negative ids order numerically: -3 < -1 < 2 < 5.
func unweightedCase() Case {
	hops := map[Pair]int{
		{"-3", "-1"}: 1, {"-3", "2"}: 2, {"-3", "5"}: 1,
		{"-1", "2"}: 1, {"-1", "5"}: 2, {"-1", "-3"}: 3,
		{"2", "5"}: 1, {"2", "-3"}: 2, {"2", "-1"}: 3,
		{"5", "-3"}: 1, {"5", "-1"}: 2, {"5", "2"}: 3,
	}
	want := make(map[Pair]float64, len(hops))
	for p, h := range hops {
		want[p] = float64(h)
	}
	return Case{
		Name: "unweighted",
		Src:  []string{"-3", "-1", "2", "-3", "5"},
		Dst:  []string{"-1", "2", "5", "5", "-3"},
		Kind: Unweighted, WantType: graph.DistInt32,
		Want: want, Hops: hops,
	}
}

// Find returns the case named name.
func Find(name string) (Case, error) {
	for _, c := range Cases() {
		if c.Name == name {
			return c, nil
		}
	}
	return Case{}, fmt.Errorf("testgraphs: no case %q", name)
}

// Vertices returns the external ids in vertex order: numeric order for
// integer ids, byte-wise order for strings. Dense id i is Vertices()[i].
func (c *Case) Vertices() []string {
	seen := map[string]bool{}
	var ids []string
	for _, list := range [][]string{c.Src, c.Dst} {
		for _, id := range list {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if c.StringIDs {
		slices.Sort(ids)
		return ids
	}
	slices.SortFunc(ids, func(a, b string) int {
		x, _ := strconv.ParseInt(a, 10, 64)
		y, _ := strconv.ParseInt(b, 10, 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return ids
}

// Index maps external ids to dense ids.
func (c *Case) Index() map[string]graph.VertexID {
	idx := map[string]graph.VertexID{}
	for i, id := range c.Vertices() {
		idx[id] = graph.VertexID(i)
	}
	return idx
}

// IntIDs parses Src and Dst as int64 ids (for readers fed integer columns).
// It fails for a case with string ids.
func (c *Case) IntIDs() (src, dst []int64, err error) {
	if c.StringIDs {
		return nil, nil, fmt.Errorf("testgraphs: case %s has string ids", c.Name)
	}
	parse := func(list []string) ([]int64, error) {
		out := make([]int64, len(list))
		for i, s := range list {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("testgraphs: case %s: %w", c.Name, err)
			}
			out[i] = v
		}
		return out, nil
	}
	if src, err = parse(c.Src); err != nil {
		return nil, nil, err
	}
	dst, err = parse(c.Dst)
	return src, dst, err
}

// Edges returns the rows over dense ids, with the weight slice of Kind.
func (c *Case) Edges() *graph.Edges {
	idx := c.Index()
	m := len(c.Src)
	e := &graph.Edges{NumVertices: len(idx), Src: make([]graph.VertexID, m), Dst: make([]graph.VertexID, m)}
	for i := range m {
		e.Src[i], e.Dst[i] = idx[c.Src[i]], idx[c.Dst[i]]
	}
	switch c.Kind {
	case Int:
		e.IntWeights = make([]int64, m)
		for i, w := range c.Weights {
			e.IntWeights[i] = int64(w)
		}
	case Float32:
		e.Float32Weights = make([]float32, m)
		for i, w := range c.Weights {
			e.Float32Weights[i] = float32(w)
		}
	case Float64:
		e.Float64Weights = slices.Clone(c.Weights)
		if e.Float64Weights == nil {
			e.Float64Weights = []float64{}
		}
	}
	return e
}

// CSR builds the case's graph with graph.Build.
func (c *Case) CSR() (*graph.CSR, error) {
	return graph.Build(c.Edges(), graph.BuildOptions{Undirected: c.Undirected})
}

// HasNegative reports whether some weight is negative.
func (c *Case) HasNegative() bool { return c.WantErr != nil }

// ReachesCycle reports whether bellman-ford must fail from source src.
func (c *Case) ReachesCycle(src string) bool { return slices.Contains(c.CycleSources, src) }

// WantMatrix returns the expected distances as an n×n row-major matrix in
// vertex order, +Inf where unreachable. Rows of sources that reach a
// negative cycle hold NaN: they have no answer.
func (c *Case) WantMatrix() []float64 {
	return c.matrix(c.Want)
}

// HopMatrix returns the expected hop counts like WantMatrix.
func (c *Case) HopMatrix() []float64 {
	m := make(map[Pair]float64, len(c.Hops))
	for p, h := range c.Hops {
		m[p] = float64(h)
	}
	out := c.matrix(m)
	n := len(c.Vertices())
	// Hop counts exist even from sources that reach a negative cycle.
	idx := c.Index()
	for _, s := range c.CycleSources {
		i := int(idx[s])
		for j := range n {
			out[i*n+j] = math.Inf(1)
		}
		out[i*n+i] = 0
		for p, h := range m {
			if p[0] == s {
				out[i*n+int(idx[p[1]])] = h
			}
		}
	}
	return out
}

func (c *Case) matrix(pairs map[Pair]float64) []float64 {
	idx := c.Index()
	n := len(idx)
	out := make([]float64, n*n)
	for i := range out {
		out[i] = math.Inf(1)
	}
	for i := range n {
		out[i*n+i] = 0
	}
	for p, d := range pairs {
		s, t := int(idx[p[0]]), int(idx[p[1]])
		out[s*n+t] = d
		if c.Undirected {
			out[t*n+s] = d
		}
	}
	for _, s := range c.CycleSources {
		i := int(idx[s])
		for j := range n {
			out[i*n+j] = math.NaN()
		}
	}
	return out
}
