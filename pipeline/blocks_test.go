package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/graph"
)

// budgetEngine is an engine that knows its budgets (graph.Budgeter) and
// prepares nothing: planRun only asks it for them.
type budgetEngine struct{ host, device int64 }

func (budgetEngine) Name() string { return "budget" }
func (budgetEngine) Prepare(context.Context, *graph.CSR, graph.Request) (graph.Runner, error) {
	return nil, nil
}
func (e budgetEngine) DefaultBudget() int64 { return e.host }
func (e budgetEngine) DeviceBudget() int64  { return e.device }

var _ graph.Budgeter = budgetEngine{}

// TestPlanRun checks the blocks and schedule of a run on a runner that
// computes device-resident blocks and pins host memory: host blocks from
// the engine's default budget with three in flight; device blocks from its
// device budget; for the matrix layout, host blocks cut to pieces of
// pinned memory that merge back to the host block size should the device
// block not fit; none of that for the stats layout or a caller's MaxBlock.
func TestPlanRun(t *testing.T) {
	const nv = 1 << 22 // pinnedBlockBytes holds 4 int32 rows of it
	const sources = 100
	runner := pinnedResident{&fakeResident{fakeAsync: newFakeAsync(nv, 0)}, &fakePinner{}}
	per := runner.BytesPerSource()
	eng := budgetEngine{host: 3 * 10 * per, device: sources * per}
	for _, c := range []struct {
		name                    string
		opt                     Options
		blocks, biggest         int
		residentMax, computeMax int
	}{
		{"matrix", Options{Query: Query{Layout: arrowio.LayoutMatrix}}, 30, 4, sources, 10},
		{"pairs", Options{Query: Query{Layout: arrowio.LayoutPairs}}, 10, 10, sources, 0},
		{"stats", Options{Query: Query{Layout: arrowio.LayoutStats}}, 10, 10, 0, 0},
		{"matrix, max block", Options{Query: Query{Layout: arrowio.LayoutMatrix}, Resources: Resources{MaxBlock: 5}}, 20, 5, sources, 0},
		{"matrix, small device", Options{Query: Query{Layout: arrowio.LayoutMatrix}, Resources: Resources{MemBudget: 3 * 5 * per}}, 40, 4, 15, 5},
	} {
		blocks, sched := planRun(c.opt, eng, runner, nv, sources, 0, false)
		if len(blocks) != c.blocks || blockMax(blocks) != c.biggest || blocks[len(blocks)-1].End != sources {
			t.Errorf("%s: %d blocks of up to %d ending at %d, want %d of up to %d ending at %d",
				c.name, len(blocks), blockMax(blocks), blocks[len(blocks)-1].End, c.blocks, c.biggest, sources)
		}
		if sched.residentMax != c.residentMax || sched.computeMax != c.computeMax {
			t.Errorf("%s: device blocks of %d, computed alone in %d; want %d and %d",
				c.name, sched.residentMax, sched.computeMax, c.residentMax, c.computeMax)
		}
		if c.computeMax > 0 {
			if merged := mergeBlocks(blocks, sched.computeMax); blockMax(merged) != sched.computeMax || len(merged) != sources/sched.computeMax {
				t.Errorf("%s: pieces merge back into %v", c.name, merged)
			}
		}
	}
}

// statsSized is a StatsRunner whose stats blocks cost a third less a
// source than its blocks of rows (graph.StatsSizer), as the GPU runner's
// one result slot does.
type statsSized struct {
	statsAsync
	fixed int64
}

func (s statsSized) StatsBytesPerSource() int64 { return s.BytesPerSource() / 3 * 2 }
func (s statsSized) StatsFixedBytes() int64     { return s.fixed }

var _ graph.StatsSizer = statsSized{}

// TestPlanRunStatsSizer checks that the stats layout of a StatsSizer is
// planned by its StatsBytesPerSource, in one block in flight under the
// device budget, and that other layouts, a runner without it and a
// multi-device chunk keep to their own figures.
func TestPlanRunStatsSizer(t *testing.T) {
	const nv, sources = 1000, 100
	sized := statsSized{statsAsync{newFakeAsync(nv, 0)}, 0}
	per, statsPer := sized.BytesPerSource(), sized.StatsBytesPerSource()
	if statsPer >= per {
		t.Fatalf("the fake's stats blocks cost %d a source, its rows %d", statsPer, per)
	}
	eng := budgetEngine{host: 1 << 40, device: 30 * per}
	for _, c := range []struct {
		name   string
		runner graph.Runner
		opt    Options
		want   int
	}{
		{"stats, sized", sized, Options{Query: Query{Layout: arrowio.LayoutStats}}, int(30 * per / statsPer)},
		{"stats, not sized", statsAsync{newFakeAsync(nv, 0)}, Options{Query: Query{Layout: arrowio.LayoutStats}}, 30},
		{"stats, sized, budget", sized, Options{Query: Query{Layout: arrowio.LayoutStats}, Resources: Resources{MemBudget: 10 * per}}, int(10 * per / statsPer)},
		{"pairs, sized", sized, Options{Query: Query{Layout: arrowio.LayoutPairs}, Resources: Resources{MemBudget: 30 * per}}, 10},
	} {
		blocks, _ := planRun(c.opt, eng, c.runner, nv, sources, 0, false)
		if got := blockMax(blocks); got != c.want {
			t.Errorf("%s: blocks of up to %d sources, want %d", c.name, got, c.want)
		}
		if got := bytesPerSource(c.runner, c.opt); c.runner == graph.Runner(sized) && c.opt.Layout == arrowio.LayoutStats && got != statsPer {
			t.Errorf("%s: bytesPerSource %d, want %d", c.name, got, statsPer)
		}
	}
	// Fixed bytes come off the budget, at most half of it (each device's
	// chunks, gpu/devices' TestGroupChunks, follow the same rule:
	// graph.SizingOf).
	for _, c := range []struct{ fixed, want int64 }{{6 * per, 24 * per / statsPer}, {40 * per, 15 * per / statsPer}} {
		fixedSized := statsSized{sized.statsAsync, c.fixed}
		blocks, _ := planRun(Options{Query: Query{Layout: arrowio.LayoutStats}}, eng, fixedSized, nv, sources, 0, false)
		if got := blockMax(blocks); got != int(c.want) {
			t.Errorf("%d fixed bytes: blocks of up to %d sources, want %d", c.fixed, got, c.want)
		}
	}
}

