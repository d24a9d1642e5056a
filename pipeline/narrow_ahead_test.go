package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// fakeAheadNarrow stands for the GPU runner as a graph.AheadNarrower: its
// Run, Start and RunStats honour the request's targets and cutoff (the CPU
// engine's narrowed runner does the work), and it selects the k nearest
// itself when told to (SelectNearest, here with nearestOf); its resident
// and pinned paths, of full rows, fail when called.
type fakeAheadNarrow struct {
	graph.Runner // the CPU engine's runner, prepared with the narrowed request
	req          graph.Request
	n            int
	k            int // SelectNearest's
	starts       int
	stats        int
}

type errWaiter struct{ err error }

func (w errWaiter) Wait() error { return w.err }

func (f *fakeAheadNarrow) Narrowed() bool     { return true }
func (f *fakeAheadNarrow) NarrowsAhead() bool { return true }

// NearestDeclined says why, as the GPU runner's adapter does
// (gpu/devices' TestNearestDeclined).
func (f *fakeAheadNarrow) NearestDeclined() string {
	return "the engine selects K up to 64, without paths or predecessors"
}
func (f *fakeAheadNarrow) SelectNearest(k int) bool {
	f.k = k
	return true
}

// Run fills out as the GPU runner does: the narrowed columns, or the k
// nearest of them.
func (f *fakeAheadNarrow) Run(ctx context.Context, out *graph.Block) error {
	if f.k == 0 {
		return f.Runner.Run(ctx, out)
	}
	if out.CellTargets == nil || out.Width() != f.k {
		return errors.New("a block of the k nearest without k columns named by CellTargets")
	}
	full := graph.NewTargetBlock(out.Sources, f.req.Targets, f.n, f.DistType(), false)
	if err := f.Runner.Run(ctx, full); err != nil {
		return err
	}
	sel := nearestOf(full, f.k)
	copy(out.CellTargets, sel.CellTargets)
	switch d := out.Dist.(type) {
	case []int32:
		copy(d, graph.DistOf[int32](sel))
	default:
		return fmt.Errorf("fake: %T distances", d)
	}
	return nil
}

func (f *fakeAheadNarrow) Start(ctx context.Context, out *graph.Block) (graph.Waiter, error) {
	f.starts++
	return errWaiter{f.Run(ctx, out)}, nil
}

func (f *fakeAheadNarrow) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	f.stats++
	b := graph.NewTargetBlock(sources, f.req.Targets, f.n, f.DistType(), false)
	if err := f.Runner.Run(ctx, b); err != nil {
		return nil, err
	}
	return graph.ComputeStats(b), nil
}

func (f *fakeAheadNarrow) ComputeResident(context.Context, []graph.VertexID) (graph.ResidentBlock, error) {
	return nil, errFullRows
}
func (f *fakeAheadNarrow) PinHost([]byte) error   { return errFullRows }
func (f *fakeAheadNarrow) UnpinHost([]byte) error { return errFullRows }

