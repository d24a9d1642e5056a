package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// caseGraph turns a shared test case into a pipeline graph with external ids.
func caseGraph(t *testing.T, c *testgraphs.Case) *Graph {
	t.Helper()
	v := &arrowio.Vertices{}
	if c.StringIDs {
		v.Type = arrow.BinaryTypes.String
		v.Strings = c.Vertices()
	} else {
		v.Type = arrow.PrimitiveTypes.Int64
		v.Ints = []int64{}
		for _, id := range c.Vertices() {
			x, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			v.Ints = append(v.Ints, x)
		}
	}
	tbl := &arrowio.EdgeTable{Edges: *c.Edges(), Vertices: v, Name: c.Name}
	g, err := LoadGraph(tbl, LoadOptions{Undirected: c.Undirected})
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return g
}

// collectMatrix runs the matrix layout and returns the distances as float64
// (+Inf for unreachable, whether null or +Inf in the record).
func collectMatrix(t *testing.T, g *Graph, opt Options) ([]float64, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Layout = arrowio.LayoutMatrix
	opt.Allocator = mem
	var out []float64
	_, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		list := r.Column(1).(*array.FixedSizeList)
		vals := list.ListValues()
		for i := 0; i < vals.Len(); i++ {
			if vals.IsNull(i) {
				out = append(out, math.Inf(1))
				continue
			}
			switch a := vals.(type) {
			case *array.Int32:
				out = append(out, float64(a.Value(i)))
			case *array.Int64:
				out = append(out, float64(a.Value(i)))
			case *array.Float32:
				out = append(out, float64(a.Value(i)))
			case *array.Float64:
				out = append(out, a.Value(i))
			default:
				return fmt.Errorf("distance type %s", vals.DataType())
			}
		}
		return nil
	})
	return out, err
}

var algorithms = []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge, graph.BFS, graph.BFSLevel, graph.BellmanFord, graph.Auto}

// engines lists the engines to test here: the CPU always, the GPU where
// one is usable.
func engines(t *testing.T) []string {
	if st := GPUStatus(); st.Available {
		return []string{"cpu", "gpu"}
	} else {
		t.Logf("GPU engine not tested: %s", st.Reason)
	}
	return []string{"cpu"}
}

func TestSharedCasesEveryAlgorithm(t *testing.T) {
	for _, engine := range engines(t) {
		testSharedCases(t, engine)
	}
}

func testSharedCases(t *testing.T, engine string) {
	for _, c := range testgraphs.Cases() {
		for _, algo := range algorithms {
			t.Run(engine+"/"+c.Name+"/"+string(algo), func(t *testing.T) {
				g := caseGraph(t, &c)
				got, err := collectMatrix(t, g, Options{Query: Query{Algorithm: algo}, Resources: Resources{Engine: engine, MaxBlock: 2}})
				want := c.WantMatrix()
				if algo.CountsHops() || (algo == graph.Auto && c.Kind == testgraphs.Unweighted) {
					want = c.HopMatrix()
				}
				switch {
				case c.WantErr != nil && !algo.CountsHops() && algo != graph.BellmanFord && algo != graph.Auto:
					if !errors.Is(err, graph.ErrNegativeWeight) || !strings.Contains(err.Error(), "bellman-ford") {
						t.Fatalf("want a negative-weight error naming bellman-ford, got %v", err)
					}
					return
				case len(c.CycleSources) > 0 && !algo.CountsHops():
					if !errors.Is(err, graph.ErrNegativeCycle) {
						t.Fatalf("want a negative cycle error, got %v", err)
					}
					named := false
					for _, v := range c.CycleVertices {
						named = named || strings.Contains(err.Error(), "vertex "+v+" ")
					}
					if !named {
						t.Fatalf("%q names no vertex of the cycle %v", err, c.CycleVertices)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%d distances, want %d", len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						n := len(c.Vertices())
						t.Fatalf("distance %s -> %s = %v, want %v", c.Vertices()[i/n], c.Vertices()[i%n], got[i], want[i])
					}
				}
			})
		}
	}
}

