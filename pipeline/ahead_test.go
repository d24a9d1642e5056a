package pipeline

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestPlanBesideTheOpening checks when the GPU kernel's plan is made beside
// the opening, after the CSR built there: for auto runs of every vertex of
// a graph without negative weights while the opening is under way; not
// for a few sources, another algorithm, negative weights, or with
// PATHCTL_PLAN_AHEAD=off. A plan made succeeds; one made where the open
// then failed is not kept by the graph.
func TestPlanBesideTheOpening(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	tbl := randomTable(rng, 3*minGPUSources, 12*minGPUSources, testgraphs.Int)
	negative := randomTable(rng, 3*minGPUSources, 12*minGPUSources, testgraphs.Int)
	negative.Edges.IntWeights[3] = -1
	bopt := graph.BuildOptions{Undirected: true}
	noGPU := errors.New("gpu: no device here")

	// besidePlan builds tbl's CSR beside an opening held open and reports
	// whether a plan came with it.
	besidePlan := func(t *testing.T, tbl *arrowio.EdgeTable, opt LoadOptions) bool {
		t.Helper()
		opener := newBlockedOpener(noGPU)
		opening := OpenDeviceWith(opener.open)
		opener.waitStarted(t)
		defer close(opener.release)
		g := &Graph{Table: tbl, Undirected: true}
		beside := g.startBuildBesideOpening(opening, bopt, plansAhead(opt))
		if beside == nil {
			t.Fatal("nothing built beside an opening under way")
		}
		b := <-beside
		if b.err != nil {
			t.Fatal(b.err)
		}
		if opening.failed() {
			t.Fatal("an opening under way says it failed")
		}
		if b.ahead == nil {
			return false
		}
		if err := b.ahead.Wait(); err != nil {
			t.Fatalf("the plan made beside the opening: %v", err)
		}
		return true
	}
	cases := []struct {
		name string
		tbl  *arrowio.EdgeTable
		opt  LoadOptions
		env  string
		want bool
	}{
		{"auto, every vertex", tbl, LoadOptions{Engine: "auto"}, "", true},
		{"algorithm auto named", tbl, LoadOptions{Engine: "auto", Algorithm: graph.Auto}, "", true},
		{"switched off", tbl, LoadOptions{Engine: "auto"}, "off", false},
		{"switched off by 0", tbl, LoadOptions{Engine: "auto"}, "0", false},
		{"few sources", tbl, LoadOptions{Engine: "auto", Sources: minGPUSources}, "", false},
		{"dijkstra", tbl, LoadOptions{Engine: "auto", Algorithm: graph.Dijkstra}, "", false},
		{"negative weights", negative, LoadOptions{Engine: "auto"}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PATHCTL_PLAN_AHEAD", c.env)
			if got := besidePlan(t, c.tbl, c.opt); got != c.want {
				t.Errorf("plan made beside the opening %v, want %v", got, c.want)
			}
		})
	}

	// An opening that fails while the CSR is built: the plan, if begun, is
	// no part of the graph, which runs on the CPU.
	opener := newBlockedOpener(noGPU)
	opening := OpenDeviceWith(opener.open)
	opener.waitStarted(t)
	time.AfterFunc(30*time.Millisecond, func() { close(opener.release) })
	g, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: "auto", Device: opening})
	if err != nil {
		t.Fatal(err)
	}
	if times := g.Times(); times.PlanAhead != 0 || times.PlanAheadUsed || g.ahead != nil {
		t.Errorf("the open failed: times %+v, plan kept %v; want no plan", times, g.ahead != nil)
	}
	if !opening.failed() {
		t.Error("an opening that returned an error does not say it failed")
	}
}
