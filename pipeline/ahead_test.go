package pipeline

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestPlanBesideTheOpening checks when the GPU kernel's plan is made beside
// the opening, after the CSR built there: for auto runs of every vertex of
// a graph without negative weights while the opening is under way; not
// for a few sources, another algorithm, negative weights, or a load that
// has every run plan its own (planOwn). A plan made succeeds; one made where the open
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
		opening := devices.OpenWith(opener.open)
		opener.waitStarted(t)
		defer close(opener.release)
		g := &Graph{Table: tbl, Undirected: true}
		beside := startBuildBesideOpening(g, opening, bopt, plansAhead(opt), "")
		if beside == nil {
			t.Fatal("nothing built beside an opening under way")
		}
		b := <-beside
		if b.err != nil {
			t.Fatal(b.err)
		}
		if opening.Failed() {
			t.Fatal("an opening under way says it failed")
		}
		if b.ahead == nil {
			return false
		}
		if err := b.ahead.(*gpu.HostPlan).Wait(); err != nil {
			t.Fatalf("the plan made beside the opening: %v", err)
		}
		return true
	}
	cases := []struct {
		name string
		tbl  *arrowio.EdgeTable
		opt  LoadOptions
		want bool
	}{
		{"auto, every vertex", tbl, LoadOptions{Engine: "auto"}, true},
		{"algorithm auto named", tbl, LoadOptions{Engine: "auto", Algorithm: graph.Auto}, true},
		{"runs plan their own", tbl, LoadOptions{Engine: "auto", planOwn: true}, false},
		{"few sources", tbl, LoadOptions{Engine: "auto", Sources: minGPUSources}, false},
		{"dijkstra", tbl, LoadOptions{Engine: "auto", Algorithm: graph.Dijkstra}, false},
		{"negative weights", negative, LoadOptions{Engine: "auto"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := besidePlan(t, c.tbl, c.opt); got != c.want {
				t.Errorf("plan made beside the opening %v, want %v", got, c.want)
			}
		})
	}

	// An opening that fails while the CSR is built: the plan, if begun, is
	// no part of the graph, which runs on the CPU.
	opener := newBlockedOpener(noGPU)
	opening := devices.OpenWith(opener.open)
	opener.waitStarted(t)
	time.AfterFunc(30*time.Millisecond, func() { close(opener.release) })
	g, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: "auto", Device: opening})
	if err != nil {
		t.Fatal(err)
	}
	if times := g.Times(); times.PlanAhead != 0 || times.PlanAheadUsed || g.ahead != nil {
		t.Errorf("the open failed: times %+v, plan kept %v; want no plan", times, g.ahead != nil)
	}
	if !opening.Failed() {
		t.Error("an opening that returned an error does not say it failed")
	}
}

// TestPlanBesideTheOpeningOnGPU loads graphs beside a real opening (held
// back a little, so that the CSR and the plan are made before it ends),
// with the plan made beside it and without (planOwn), and
// runs auto on every vertex: the run takes the plan, and its results are
// the CPU engine's (pairs of a graph of one block) and the same with and
// without the plan (stats of a larger graph, whose float sums the device
// adds in its own order).
func TestPlanBesideTheOpeningOnGPU(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	rng := rand.New(rand.NewPCG(23, 24))
	small := randomTable(rng, 3*minGPUSources, 12*minGPUSources, testgraphs.Int)
	large := randomTable(rng, 3000, 24000, testgraphs.Int)
	cpuGraph, err := LoadGraph(small, LoadOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	wantPairs, err := collectText(t, cpuGraph, Options{Resources: Resources{Engine: "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	statsOf := map[string]string{}
	for _, planOwn := range []bool{false, true} {
		for _, c := range []struct {
			name   string
			tbl    *arrowio.EdgeTable
			layout arrowio.Layout
		}{{"pairs", small, arrowio.LayoutPairs}, {"stats", large, arrowio.LayoutStats}} {
			name := fmt.Sprintf("%s, planOwn %v", c.name, planOwn)
			opening := devices.OpenWith(func() (graph.GPUDevice, error) {
				time.Sleep(150 * time.Millisecond)
				return newGPU()
			})
			g, err := LoadGraph(c.tbl, LoadOptions{Undirected: true, Engine: "auto", Device: opening, planOwn: planOwn})
			if err != nil {
				t.Fatal(err)
			}
			got, err := collectText(t, g, Options{Query: Query{Layout: c.layout}, Resources: Resources{Engine: "auto", Devices: []int{0}}})
			if err != nil {
				t.Fatal(err)
			}
			times := g.Times()
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			if err := opening.Close(); err != nil {
				t.Fatal(err)
			}
			if !times.BesideOpen {
				t.Fatalf("%s: the CSR was not built beside the opening: %+v", name, times)
			}
			if on := !planOwn; times.PlanAheadUsed != on || (times.PlanAhead > 0) != on {
				t.Errorf("%s: plan made beside the opening %s, taken %v; want made and taken %v", name, times.PlanAhead, times.PlanAheadUsed, on)
			}
			switch c.layout {
			case arrowio.LayoutPairs:
				if got != wantPairs {
					t.Errorf("%s: the GPU's pairs differ from the CPU engine's", name)
				}
			default:
				if prev, ok := statsOf[c.name]; ok && prev != got {
					t.Errorf("%s: the stats differ from those planned the other way", name)
				}
				statsOf[c.name] = got
			}
		}
	}
}
