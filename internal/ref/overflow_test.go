package ref

import (
	"errors"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestOraclesCatchOverflow: path lengths that leave the distance type are
// errors, not saturated or dropped distances.
func TestOraclesCatchOverflow(t *testing.T) {
	chain := func(w ...int64) *graph.CSR {
		e := &graph.Edges{NumVertices: len(w) + 1, IntWeights: w}
		for i := range w {
			e.Src = append(e.Src, graph.VertexID(i))
			e.Dst = append(e.Dst, graph.VertexID(i+1))
		}
		g, err := graph.Build(e, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	const big = int64(1) << 62
	if _, err := Dijkstra[int64](chain(big, big), 0); !errors.Is(err, ErrOverflow) {
		t.Errorf("Dijkstra, 2^62 + 2^62: err = %v, want ErrOverflow", err)
	}
	if _, err := Dijkstra[int64](chain(1, 1<<63-2), 0); !errors.Is(err, ErrOverflow) {
		t.Errorf("Dijkstra, a sum equal to Infinity: err = %v, want ErrOverflow", err)
	}
	if _, err := BellmanFord[int64](chain(big, big), 0); !errors.Is(err, ErrOverflow) {
		t.Errorf("BellmanFord, 2^62 + 2^62: err = %v, want ErrOverflow", err)
	}
	if _, err := BellmanFord[int64](chain(-big, -big, -big), 0); !errors.Is(err, ErrOverflow) {
		t.Errorf("BellmanFord, 3 × -2^62: err = %v, want ErrOverflow", err)
	}
	// Within range, the oracles answer.
	if d, err := Dijkstra[int64](chain(big/2, big/2, big/2), 0); err != nil || d[3] != 3*(big/2) {
		t.Errorf("Dijkstra within range: %v, %v", d, err)
	}

	fe := &graph.Edges{NumVertices: 3, Src: []graph.VertexID{0, 1}, Dst: []graph.VertexID{1, 2}, Float64Weights: []float64{1e308, 1e308}}
	fg, err := graph.Build(fe, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Dijkstra[float64](fg, 0); !errors.Is(err, ErrOverflow) {
		t.Errorf("Dijkstra, 1e308 + 1e308: err = %v, want ErrOverflow", err)
	}
	if _, err := BellmanFord[float64](fg, 0); !errors.Is(err, ErrOverflow) {
		t.Errorf("BellmanFord, 1e308 + 1e308: err = %v, want ErrOverflow", err)
	}
}
