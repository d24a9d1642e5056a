package pipeline

import (
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

func TestResolveSourcesDropsRepeats(t *testing.T) {
	tbl, err := arrowio.ReadEdgesFrom(strings.NewReader("src,dst\n7,8\n8,9\n"), "g.csv", arrowio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := LoadGraph(tbl, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	got, err := g.resolveSources([]string{"9", "7", "9", "007", "8", "7"})
	if err != nil {
		t.Fatal(err)
	}
	want := []graph.VertexID{2, 0, 1}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("resolveSources = %v, want %v", got, want)
	}
}
