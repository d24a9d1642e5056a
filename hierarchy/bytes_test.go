package hierarchy

import (
	"context"
	"errors"
	"testing"

	"github.com/pathctl/pathctl/gen"
)

// TestBytes checks the memory Bytes reports against the CSR's on a
// pathctl gen grid (int32 weights): the "about 4 times" of its doc.
func TestBytes(t *testing.T) {
	list, err := gen.Grid(64, 64, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := list.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	g := mustBuildCSR(t, e, false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	csr := 8*int64(len(g.Offsets)) + int64(len(g.Targets))*(4+int64(g.Type.Size()))
	ratio := float64(h.Bytes()) / float64(csr)
	t.Logf("%s: hierarchy %d bytes, CSR %d bytes: %.2f times", g.Type, h.Bytes(), csr, ratio)
	if ratio < 3 || ratio > 5 {
		t.Errorf("the hierarchy is %.2f times the CSR, want about 4", ratio)
	}
	if h.Reverse().Bytes() != h.Bytes() {
		t.Errorf("Reverse has %d bytes, h %d", h.Reverse().Bytes(), h.Bytes())
	}
}

// TestBuildContextStops checks that a cancelled context stops the build
// with an error that wraps the context's.
func TestBuildContextStops(t *testing.T) {
	list, err := gen.Grid(16, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := list.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	g := mustBuildCSR(t, e, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if h, err := BuildContext(ctx, g, Options{}); !errors.Is(err, context.Canceled) || h != nil {
		t.Errorf("cancelled: %v, %v; want context.Canceled", h, err)
	}
	if _, err := BuildContext(context.Background(), g, Options{}); err != nil {
		t.Errorf("not cancelled: %v", err)
	}
}
