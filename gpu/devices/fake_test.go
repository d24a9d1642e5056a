package devices

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// fakeDevice is a device of the multi-device tests: the CPU engine behind
// a runner that records the chunks it gets, can fail from its failAfter-th
// chunk on, and can have a memory budget of its own (graph.Budgeter).
type fakeDevice struct {
	eng    graph.Engine
	budget int64 // 0: graph.DefaultMemBudget
	async  bool  // its runners are AsyncRunners
	stats  bool  // its runners are StatsRunners (reduce on the device)
	// resident: its runners are AsyncRunners and ResidentRunners, whose
	// device blocks count as chunks.
	resident bool
	// brandes: its runners are BetweennessRunners (betweenness_test.go),
	// whose calls count as chunks.
	brandes bool

	// gate, when set, holds the device's first chunk until every device
	// of the gate has one (or a second has passed), so that each takes
	// part however fast the first is.
	gate *startGate

	vertices atomic.Int64 // of the graph prepared

	// scramble, when not 0, makes its runners graph.SourceOrderers that
	// order the sources by a permutation drawn from this seed; unsorted
	// is set once a chunk's sources are not in rising order.
	scramble uint64
	unsorted atomic.Bool
	// hubsFirst makes its runners hubOrderers that move the last source
	// to the front, as the GPU runner moves the hubs among the sources.
	hubsFirst bool
	// sized records what its stats runners were told of their runs
	// (graph.StatsRunSizer): sources and budget, per call.
	sizedMu sync.Mutex
	sized   [][2]int64

	mu        sync.Mutex
	chunks    []int // rows of every chunk run, failed ones included
	failAfter int   // chunks run before every later one fails; -1: never
	failWith  error
}

func newFakeDevice() *fakeDevice {
	return &fakeDevice{eng: cpu.New(cpu.WithThreads(1)), failAfter: -1}
}

func (f *fakeDevice) Name() string { return "gpu" }

func (f *fakeDevice) DefaultBudget() int64 {
	if f.budget > 0 {
		return f.budget
	}
	return graph.DefaultMemBudget
}

func (f *fakeDevice) DeviceBudget() int64 { return f.DefaultBudget() }

func (f *fakeDevice) Prepare(ctx context.Context, g *graph.CSR, req graph.Request) (graph.Runner, error) {
	r, err := f.eng.Prepare(ctx, g, req)
	if err != nil {
		return nil, err
	}
	f.vertices.Store(int64(g.NumVertices))
	fr := &fakeDeviceRunner{Runner: r, dev: f}
	switch {
	case f.brandes:
		return &fakeBrandesDeviceRunner{fr, g, req}, nil
	case f.resident:
		return &fakeResidentDeviceRunner{&fakeAsyncDeviceRunner{fr}}, nil
	case f.async && f.stats:
		return &fakeAsyncStatsDeviceRunner{&fakeAsyncDeviceRunner{fr}}, nil
	case f.async:
		return &fakeAsyncDeviceRunner{fr}, nil
	case f.stats:
		return &fakeStatsDeviceRunner{fr}, nil
	}
	return fr, nil
}

// chunk records a chunk of rows and says whether it fails.
func (f *fakeDevice) chunk(rows int) error {
	f.mu.Lock()
	first := len(f.chunks) == 0
	f.mu.Unlock()
	if first && f.gate != nil {
		f.gate.arrive()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chunks = append(f.chunks, rows)
	if f.failAfter >= 0 && len(f.chunks) > f.failAfter {
		return f.failWith
	}
	return nil
}

func (f *fakeDevice) seen() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.chunks)
}

type fakeDeviceRunner struct {
	graph.Runner
	dev *fakeDevice
}

func (r *fakeDeviceRunner) Run(ctx context.Context, out *graph.Block) error {
	if !slices.IsSorted(out.Sources) {
		r.dev.unsorted.Store(true)
	}
	if err := r.dev.chunk(len(out.Sources)); err != nil {
		poison(out) // a failed device may leave anything behind
		return err
	}
	return r.Runner.Run(ctx, out)
}