// TestNarrowAhead checks the pipeline's side of narrowed runs on a runner
// whose blocks started ahead and stats honour the narrowing (the GPU's):
// narrowRunner leaves it Start and RunStats but neither ComputeResident
// nor PinHost; the blocks are planned for the narrowed output
// (planNarrowed); every block of the pairs and matrix layouts is started
// ahead and every stats block reduced by the runner; the k nearest, when
// the runner selects them, arrive in blocks of k columns that the pipeline
// does not select again. Every result equals the CPU engine's narrowed
// rows (and the host's selection of them).
func TestNarrowAhead(t *testing.T) {
	rng := testgraphs.Rand(t, 23)
	n := 60
	g, err := LoadGraph(randomTable(rng, n, 3*n, testgraphs.Int), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sources := allSources(n)
	for _, tc := range []struct {
		name    string
		targets []graph.VertexID
		cutoff  bool
		k       int
	}{
		{"targets", []graph.VertexID{7, 3, 59, 3, 0}, false, 0},
		{"targets and cutoff", []graph.VertexID{7, 3, 59, 3, 0, 12, 40}, true, 0},
		{"k nearest", nil, false, 4},
		{"k nearest targets cutoff", []graph.VertexID{7, 3, 59, 0, 12, 40, 41, 42}, true, 3},
	} {
		req := graph.Request{Algorithm: graph.Dijkstra, Targets: tc.targets, Cutoff: 40, HasCutoff: tc.cutoff}
		cpuRunner, err := cpu.New(cpu.WithThreads(2)).Prepare(ctx, g.CSR, req)
		if err != nil {
			t.Fatal(err)
		}
		fake := &fakeAheadNarrow{Runner: cpuRunner, req: req, n: n}
		want := graph.NewTargetBlock(sources, tc.targets, n, cpuRunner.DistType(), false)
		if err := cpuRunner.Run(ctx, want); err != nil {
			t.Fatal(err)
		}
		layouts := []arrowio.Layout{arrowio.LayoutPairs, arrowio.LayoutMatrix, arrowio.LayoutStats}
		if tc.k > 0 {
			layouts = layouts[:1]
			want = nearestOf(want, tc.k)
		}
		for _, layout := range layouts {
			fake.starts, fake.stats, fake.k = 0, 0, 0
			opt := Options{Query: Query{Layout: layout, K: tc.k, Cutoff: req.Cutoff, HasCutoff: req.HasCutoff}}
			selected := engineSelects(fake, opt)
			if selected != (tc.k > 0) || fake.k != tc.k {
				t.Fatalf("%s: engineSelects = %v (k %d) for k %d", tc.name, selected, fake.k, tc.k)
			}
			runner := narrowRunner(fake, req, n, false)
			if req.Narrowed() {
				if _, ok := runner.(*engineNarrowedAhead); !ok {
					t.Fatalf("%s: a graph.AheadNarrower runs as %T, want *engineNarrowedAhead", tc.name, runner)
				}
				if _, ok := runner.(graph.ResidentRunner); ok {
					t.Fatalf("%s: the narrowed runner still offers ComputeResident", tc.name)
				}
				if _, ok := runner.(graph.HostPinner); ok {
					t.Fatalf("%s: the narrowed runner still offers PinHost", tc.name)
				}
			}
			bytes := narrowedRowBytes(runner, tc.targets, tc.k, selected)
			if bytes <= 0 {
				t.Fatalf("%s: no narrowed row bytes", tc.name)
			}
			// A device that holds 7 sources, a host that holds plenty: blocks of 7.
			eng := budgetEngine{host: 1 << 30, device: 7 * fake.BytesPerSource()}
			blocks, sched := planRun(opt, eng, runner, n, len(sources), bytes, false)
			if layout != arrowio.LayoutStats && (blockMax(blocks) != 7 || sched.residentMax != 0) {
				t.Fatalf("%s %s: blocks of up to %d (device blocks %d), want 7 (none)", tc.name, layout, blockMax(blocks), sched.residentMax)
			}
			sched.targets, sched.nearest, sched.selected = tc.targets, tc.k, selected
			if layout == arrowio.LayoutMatrix {
				sched.buildRecords = nil // the blocks themselves are compared
			}
			w := want.Width()
			err := runBlocks(ctx, g, runner, opt, sched, sources, blocks, func(res blockResult) error {
				if st := res.stats; st != nil {
					lo := res.end - len(st.Sources)
					ws := graph.ComputeStats(want)
					if !slices.Equal(st.Reachable, ws.Reachable[lo:res.end]) || !slices.Equal(st.SumInt, ws.SumInt[lo:res.end]) {
						return errors.New("stats differ from those of the CPU engine's narrowed rows")
					}
					return nil
				}
				b := res.block
				lo := res.end - len(b.Sources)
				if b.Width() != w || !slices.Equal(graph.DistOf[int32](b), graph.DistOf[int32](want)[lo*w:res.end*w]) {
					return fmt.Errorf("block from %d differs from the CPU engine's narrowed rows", lo)
				}
				if tc.k > 0 && !slices.Equal(b.CellTargets, want.CellTargets[lo*w:res.end*w]) {
					return fmt.Errorf("block from %d: the k nearest are other vertices", lo)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%s %s: %v", tc.name, layout, err)
			}
			if layout == arrowio.LayoutStats {
				if fake.stats != len(blocks) || fake.starts != 0 {
					t.Errorf("%s stats: %d blocks reduced by the runner and %d started, want %d and 0", tc.name, fake.stats, fake.starts, len(blocks))
				}
			} else if fake.starts != len(blocks) {
				t.Errorf("%s %s: %d blocks started ahead, want %d", tc.name, layout, fake.starts, len(blocks))
			}
		}
		cpuRunner.Close()
	}
}

// TestPlanNarrowed checks the blocks of runs whose engine narrows its
// rows: bounded by the device budget over the runner's bytes per source,
// by the host budget over three narrowed blocks, and by MaxBlock when set;
// one block where everything fits.
func TestPlanNarrowed(t *testing.T) {
	runner := newFakeAsync(1000, 0)
	per := runner.BytesPerSource()
	for _, c := range []struct {
		name        string
		opt         Options
		eng         budgetEngine
		n           int
		row         int64
		blocks, big int
	}{
		{"device bound", Options{}, budgetEngine{host: 1 << 40, device: 100 * per}, 1000, 64, 10, 100},
		{"host bound", Options{}, budgetEngine{host: 3 * 64 * 50, device: 1 << 40}, 1000, 64, 20, 50},
		{"one block", Options{}, budgetEngine{host: 1 << 40, device: 1 << 40}, 4096, 64, 1, 4096},
		{"max block", Options{Resources: Resources{MaxBlock: 3}}, budgetEngine{host: 1 << 40, device: 1 << 40}, 10, 64, 4, 3},
		{"memory budget", Options{Resources: Resources{MemBudget: 5 * per}}, budgetEngine{host: 1 << 40, device: 1 << 40}, 10, 64, 2, 5},
	} {
		blocks := planNarrowed(c.opt, c.eng, runner, c.n, c.row, false)
		if len(blocks) != c.blocks || blockMax(blocks) != c.big || blocks[len(blocks)-1].End != c.n {
			t.Errorf("%s: %d blocks of up to %d ending at %d, want %d of up to %d ending at %d",
				c.name, len(blocks), blockMax(blocks), blocks[len(blocks)-1].End, c.blocks, c.big, c.n)
		}
	}
	// The k nearest selected by the engine leave its stats blocks' fixed
	// bytes (the GPU's hub rows) out of the device budget, at most half.
	sized := statsSized{statsAsync: statsAsync{fakeAsync: newFakeAsync(1000, 0)}}
	per = sized.BytesPerSource()
	eng := budgetEngine{host: 1 << 40, device: 100 * per}
	for _, c := range []struct {
		fixed    int64
		selected bool
		big      int
	}{{30 * per, true, 70}, {30 * per, false, 100}, {90 * per, true, 50}, {0, true, 100}} {
		sized.fixed = c.fixed
		if got := blockMax(planNarrowed(Options{}, eng, sized, 1000, 64, c.selected)); got != c.big {
			t.Errorf("fixed %d bytes, selected %v: blocks of up to %d, want %d", c.fixed, c.selected, got, c.big)
		}
	}
}

// TestNarrowGPUPlannedBlocks is TestQueriesGPU on graphs of 3,000 vertices
// and 520 sources in the blocks the pipeline plans for narrowed output
// (planNarrowed: as large as the device allows): an OD matrix with unordered targets that repeat, the same within
// a cutoff, a cutoff alone, and the k nearest (16, 64 on the device, 65 on
// the host) among every vertex, among targets, within a cutoff, on
// integer and unweighted graphs (hop counts: ties everywhere).
func TestNarrowGPUPlannedBlocks(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skipf("no usable GPU: %s", st.Reason)
	}
	rng := testgraphs.Rand(t, 29)
	n := 3000
	for trial, kind := range []testgraphs.WeightKind{testgraphs.Int, testgraphs.Unweighted} {
		g, err := LoadGraph(randomTable(rng, n, 3*n, kind), LoadOptions{Undirected: true})
		if err != nil {
			t.Fatal(err)
		}
		var sources, targets []graph.VertexID
		for _, v := range rng.Perm(n)[:520] {
			sources = append(sources, graph.VertexID(v))
		}
		for _, v := range rng.Perm(n)[:300] {
			targets = append(targets, graph.VertexID(v))
		}
		targets = append(targets, targets[7], targets[100], targets[7])
		row := refRow(t, g.CSR, sources[0])
		var finite []float64
		for _, d := range row {
			if !math.IsInf(d, 1) {
				finite = append(finite, d)
			}
		}
		slices.Sort(finite)
		cutoff := finite[len(finite)/20]
		for _, q := range []queryCase{
			{targets: targets},
			{targets: targets, cutoff: cutoff, hasCutoff: true},
			{cutoff: cutoff, hasCutoff: true},
			{k: 16},
			{k: 64, targets: targets},
			{k: 16, cutoff: cutoff, hasCutoff: true},
			{k: 65},
		} {
			q.sources, q.defaultBlocks = sources, true
			name := fmt.Sprintf("trial %d/%v/targets=%d/cutoff=%v/k=%d", trial, kind, len(q.targets), q.hasCutoff, q.k)
			verifyQuery(t, name, g, q, graph.Auto, "gpu")
		}
	}
}

// TestNearestNote checks what a run's description says of the k nearest:
// nothing without K, "by the engine" where the runner selects them, and
// why the host does where a runner that selects was not asked to.
func TestNearestNote(t *testing.T) {
	fake := &fakeAheadNarrow{}
	cpuRunner := plainRunner{}
	for _, c := range []struct {
		runner   graph.Runner
		k        int
		selected bool
		want     string
	}{
		{fake, 0, false, ""},
		{fake, 4, true, "; the k nearest selected by the engine"},
		{fake, 65, false, "selected on the host from full rows (the engine selects K up to 64"},
		{cpuRunner, 4, false, ""},
	} {
		got := nearestNote(c.runner, Options{Query: Query{K: c.k}}, c.selected)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%T, k %d, selected %v: %q, want %q", c.runner, c.k, c.selected, got, c.want)
		}
	}
}
