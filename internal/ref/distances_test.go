package ref

import (
	"errors"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestDistances checks that Distances gives every case of the shared table
// its expected answers: hop counts without weights, Bellman-Ford's answers
// (and its negative cycles) with negative weights, Dijkstra's otherwise.
func TestDistances(t *testing.T) {
	for _, c := range testgraphs.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			g, err := c.CSR()
			if err != nil {
				t.Fatal(err)
			}
			switch g.Type {
			case graph.DistInt32:
				checkDistances[int32](t, &c, g)
			case graph.DistInt64:
				checkDistances[int64](t, &c, g)
			case graph.DistFloat32:
				checkDistances[float32](t, &c, g)
			case graph.DistFloat64:
				checkDistances[float64](t, &c, g)
			}
		})
	}
}

func checkDistances[D graph.Number](t *testing.T, c *testgraphs.Case, g *graph.CSR) {
	ids := c.Vertices()
	n := len(ids)
	want := c.WantMatrix()
	if !g.Weighted {
		want = c.HopMatrix()
	}
	for s := range n {
		got, err := Distances[D](g, graph.VertexID(s))
		if c.ReachesCycle(ids[s]) {
			var nc *graph.NegativeCycleError
			if !errors.As(err, &nc) {
				t.Errorf("source %s: error %v, want a negative cycle", ids[s], err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("source %s: %v", ids[s], err)
		}
		if wantRow := toD[D](want[s*n : (s+1)*n]); !slices.Equal(got, wantRow) {
			t.Errorf("source %s: %v, want %v", ids[s], got, wantRow)
		}
	}
}

// TestDistancesWrongType checks that asking for another distance type
// than the graph's is an error, not a panic.
func TestDistancesWrongType(t *testing.T) {
	c, err := testgraphs.Find("float64-weights")
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.CSR()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Distances[int32](g, 0); err == nil {
		t.Errorf("int32 distances of a %s graph: no error", g.Type)
	}
	if _, err := Distances[float64](g, graph.VertexID(g.NumVertices)); err == nil {
		t.Errorf("a source outside the graph: no error")
	}
}