// BlockOrder is a random order under the device's scramble seed, else nil.
func (r *fakeDeviceRunner) BlockOrder(sources []graph.VertexID, block int) []int32 {
	if r.dev.scramble == 0 {
		return nil
	}
	out := make([]int32, len(sources))
	for i, p := range rand.New(rand.NewPCG(r.dev.scramble, uint64(block))).Perm(len(sources)) {
		out[i] = int32(p)
	}
	return out
}

// HubOrder moves the last source to the front under hubsFirst, else is
// nil.
func (r *fakeDeviceRunner) HubOrder(sources []graph.VertexID, block int) []int32 {
	if !r.dev.hubsFirst || block >= len(sources) {
		return nil
	}
	out := []int32{int32(len(sources) - 1)}
	for i := range len(sources) - 1 {
		out = append(out, int32(i))
	}
	return out
}

// Narrowed passes the CPU runner's on.
func (r *fakeDeviceRunner) Narrowed() bool {
	nr, ok := r.Runner.(graph.NarrowRunner)
	return ok && nr.Narrowed()
}

// fakeAsyncDeviceRunner computes a started block on a goroutine.
type fakeAsyncDeviceRunner struct{ *fakeDeviceRunner }

// fakeStatsDeviceRunner reduces the stats of its blocks itself, as the GPU's
// runner does on the device.
type fakeStatsDeviceRunner struct{ *fakeDeviceRunner }

func (r *fakeStatsDeviceRunner) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	return r.fakeDeviceRunner.runStats(ctx, sources)
}

// SizeStatsRun records the run's sources and budget (graph.StatsRunSizer).
func (r *fakeStatsDeviceRunner) SizeStatsRun(sources int, budget int64) {
	r.dev.sizedMu.Lock()
	defer r.dev.sizedMu.Unlock()
	r.dev.sized = append(r.dev.sized, [2]int64{int64(sources), budget})
}

type fakeAsyncStatsDeviceRunner struct{ *fakeAsyncDeviceRunner }

func (r *fakeAsyncStatsDeviceRunner) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	return r.fakeDeviceRunner.runStats(ctx, sources)
}

func (r *fakeDeviceRunner) runStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	blk := graph.NewBlock(sources, int(r.dev.vertices.Load()), r.DistType(), false)
	if err := r.Run(ctx, blk); err != nil {
		return nil, err
	}
	return graph.ComputeStatsThreads(blk, 1), nil
}

// fakeResidentDeviceRunner computes device blocks (graph.ResidentRunner)
// into host memory, whose rows its blocks' Start copies out.
type fakeResidentDeviceRunner struct{ *fakeAsyncDeviceRunner }

func (r *fakeResidentDeviceRunner) ComputeResident(ctx context.Context, sources []graph.VertexID) (graph.ResidentBlock, error) {
	blk := graph.NewBlock(sources, int(r.dev.vertices.Load()), r.DistType(), false)
	if err := r.Run(ctx, blk); err != nil {
		return nil, err
	}
	return fakeDeviceResident{blk}, nil
}

type fakeDeviceResident struct{ blk *graph.Block }

func (f fakeDeviceResident) Start(ctx context.Context, lo, hi int, out *graph.Block) (graph.Waiter, error) {
	w := f.blk.Width()
	switch d := f.blk.Dist.(type) {
	case []int32:
		copy(out.Dist.([]int32), d[lo*w:hi*w])
	case []float64:
		copy(out.Dist.([]float64), d[lo*w:hi*w])
	default:
		return nil, fmt.Errorf("fake: %T distances", d)
	}
	done := make(chan struct{})
	close(done)
	return &doneWaiter{done: done}, nil
}

type doneWaiter struct {
	done chan struct{}
	err  error
}

func (w *doneWaiter) Wait() error {
	<-w.done
	return w.err
}

func (r *fakeAsyncDeviceRunner) Start(ctx context.Context, out *graph.Block) (graph.Waiter, error) {
	w := &doneWaiter{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.err = r.fakeDeviceRunner.Run(ctx, out)
	}()
	return w, nil
}

// poison fills a block's distances with a value no run produces.
func poison(b *graph.Block) {
	if d, ok := b.Dist.([]int32); ok {
		for i := range d {
			d[i] = -7
		}
	}
}

// startGate lets its devices go once all of them have arrived.
type startGate struct {
	mu      sync.Mutex
	waiting int
	open    chan struct{}
}

