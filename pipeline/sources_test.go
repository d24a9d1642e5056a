package pipeline

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
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

// TestResolveLongSourceLists checks sources and targets long enough to be
// looked up on several goroutines (on 1, 3 and 8 cores) against one
// lookup at a time: repeats across the parts' borders are kept at their
// first place, targets keep every repeat, and an unknown id is named,
// the first of several, wherever it falls.
func TestResolveLongSourceLists(t *testing.T) {
	const n = 5000
	var csv strings.Builder
	csv.WriteString("src,dst\n")
	for i := range n - 1 {
		fmt.Fprintf(&csv, "%d,%d\n", 3*i, 3*i+3) // ids 0, 3, 6, ...
	}
	tbl, err := arrowio.ReadEdgesFrom(strings.NewReader(csv.String()), "g.csv", arrowio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := LoadGraph(tbl, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	rng := rand.New(rand.NewPCG(3, 9))
	ids := make([]string, 9*lookupPart+17)
	for i := range ids {
		ids[i] = fmt.Sprint(3 * rng.IntN(n))
	}
	var wantSources, wantTargets []graph.VertexID
	seen := map[graph.VertexID]bool{}
	for _, id := range ids {
		v, err := g.Table.Vertices.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		wantTargets = append(wantTargets, v)
		if !seen[v] {
			seen[v] = true
			wantSources = append(wantSources, v)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, cores := range []int{1, 3, 8} {
		runtime.GOMAXPROCS(cores)
		sources, err := g.resolveSources(ids)
		if err != nil || !slices.Equal(sources, wantSources) {
			t.Fatalf("%d cores: resolveSources gives %d sources (%v), want %d", cores, len(sources), err, len(wantSources))
		}
		targets, err := g.resolveTargets(ids)
		if err != nil || !slices.Equal(targets, wantTargets) {
			t.Fatalf("%d cores: resolveTargets gives %d targets (%v), want %d", cores, len(targets), err, len(wantTargets))
		}
		for _, at := range []int{0, lookupPart - 1, lookupPart, 5*lookupPart + 3, len(ids) - 1} {
			bad := slices.Clone(ids)
			bad[at] = "4" // not a multiple of 3: no vertex
			if at+lookupPart < len(ids) {
				bad[at+lookupPart] = "x5" // a later bad id, in another part
			}
			if _, err := g.resolveSources(bad); err == nil || !strings.Contains(err.Error(), `source "4"`) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("%d cores, unknown id at %d: resolveSources error %v, want one naming source \"4\"", cores, at, err)
			}
			if _, err := g.resolveTargets(bad); err == nil || !strings.Contains(err.Error(), `"4"`) || !errors.Is(err, ErrUnknownTarget) {
				t.Fatalf("%d cores, unknown id at %d: resolveTargets error %v, want one naming \"4\"", cores, at, err)
			}
		}
	}
}
