package gpu

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// aheadGraph is an undirected R-MAT graph of 2^scale ids with integer
// weights (seed picks it): skewed enough for a plan of every source to
// have leaves, minimums and several phases.
func aheadGraph(t *testing.T, scale int, seed uint64) *graph.CSR {
	t.Helper()
	el, err := gen.RMAT(scale, 8, seed, gen.WithWeights(1, 100))
	return undirectedGraph(t, el, err)
}

// TestPlanAheadIsThePlanAfter checks, without a device, that the block a
// runner takes from a plan made ahead is the plan it would make itself
// (plan.Graph.Plan of a fresh graph, and its packed words), and that the
// runner took it.
func TestPlanAheadIsThePlanAfter(t *testing.T) {
	g := aheadGraph(t, 12, 5)
	sources := allVertices(g.NumVertices)
	cfg := defaultBatchedConfig()
	p := planAhead(g, sources, cfg)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if p.Took() <= 0 {
		t.Errorf("Took %v once made, want > 0", p.Took())
	}
	want, err := plan.NewGraph(g).Plan(sources, cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	if want.NumPhases() < 2 || want.Rows == nil {
		t.Fatalf("the test graph plans %d phases, rows %v: want a plan with phases and derived rows", want.NumPhases(), want.Rows != nil)
	}

	r := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
	r.bk.adopt(p)
	if r.bk.graph != p.graph {
		t.Error("the runner does not read the plan graph measured ahead")
	}
	bp, finish, packed, err := r.bk.startPlan(sources, math.Inf(1), plan.Resident{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Used() || bp != p.block {
		t.Fatalf("the runner planned its own block (used %v)", p.Used())
	}
	if finish != nil || packed == nil {
		t.Fatalf("a plan made ahead comes complete and packed: finish %v, packed %v", finish != nil, packed != nil)
	}
	if !reflect.DeepEqual(bp, want) {
		t.Error("the plan made ahead differs from the plan made after")
	}
	if wantPacked := want.Pack(0, want.NumPhases(), true); !reflect.DeepEqual(*packed, wantPacked) {
		t.Error("the packed plan made ahead differs from the plan made after, packed")
	}
	// Taken once: the next block plans its own.
	if _, _, packed, err := r.bk.startPlan(sources, math.Inf(1), plan.Resident{}); err != nil || packed != nil {
		t.Errorf("a second block took the plan again (packed %v, err %v)", packed != nil, err)
	}
}

// TestPlanAheadNotTaken checks that a block the plan made ahead does not
// match (other sources, a cutoff in the kernel, another configuration, a
// CSR of its own) plans its own, equal to a fresh plan, and leaves the
// plan unused; the graph's shape and rank are still the ones measured
// ahead where the CSR is the same.
func TestPlanAheadNotTaken(t *testing.T) {
	g := aheadGraph(t, 11, 6)
	all := allVertices(g.NumVertices)
	cfg := defaultBatchedConfig()
	other := cfg
	other.Config.Seeds = 0 // one phase
	another := aheadGraph(t, 11, 7)
	cases := []struct {
		name    string
		csr     *graph.CSR
		sources []graph.VertexID
		cut     float64
		cfg     batchedConfig
	}{
		{"fewer sources", g, all[:len(all)-1], math.Inf(1), cfg},
		{"cutoff", g, all, 50, cfg},
		{"configuration", g, all, math.Inf(1), other},
		{"another CSR", another, allVertices(another.NumVertices), math.Inf(1), cfg},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planAhead(g, all, cfg)
			r := newRunner(nil, c.csr, graph.Request{Algorithm: Batched}, c.cfg)
			r.bk.adopt(p)
			if (r.bk.graph == p.graph) != (c.csr == g) {
				t.Errorf("plan graph taken %v, want %v (same CSR)", r.bk.graph == p.graph, c.csr == g)
			}
			bp, finish, packed, err := r.bk.startPlan(c.sources, c.cut, plan.Resident{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Used() || packed != nil {
				t.Fatal("a block the plan does not match took it")
			}
			if finish != nil {
				finish()
			}
			want, _, err := plan.NewGraph(c.csr).StartWithin(c.sources, c.cfg.Config, c.cut)
			if err != nil {
				t.Fatal(err)
			}
			if len(bp.Sources) != len(want.Sources) || bp.NumPhases() != want.NumPhases() {
				t.Errorf("own plan: %d sources in %d phases, want %d in %d", len(bp.Sources), bp.NumPhases(), len(want.Sources), want.NumPhases())
			}
			if err := p.Wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPlanAheadMeasureOnly checks a plan of no block: the runner takes
// the graph it measured, and plans its blocks itself.
func TestPlanAheadMeasureOnly(t *testing.T) {
	g := aheadGraph(t, 10, 9)
	all := allVertices(g.NumVertices)
	p := planAhead(g, nil, defaultBatchedConfig())
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	r := newRunner(nil, g, graph.Request{Algorithm: Batched}, defaultBatchedConfig())
	r.bk.adopt(p)
	if r.bk.graph != p.graph || !p.Used() {
		t.Fatalf("the runner did not take the graph measured ahead (used %v)", p.Used())
	}
	bp, finish, packed, err := r.bk.startPlan(all, math.Inf(1), plan.Resident{})
	if err != nil || bp == nil || packed != nil {
		t.Fatalf("own plan: block %v, packed %v, err %v", bp != nil, packed != nil, err)
	}
	if finish != nil {
		finish()
	}
}

// TestPlanAheadError checks that a plan made ahead that failed (here an
// invalid configuration) gives its error to the block that takes it.
func TestPlanAheadError(t *testing.T) {
	g := aheadGraph(t, 9, 8)
	all := allVertices(g.NumVertices)
	bad := defaultBatchedConfig()
	bad.Config.Seeds = -1
	if bad.Check() == nil {
		t.Fatal("Seeds -1 is a valid configuration; the test needs an invalid one")
	}
	p := planAhead(g, all, bad)
	if err := p.Wait(); err == nil {
		t.Fatal("Wait: no error from an invalid configuration")
	}
	r := newRunner(nil, g, graph.Request{Algorithm: Batched}, bad)
	r.bk.adopt(p)
	_, _, _, err := r.bk.startPlan(all, math.Inf(1), plan.Resident{})
	if err == nil || !strings.Contains(err.Error(), "planned ahead") {
		t.Fatalf("the block that took a failed plan: %v, want its error, saying it was planned ahead", err)
	}
}

// TestPlanAheadTakenWhileFinishing checks a plan taken after Start but
// before its finish: the block gets Start's part at once and a finish that
// waits for the rest.
func TestPlanAheadTakenWhileFinishing(t *testing.T) {
	started, finished := make(chan struct{}), make(chan struct{})
	close(started)
	b := &plan.Block{Sources: []int32{0, 1}, Rows: []int32{0, 1}}
	p := &HostPlan{started: started, finished: finished, block: b, finish: func() {}}
	bp, finish, packed, err := p.take()
	if err != nil || bp != b || packed != nil || finish == nil {
		t.Fatalf("take: block %v, finish %v, packed %v, err %v", bp == b, finish != nil, packed != nil, err)
	}
	done := make(chan struct{})
	go func() {
		finish()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("finish returned before the plan made ahead was complete")
	case <-time.After(20 * time.Millisecond):
	}
	close(finished)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("finish still waits after the plan was complete")
	}
}

// TestPlanAheadOnDevice runs the stats of every source of a graph planned
// ahead (Engine.AdoptPlan before Prepare) on the device, checks that its
// first block took the plan, and compares the stats with the CPU's and
// with a runner that planned after.
func TestPlanAheadOnDevice(t *testing.T) {
	e := openEngine(t)
	for _, scale := range []int{10, 13} {
		g := aheadGraph(t, scale, uint64(scale))
		n := g.NumVertices
		sources := allVertices(n)
		req := graph.Request{Algorithm: graph.Auto}
		want, absSum, absHarm := cpuStats(t, g, graph.Request{Algorithm: graph.Dijkstra}, sources)
		var runs []*graph.Stats
		for _, ahead := range []bool{true, false} {
			var p *HostPlan
			if ahead {
				p = PlanAhead(g, sources, Tuning{})
				e.AdoptPlan(p)
			}
			r, err := e.Prepare(context.Background(), g, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.RunStats(context.Background(), sources)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if ahead && !p.Used() {
				t.Errorf("n=%d: the runner did not take the plan made ahead", n)
			}
			compareStats(t, got, want, absSum, absHarm)
			runs = append(runs, got)
		}
		if !reflect.DeepEqual(runs[0], runs[1]) {
			t.Errorf("n=%d: stats planned ahead differ from stats planned after", n)
		}
	}
}