func (g *startGate) arrive() {
	g.mu.Lock()
	g.waiting--
	if g.waiting == 0 {
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-time.After(time.Second):
	}
}

// gateAll puts devs behind one start gate and returns them.
func gateAll(devs ...*fakeDevice) []*fakeDevice {
	gate := &startGate{waiting: len(devs), open: make(chan struct{})}
	for _, d := range devs {
		d.gate = gate
	}
	return devs
}

func devicesTestGraph(t *testing.T, seed uint64, n, m int) *pipeline.Graph {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 19))
	g, err := pipeline.LoadGraph(randomTable(rng, n, m, testgraphs.Int), pipeline.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDevicesMatchOneDevice runs every layout, with and without
// predecessors, targets and cutoffs, on three fake devices (both Run-only
// and AsyncRunner devices) and checks the result is the one engine's, row
// for row, and that every device computed part of it.
func TestDevicesMatchOneDevice(t *testing.T) {
	g := devicesTestGraph(t, 1, 150, 900)
	defer g.Close()
	cases := []struct {
		name string
		opt  pipeline.Options
	}{
		{"pairs", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs}}},
		{"pairs-pred", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs, WithPredecessors: true, Algorithm: graph.Dijkstra}}},
		{"matrix", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}}},
		{"stats", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutStats}}},
		{"matrix-targets", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix, Targets: []string{"7", "3", "99"}}}},
		{"pairs-cutoff", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs, Cutoff: 25, HasCutoff: true}}},
		{"k-nearest", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs, K: 3}}},
		{"paths", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs, WithPaths: true, Sources: []string{"5", "1", "140"}, Targets: []string{"2", "9"}}}},
		{"sources", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix, Sources: []string{"149", "0", "77", "3"}}}},
	}
	for _, c := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", c.name, async), func(t *testing.T) {
				one := c.opt
				one.Engine = "cpu"
				want, err := collectText(t, g, one)
				if err != nil {
					t.Fatal(err)
				}
				devs := []*fakeDevice{newFakeDevice(), newFakeDevice(), newFakeDevice()}
				for _, d := range devs {
					d.async = async
				}
				if c.opt.Sources == nil {
					gateAll(devs...)
				}
				multi := c.opt
				multi.Engine, multi.Devices, multi.Driver, multi.MaxBlock = "gpu", []int{0, 1, 2}, fakeDevices(devs...), 40
				got, err := collectText(t, g, multi)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("three devices differ from one:\n%s", firstDiff(got, want))
				}
				if len(multi.Sources) == 0 {
					for i, d := range devs {
						if len(d.seen()) == 0 {
							t.Errorf("device %d computed nothing", i)
						}
					}
				}
			})
		}
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// TestDevicesFailureHandover fails one device at its first chunk: its
// chunk goes back to the queue, the others compute it, the notice names
// the device, and the result is the one engine's.
func TestDevicesFailureHandover(t *testing.T) {
	g := devicesTestGraph(t, 2, 120, 700)
	defer g.Close()
	for _, layout := range []arrowio.Layout{arrowio.LayoutMatrix, arrowio.LayoutStats, arrowio.LayoutPairs} {
		t.Run(string(layout), func(t *testing.T) {
			want, err := collectText(t, g, pipeline.Options{Query: pipeline.Query{Layout: layout}, Resources: pipeline.Resources{Engine: "cpu"}})
			if err != nil {
				t.Fatal(err)
			}
			devs := gateAll(newFakeDevice(), newFakeDevice(), newFakeDevice())
			devs[1].failAfter, devs[1].failWith = 0, errors.New("fake: CUDA_ERROR_ILLEGAL_ADDRESS")
			var notice bytes.Buffer
			opt := pipeline.Options{Query: pipeline.Query{Layout: layout}, Resources: pipeline.Resources{Engine: "gpu", Devices: []int{0, 1, 2}, Driver: fakeDevices(devs...), MaxBlock: 24}, Notice: &notice}
			got, err := collectText(t, g, opt)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("result after a failed device differs:\n%s", firstDiff(got, want))
			}
			if n := len(devs[1].seen()); n != 1 {
				t.Errorf("failed device ran %d chunks, want 1 (failed, none after)", n)
			}
			if !strings.Contains(notice.String(), "device gpu 1") || !strings.Contains(notice.String(), "ILLEGAL_ADDRESS") {
				t.Errorf("notice %q does not name the device and its error", notice.String())
			}
		})
	}
}