// TestLayoutsAgree checks that pairs and stats hold what the matrix holds.
func TestLayoutsAgree(t *testing.T) {
	for _, c := range testgraphs.Cases() {
		if c.WantErr != nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			g := caseGraph(t, &c)
			matrix, err := collectMatrix(t, g, Options{Query: Query{Algorithm: graph.Dijkstra}, Resources: Resources{Engine: "cpu"}})
			if err != nil {
				t.Fatal(err)
			}
			n := g.NumVertices()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rows := 0
			_, err = runQuery(context.Background(), g, Options{Query: Query{Algorithm: graph.Dijkstra, Layout: arrowio.LayoutPairs, WithPredecessors: true}, Resources: Resources{Engine: "cpu", Allocator: mem}}, func(r arrow.RecordBatch) error {
				rows += int(r.NumRows())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			reachable := 0
			for _, d := range matrix {
				if !math.IsInf(d, 1) {
					reachable++
				}
			}
			if rows != reachable {
				t.Fatalf("pairs has %d rows, the matrix %d reachable entries", rows, reachable)
			}
			_, err = runQuery(context.Background(), g, Options{Query: Query{Algorithm: graph.Dijkstra, Layout: arrowio.LayoutStats}, Resources: Resources{Engine: "cpu", Allocator: mem}}, func(r arrow.RecordBatch) error {
				reach := r.Column(1).(*array.Int64)
				for i := 0; i < int(r.NumRows()); i++ {
					want := 0
					for v := 0; v < n; v++ {
						if v != i && !math.IsInf(matrix[i*n+v], 1) {
							want++
						}
					}
					if int(reach.Value(i)) != want {
						return fmt.Errorf("source %d reaches %d, matrix says %d", i, reach.Value(i), want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestPlanBlocks(t *testing.T) {
	for _, tc := range []struct {
		n        int
		per, bud int64
		maxBlock int
		want     int
	}{
		{10, 100, 1 << 20, 0, 1}, {10, 100, 200, 0, 10}, {10, 100, 1000, 0, 2}, {10, 100, 1 << 20, 3, 4}, {0, 1, 1, 0, 0},
	} {
		blocks := PlanBlocks(tc.n, tc.per, tc.bud, tc.maxBlock)
		if len(blocks) != tc.want {
			t.Errorf("PlanBlocks(%d, %d, %d, %d) = %v, want %d blocks", tc.n, tc.per, tc.bud, tc.maxBlock, blocks, tc.want)
		}
		next := 0
		for _, b := range blocks {
			if b.Start != next || b.End <= b.Start {
				t.Fatalf("blocks %v do not tile [0,%d)", blocks, tc.n)
			}
			next = b.End
		}
		if next != tc.n {
			t.Fatalf("blocks %v end at %d, want %d", blocks, next, tc.n)
		}
	}
}

// TestBudgetDoesNotChangeResults runs the same request under budgets from
// one source per block to unlimited.
func TestBudgetDoesNotChangeResults(t *testing.T) {
	c, err := testgraphs.Find("ties")
	if err != nil {
		t.Fatal(err)
	}
	g := caseGraph(t, &c)
	base, err := collectMatrix(t, g, Options{Resources: Resources{Engine: "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, maxBlock := range []int{1, 2, 3} {
		got, err := collectMatrix(t, g, Options{Resources: Resources{Engine: "cpu", MaxBlock: maxBlock}})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(base) {
			t.Fatalf("max block %d: %v, want %v", maxBlock, got, base)
		}
	}
	if _, err := collectMatrix(t, g, Options{Resources: Resources{Engine: "cpu", MemBudget: 1}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a budget below one source: %v", err)
	}
}

// TestEnginesAgreeOnRandomGraphs compares the GPU engine with the CPU engine
// through the whole pipeline where a GPU is usable.
func TestEnginesAgreeOnRandomGraphs(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 3))
	for trial := 0; trial < 20; trial++ {
		n := 1 + rng.IntN(500)
		e := graph.Edges{NumVertices: n}
		for i := 0; i < n*4; i++ {
			e.Src = append(e.Src, int32(rng.IntN(n)))
			e.Dst = append(e.Dst, int32(rng.IntN(n)))
			e.IntWeights = append(e.IntWeights, int64(rng.IntN(100)))
		}
		v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
		for i := 0; i < n; i++ {
			v.Ints = append(v.Ints, int64(i))
		}
		g, err := LoadGraph(&arrowio.EdgeTable{Edges: e, Vertices: v, Name: "random"}, LoadOptions{Undirected: trial%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		for _, algo := range algorithms {
			want, err := collectMatrix(t, g, Options{Query: Query{Algorithm: algo}, Resources: Resources{Engine: "cpu"}})
			if err != nil {
				t.Fatalf("seed %d: cpu %s: %v", seed, algo, err)
			}
			got, err := collectMatrix(t, g, Options{Query: Query{Algorithm: algo}, Resources: Resources{Engine: "gpu", MaxBlock: 1 + rng.IntN(64)}})
			if err != nil {
				t.Fatalf("seed %d: gpu %s: %v", seed, algo, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d: trial %d: %s: GPU and CPU differ", seed, trial, algo)
			}
		}
	}
}
