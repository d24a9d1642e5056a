package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

func loadCSV(t *testing.T, body string, opt LoadOptions) (*Graph, error) {
	t.Helper()
	tbl, err := arrowio.ReadEdgesFrom(strings.NewReader(body), "g.csv", arrowio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return LoadGraph(tbl, opt)
}

func TestOverflowingGraphsRefused(t *testing.T) {
	for _, c := range []struct {
		name, body string
		dt         graph.DistType
		want       []string
	}{
		{"int64 near 2^62", "src,dst,weight\na,b,4611686018427387904\nb,c,4611686018427387904\n", 0, []string{"edge a -> b", "int64"}},
		{"an INT64_MAX edge", "src,dst,weight\n1,2,9223372036854775807\n", 0, []string{"edge 1 -> 2", "9223372036854775807"}},
		{"negative 2^62", "src,dst,weight\n1,2,-4611686018427387904\n2,3,-4611686018427387904\n3,4,1\n", 0, []string{"edge 1 -> 2", "int64"}},
		{"float64 1e308", "src,dst,weight\n1,2,1e308\n2,3,1e308\n", 0, []string{"edge 1 -> 2", "float64"}},
		{"int32 asked for", "src,dst,weight\n1,2,1500000000\n2,1,1\n", graph.DistInt32, []string{"edge 1 -> 2", "int32", "--dist-type int64"}},
		{"int32 asked for, far too small", "src,dst,weight\n1,2,1099511627776\n2,3,1\n", graph.DistInt32, []string{"edge 1 -> 2", "int32", "--dist-type int64"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := loadCSV(t, c.body, LoadOptions{DistType: c.dt})
			if err == nil {
				g.Close()
				t.Fatal("loaded")
			}
			if !errors.Is(err, ErrDistanceOverflow) {
				t.Fatalf("err = %v, want ErrDistanceOverflow", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
	// A heavy self-loop is dropped, so it does not count.
	g, err := loadCSV(t, "src,dst,weight\n1,1,9223372036854775807\n1,2,5\n", LoadOptions{})
	if err != nil {
		t.Fatalf("heavy self-loop: %v", err)
	}
	g.Close()
	// int32 holds the path lengths, (n-1)·w, but not the sums, n·w: int64,
	// by graph.ChooseDistType's rule, whichever way the graph is built.
	g, err = loadCSV(t, "src,dst,weight\n1,2,1500000000\n2,1,1\n", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.CSR.Type != graph.DistInt64 || graph.ChooseDistType(&g.Table.Edges) != graph.DistInt64 {
		t.Fatalf("distance type %v (graph.ChooseDistType %v), want int64", g.CSR.Type, graph.ChooseDistType(&g.Table.Edges))
	}
}
