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
// Together, the phases' shares are sent whole once computed (hubslices=1)
// or slice by slice behind their kernels (hubslices=4, with a scratch:
// more spans copied than whole), their slices cut in the plan's order or
// by row (hubbyrow=1).
func TestHubRowsSharedAmongEngines(t *testing.T) {
	engines := []*Engine{openEngine(t), openEngine(t)}
	for gname, g := range statsSlotGraphs(t) {
		wholeSpans := 0
		for _, c := range []struct {
			together bool
			spec     string
		}{{true, "hubslices=1"}, {true, "hubslices=4"}, {true, "hubslices=4,hubbyrow=1"}, {false, "hubslices=4"}} {
			together := c.together
			if testing.Short() && !together {
				continue
			}
			t.Run(fmt.Sprintf("%s/together=%v/%s", gname, together, c.spec), func(t *testing.T) {
				runners, errs, kept := statsOnSharedEngines(t, engines, g, together, c.spec)
				for i, err := range errs {
					if err != nil {
						t.Fatalf("engine %d: %v", i, err)
					}
				}
				if !kept {
					return
				}
				copied := runners[0].HubRowsCopied()
				if copied == 0 {
					t.Error("no hub row was copied between the engines")
				}
				switch {
				case together && c.spec == "hubslices=1":
					wholeSpans = copied
				case together && runners[0].scratch > 0 && copied <= wholeSpans:
					t.Errorf("%d spans copied slice by slice, %d whole: the shares were not sent by slices", copied, wholeSpans)
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
	hubPhaseFault = func(g *hubGroup, ph *phasedRound, r *Runner, i int) error {
		if r != failing || i < len(ph.done)-1 {
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
	gr := runners[0].hubGroup
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
	core, err := runners[0].planGraph.Core(n, cfg.Config)
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
		if wantRows := r.hubRowsFor(r.capacity); r.hubs.ready != (wantRows > 0) || len(r.hubs.vertices) != wantRows {
			t.Fatalf("engine %d: %d hub rows, ready %v; want %d", i, len(r.hubs.vertices), r.hubs.ready, wantRows)
		}
	}
	return runners, errs, runners[0].hubRowsPossible()
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

// TestSendSlice checks how a phased round's share is cut for its sends
// (sendSlice): rows in order are cut in HubSendSlices slices of whole
// groups (no more than the scratch holds); rows whose slices would each
// span the whole share are sent whole; rows in order by halves are cut in
// two; no scratch, or a share one slice holds, is sent whole.
func TestSendSlice(t *testing.T) {
	runner := func(scratch, slices int) *Runner {
		r := &Runner{scratch: scratch}
		r.batched.HubSendSlices = slices
		return r
	}
	inOrder := make([]int32, 1000)
	for i := range inOrder {
		inOrder[i] = int32(100 + i)
	}
	dealtRows := make([]int32, 1000) // 0, 2, 4, ..., then 1, 3, 5, ...: each half spans all
	for i := range dealtRows {
		dealtRows[i] = int32(2*i%1000 + 2*i/1000)
	}
	var halves []int32 // each half in order, the halves in either order: 4 slices overlap in pairs
	for i := range 500 {
		halves = append(halves, int32(500+i))
	}
	for i := range 500 {
		halves = append(halves, int32(499-i))
	}
	for _, c := range []struct {
		name            string
		scratch, slices int
		rows            []int32
		want            int
	}{
		{"in order", 8192, 4, inOrder, 256},
		{"in order, small scratch", 128, 4, inOrder, 128},
		{"in order, one slice", 8192, 1, inOrder, 0},
		{"in order, no scratch", 0, 4, inOrder, 0},
		{"dealt", 8192, 4, dealtRows, 0},
		{"halves", 8192, 4, halves, 512},
		{"few", 8192, 4, inOrder[:20], 0},
	} {
		if got := runner(c.scratch, c.slices).sendSlice(c.rows); got != c.want {
			t.Errorf("%s: sendSlice = %d, want %d", c.name, got, c.want)
		}
	}
	// The dealt rows cut by rank (sliceByRow): each slice holds the next
	// rows, in the order they had.
	share := make([]int, len(dealtRows))
	for i := range share {
		share[i] = i
	}
	sliceByRow(share, dealtRows, 256)
	rows := make([]int32, len(share))
	for i, at := range share {
		rows[i] = dealtRows[at]
	}
	for lo := 0; lo < len(share); lo += 256 {
		hi := min(lo+256, len(share))
		if sp := rowSpan(rows[lo:hi]); sp != [2]int32{int32(lo), int32(hi)} || !slices.IsSorted(share[lo:hi]) {
			t.Fatalf("slice %d after sliceByRow: rows %v, positions %v", lo/256, sp, share[lo:hi])
		}
	}
	if got := runner(8192, 4).sendSlice(rows); got != 256 {
		t.Errorf("dealt, cut by rank: sendSlice = %d, want 256", got)
	}
}
