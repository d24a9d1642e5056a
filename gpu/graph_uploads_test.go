package gpu

import (
	"context"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestGraphUploadsCountsHostCopies checks GraphUploads: a Prepare that
// adopts the copy BuildCSRResident kept uploads nothing, a second Prepare
// of the same CSR (the copy went with the first runner) and a Prepare of a
// CSR built on the host upload once each.
func TestGraphUploadsCountsHostCopies(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	edges := messyEdges(rng, 300, 1200, testgraphs.Float64, false)
	g, err := e.BuildCSRResident(context.Background(), edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req := graph.Request{Algorithm: graph.BellmanFord}
	for i, c := range []struct {
		csr  *graph.CSR
		want int64
	}{{g, 0}, {g, 1}, {host, 2}} {
		r, err := e.Prepare(context.Background(), c.csr, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.GraphUploads(); got != c.want {
			t.Errorf("Prepare %d: GraphUploads = %d, want %d", i, got, c.want)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