// TestDevicesAllFail checks that a run whose every device fails fails with
// the error of each, naming it, and that a request error (a negative
// cycle) is not taken for a device's fault.
func TestDevicesAllFail(t *testing.T) {
	g := devicesTestGraph(t, 3, 60, 300)
	defer g.Close()
	devs := []*fakeDevice{newFakeDevice(), newFakeDevice()}
	for i, d := range devs {
		d.failAfter, d.failWith = i, fmt.Errorf("fake: out of memory %d", i)
	}
	base := runtime.NumGoroutine()
	_, err := collectText(t, g, pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}, Resources: pipeline.Resources{Engine: "gpu", Devices: []int{0, 1}, Driver: fakeDevices(devs...), MaxBlock: 8}})
	if err == nil {
		t.Fatal("a run whose every device fails succeeded")
	}
	for _, s := range []string{"device gpu 0", "out of memory 0", "device gpu 1", "out of memory 1"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	waitGoroutines(t, base)

	// A negative cycle is the request's: every device would say the same.
	tbl := &arrowio.EdgeTable{Name: "cycle", Edges: graph.Edges{NumVertices: 3, Src: []graph.VertexID{0, 1, 2}, Dst: []graph.VertexID{1, 2, 0},
		IntWeights: []int64{1, -3, 1}}, Vertices: &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{0, 1, 2}}}
	cg, err := pipeline.LoadGraph(tbl, pipeline.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	devs = []*fakeDevice{newFakeDevice(), newFakeDevice()}
	var notice bytes.Buffer
	_, err = collectText(t, cg, pipeline.Options{Query: pipeline.Query{Algorithm: graph.BellmanFord}, Resources: pipeline.Resources{Engine: "gpu", Devices: []int{0, 1}, Driver: fakeDevices(devs...)}, Notice: &notice})
	var cycle *graph.NegativeCycleError
	if !errors.As(err, &cycle) {
		t.Errorf("negative cycle on two devices: %v, want a NegativeCycleError", err)
	}
	if notice.Len() > 0 {
		t.Errorf("a request error was handed over: %q", notice.String())
	}
}

// waitGoroutines fails if the goroutines do not come back to base.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	for range 100 {
		if runtime.NumGoroutine() <= base {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Errorf("%d goroutines, %d before", runtime.NumGoroutine(), base)
}

// TestDevicesBudgets checks that each device's chunks fit its own budget:
// the run's per-device --gpu-mem, or each engine's own.
func TestDevicesBudgets(t *testing.T) {
	g := devicesTestGraph(t, 4, 200, 1000)
	defer g.Close()
	want, err := collectText(t, g, pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}, Resources: pipeline.Resources{Engine: "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	per := int64(4 * 200) // int32 distances of 200 vertices: the CPU runner's bytes per source
	check := func(t *testing.T, devs []*fakeDevice, opt pipeline.Options, caps []int) {
		t.Helper()
		opt.Engine, opt.Layout, opt.Driver = "gpu", arrowio.LayoutMatrix, fakeDevices(devs...)
		opt.Devices = []int{0, 1}
		got, err := collectText(t, g, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("budgeted run differs:\n%s", firstDiff(got, want))
		}
		for i, d := range devs {
			seen := d.seen()
			if len(seen) == 0 {
				t.Errorf("device %d computed nothing", i)
			}
			if m := slices.Max(append(seen, 0)); m > caps[i] {
				t.Errorf("device %d ran a chunk of %d sources, its budget holds %d", i, m, caps[i])
			}
		}
	}
	t.Run("gpu-mem", func(t *testing.T) {
		// 3 blocks in flight of 24 sources per device.
		check(t, gateAll(newFakeDevice(), newFakeDevice()), pipeline.Options{Resources: pipeline.Resources{MemBudget: 3 * 24 * per}}, []int{24, 24})
	})
	t.Run("engine-budgets", func(t *testing.T) {
		a, b := newFakeDevice(), newFakeDevice()
		a.budget, b.budget = 3*40*per, 3*9*per // chunks of 40 and of 8 (a multiple of 8)
		check(t, gateAll(a, b), pipeline.Options{}, []int{40, 8})
	})
}
