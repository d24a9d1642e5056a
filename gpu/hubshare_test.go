package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestHubRowsSharedAmongEngines runs the stats of every source of each
// graph on two engines of one device whose runners share their hub rows
// (ShareHubRows), as two devices do: each engine takes half the sources,
// in blocks that hold the whole core as hub rows where it fits (every
// other source then copied or derived, so that blocks without a kernel
// source run). Both at once, the engines cut each phase of the hub rows'
// plan between them; one after the other (the second past
// hubArrivalWait), the first computes every part and the second copies
// them. Every source's stats must equal
// internal/ref's, each runner must hold every hub row, and the group must
// have copied rows from one engine to the other, as --verbose says.
func TestHubRowsSharedAmongEngines(t *testing.T) {
	engines := []*Engine{openEngine(t), openEngine(t)}
	for gname, g := range statsSlotGraphs(t) {
		for _, together := range []bool{true, false} {
			if testing.Short() && !together {
				continue
			}
			t.Run(fmt.Sprintf("%s/together=%v", gname, together), func(t *testing.T) {
				runners, errs, kept := statsOnSharedEngines(t, engines, g, together, "")
				for i, err := range errs {
					if err != nil {
						t.Fatalf("engine %d: %v", i, err)
					}
				}
				if !kept {
					return
				}
				if runners[0].hubs.copiedParts() == 0 {
					t.Error("no hub row was copied between the engines")
				}
				rep := runners[1].HubRowsReport()
				mode := map[bool]string{true: "spans copied between devices", false: "parts copied between devices"}[together]
				if !strings.Contains(rep, mode) {
					t.Errorf("the hub rows' report does not say %q: %q", mode, rep)
				}
			})
		}
	}
}

// TestHubRowsLostLate fails the second of two engines sharing their hub
// rows (as TestHubRowsSharedAmongEngines) once it has computed its share
// of the last phase, after the first has gone on to its block without
// waiting for that share (lateHubRows): the first must find the rows
// lost, compute them itself, and still give every one of its sources'
// stats as internal/ref does.
func TestHubRowsLostLate(t *testing.T) {
	engines := []*Engine{openEngine(t), openEngine(t)}
	g := statsSlotGraphs(t)["rmat11-int"]
	var failing *Runner
	injected := errors.New("injected failure in the last phase")
	hubPhaseFault = func(g *hubGroup, ph *phasedRound, hs *hubStore, i int) error {
		if hs.r != failing || i < len(ph.done)-1 {
			return nil
		}
		for ph.done[i] < 1 { // the other runner has sent its share and gone on
			g.cond.Wait()
		}
		return injected
	}
	t.Cleanup(func() { hubPhaseFault = nil })
	runners, errs, kept := statsOnSharedEngines(t, engines, g, true, "", func(rs []*Runner) { failing = rs[1] })
	if !kept {
		t.Fatal("the graph's core does not fit as hub rows")
	}
	if errs[0] != nil || !errors.Is(errs[1], injected) {
		t.Fatalf("errors %v, want none on engine 0 and the injected one on engine 1", errs)
	}
	gr := runners[0].hubs.group
	gr.mu.Lock()
	lost := gr.lost
	gr.mu.Unlock()
	if lost != 1 {
		t.Errorf("%d runners found the late rows lost, want 1", lost)
	}
}

// statsOnSharedEngines runs the stats of every source of g on the
// engines, each taking an even share in blocks that hold the whole core
// as hub rows where it fits, their runners sharing the hub rows (begun
// together, or one after the other; spec adds to the configuration), and
// checks every block that succeeded against internal/ref's stats and
// every runner that succeeded for its hub rows. It returns the runners
// (closed at the test's end), each engine's first error, and whether hub
// rows were kept. Each of before, if any, sees the runners once grouped.
func statsOnSharedEngines(t *testing.T, engines []*Engine, g *graph.CSR, together bool, spec string, before ...func([]*Runner)) ([]*Runner, []error, bool) {
	t.Helper()
	cfg := defaultBatchedConfig()
	if err := cfg.Config.Apply("hubrows=100000,hubshare=0,hubcore=1," + spec); err != nil {
		t.Fatal(err)
	}
	n := g.NumVertices
	sources := allVertices(n)
	want, absSum, absHarm := refStats(t, g, sources)
	runners := make([]*Runner, len(engines))
	for i, e := range engines {
		r, err := e.prepare(context.Background(), g, graph.Request{Algorithm: Batched}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		runners[i] = r
	}
	ShareHubRows(runners)
	for _, f := range before {
		f(runners)
	}
	core, err := runners[0].bk.graph.Core(n, cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	size := min(max((n+7)/8, len(core)), n/2)
	bounds := make([]int, len(runners)+1) // engine i takes bounds[i] to bounds[i+1]
	for i := range bounds {
		bounds[i] = i * n / len(runners)
	}
	got := make([]*graph.Stats, n)
	errs := make([]error, len(runners))
	run := func(i int) {
		r := runners[i]
		lo, hi := bounds[i], bounds[i+1]
		for s := lo; s < hi; s += size {
			st, err := r.RunStats(context.Background(), sources[s:min(s+size, hi)])
			if err != nil {
				errs[i] = err
				return
			}
			got[s] = st
		}
	}
	if together {
		var wg sync.WaitGroup
		for i := range runners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(i)
			}()
		}
		wg.Wait()
	} else {
		for i := range runners {
			run(i)
		}
	}
	for s, st := range got {
		if st != nil {
			e := s + len(st.Sources)
			compareStats(t, st, subStats(want, s, e), absSum[s:e], absHarm[s:e])
		}
	}
	for i, r := range runners {
		if errs[i] != nil {
			continue
		}
		if wantRows := r.hubs.forBlock(r.buf.capacity); r.hubs.rows.ready != (wantRows > 0) || len(r.hubs.rows.vertices) != wantRows {
			t.Fatalf("engine %d: %d hub rows, ready %v; want %d", i, len(r.hubs.rows.vertices), r.hubs.rows.ready, wantRows)
		}
	}
	return runners, errs, runners[0].hubs.possible()
}

// TestDealtHands checks that dealt deals a list into hands in turn, and
// that handBounds, the group's parts, are those hands.
func TestDealtHands(t *testing.T) {
	v := []int32{10, 11, 12, 13, 14, 15, 16}
	got := dealt(v, 3)
	want := []int32{10, 13, 16, 11, 14, 12, 15}
	if !slices.Equal(got, want) {
		t.Fatalf("dealt = %v, want %v", got, want)
	}
	bounds := handBounds(len(v), 3)
	if want := [][2]int{{0, 3}, {3, 5}, {5, 7}}; !slices.Equal(bounds, want) {
		t.Fatalf("handBounds = %v, want %v", bounds, want)
	}
	if b := handBounds(2, 3); b[2][0] != 2 || b[2][1] != 2 {
		t.Fatalf("handBounds(2, 3) = %v: the last hand is not empty", b)
	}
}