// TestEvenBlocks checks the spreading of sources over the budget's block
// count: every source once, in order, the count kept, sizes multiples of
// 8 but the last and never above the budget's largest block.
func TestEvenBlocks(t *testing.T) {
	for _, c := range []struct {
		n, size int
		want    []int
	}{
		{174403, 147000, []int{87208, 87195}},
		{100, 45, []int{40, 40, 20}},
		{100, 50, []int{50, 50}},
		{100, 100, []int{100}},
		{17, 16, []int{16, 1}}, // 9 rounds up to the budget's 16
		{1000, 7, nil},
	} {
		budget := PlanBlocksInFlight(c.n, 1, int64(c.size), 0, 1)
		got := evenBlocks(c.n, budget)
		if len(got) != len(budget) {
			t.Errorf("n=%d size=%d: %d blocks, the budget's %d", c.n, c.size, len(got), len(budget))
		}
		next := 0
		for i, b := range got {
			if b.Start != next || b.End <= b.Start || b.End-b.Start > blockMax(budget) {
				t.Fatalf("n=%d size=%d: block %d is %v after %d (largest allowed %d)", c.n, c.size, i, b, next, blockMax(budget))
			}
			if i < len(got)-1 && (b.End-b.Start)%8 != 0 && b.End-b.Start != blockMax(budget) {
				t.Errorf("n=%d size=%d: block %d of %d sources", c.n, c.size, i, b.End-b.Start)
			}
			next = b.End
		}
		if next != c.n {
			t.Errorf("n=%d size=%d: blocks end at %d", c.n, c.size, next)
		}
		if c.want != nil {
			var sizes []int
			for _, b := range got {
				sizes = append(sizes, b.End-b.Start)
			}
			if !slices.Equal(sizes, c.want) {
				t.Errorf("n=%d size=%d: sizes %v, want %v", c.n, c.size, sizes, c.want)
			}
		}
	}
}

// TestPlanRunEvenStatsBlocks: stats on several devices are planned in
// even blocks, which two devices then take whole (no tail cut); one device
// and a block size the caller fixed keep the budget's sizes.
func TestPlanRunEvenStatsBlocks(t *testing.T) {
	const nv, sources = 1000, 1000
	sized := statsSized{statsAsync{newFakeAsync(nv, 0)}, 0}
	one := budgetEngine{host: 1 << 40, device: 700 * sized.StatsBytesPerSource()}
	if blocks, _ := planRun(Options{Query: Query{Layout: arrowio.LayoutStats}}, one, sized, nv, sources, 0, false); !slices.Equal(blocks, []SourceBlock{{0, 700}, {700, 1000}}) {
		t.Errorf("one device's stats blocks %v, want 700 and 300", blocks)
	}
	eng := devices.NewGroup([]devices.Slot{{Label: "gpu 0", Engine: one}, {Label: "gpu 1", Engine: one}}, devices.Config{Stats: true})
	blocks, _ := planRun(Options{Query: Query{Layout: arrowio.LayoutStats}}, eng, sized, nv, sources, 0, false)
	if !slices.Equal(blocks, []SourceBlock{{0, 504}, {504, 1000}}) {
		t.Errorf("stats blocks %v, want two of about 500", blocks)
	}
	for i := range blocks {
		if cuts := devices.TailCuts(2, i, seamBlocks(blocks)); cuts != nil {
			t.Errorf("block %d cut at %v on two devices", i, cuts)
		}
	}
	if fixed, _ := planRun(Options{Query: Query{Layout: arrowio.LayoutStats}, Resources: Resources{MaxBlock: 700}}, eng, sized, nv, sources, 0, false); !slices.Equal(fixed, []SourceBlock{{0, 700}, {700, 1000}}) {
		t.Errorf("stats blocks of a fixed size %v, want 700 and 300", fixed)
	}
}
