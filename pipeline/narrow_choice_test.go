package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// fakeDeviceNarrow stands for the GPU runner: a graph.NarrowRunner (its Run
// is the CPU engine's narrowed runner's) that also has the paths of full
// rows a device runner has (stats on the device, blocks started ahead,
// resident blocks, pinned host memory), each of which fails when called.
type fakeDeviceNarrow struct {
	graph.Runner
	narrowed bool
	runs     int
}

var errFullRows = errors.New("a path of full rows was taken for a narrowed request")

func (f *fakeDeviceNarrow) Narrowed() bool { return f.narrowed }

func (f *fakeDeviceNarrow) Run(ctx context.Context, out *graph.Block) error {
	f.runs++
	return f.Runner.Run(ctx, out)
}

func (f *fakeDeviceNarrow) RunStats(context.Context, []graph.VertexID) (*graph.Stats, error) {
	return nil, errFullRows
}

func (f *fakeDeviceNarrow) Start(context.Context, *graph.Block) (graph.Waiter, error) {
	return nil, errFullRows
}

func (f *fakeDeviceNarrow) ComputeResident(context.Context, []graph.VertexID) (graph.ResidentBlock, error) {
	return nil, errFullRows
}

func (f *fakeDeviceNarrow) PinHost([]byte) error   { return errFullRows }
func (f *fakeDeviceNarrow) UnpinHost([]byte) error { return errFullRows }
func (f *fakeDeviceNarrow) Describe() string       { return "fake device kernel" }
func (f *fakeDeviceNarrow) KernelTime() time.Duration {
	return 42 * time.Millisecond
}
func (f *fakeDeviceNarrow) HostTimes() (plan, alloc time.Duration) {
	return time.Second, 2 * time.Second
}

// TestNarrowRunnerChoice checks which runner a narrowed request runs on: a
// NarrowRunner's own Run (through engineNarrowed, which hides its paths of
// full rows, when it has any), and the host's narrowing (hostNarrowed) for
// a runner that is no NarrowRunner, one whose Narrowed is false, and for
// paths; then that the pipeline's blocks of every layout run through the
// fake's Run and equal the CPU engine's narrowed rows.
func TestNarrowRunnerChoice(t *testing.T) {
	rng := testgraphs.Rand(t, 19)
	n := 40
	g, err := LoadGraph(randomTable(rng, n, 3*n, testgraphs.Int), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets := []graph.VertexID{7, 3, 39, 3, 0}
	req := graph.Request{Algorithm: graph.Dijkstra, Targets: targets, Cutoff: 30, HasCutoff: true}
	ctx := context.Background()
	cpuRunner, err := cpu.New(cpu.WithThreads(2)).Prepare(ctx, g.CSR, req)
	if err != nil {
		t.Fatal(err)
	}
	defer cpuRunner.Close()

	fake := &fakeDeviceNarrow{Runner: cpuRunner, narrowed: true}
	native := narrowRunner(fake, req, n, false)
	en, ok := native.(*engineNarrowed)
	if !ok {
		t.Fatalf("a NarrowRunner with paths of full rows runs as %T, want *engineNarrowed", native)
	}
	if _, ok := native.(graph.StatsRunner); ok {
		t.Error("the narrowed runner still offers RunStats")
	}
	if _, ok := native.(graph.AsyncRunner); ok {
		t.Error("the narrowed runner still offers Start")
	}
	if _, ok := native.(graph.ResidentRunner); ok {
		t.Error("the narrowed runner still offers ComputeResident")
	}
	if _, ok := native.(graph.HostPinner); ok {
		t.Error("the narrowed runner still offers PinHost")
	}
	if d := describe(native, req.Algorithm); !strings.HasPrefix(d, "fake device kernel") || !strings.Contains(d, "by the engine") {
		t.Errorf("description %q: want the inner runner's kernel and the engine's narrowing", d)
	}
	if en.KernelTime() != 42*time.Millisecond {
		t.Errorf("KernelTime = %v, want the inner runner's 42ms", en.KernelTime())
	}
	if p, a := en.HostTimes(); p != time.Second || a != 2*time.Second {
		t.Errorf("HostTimes = %v, %v, want the inner runner's 1s, 2s", p, a)
	}
	if got := narrowRunner(cpuRunner, req, n, false); got != cpuRunner {
		t.Errorf("the CPU engine's runner, a NarrowRunner with no other paths, runs as %T", got)
	}
	if got := narrowRunner(fake, graph.Request{Algorithm: graph.Dijkstra}, n, false); got != graph.Runner(fake) {
		t.Errorf("a request of full rows runs as %T, want the runner itself", got)
	}
	for name, r := range map[string]graph.Runner{
		"no NarrowRunner":   plainRunner{cpuRunner},
		"Narrowed is false": &fakeDeviceNarrow{Runner: cpuRunner},
	} {
		if got, ok := narrowRunner(r, req, n, false).(*hostNarrowed); !ok {
			t.Errorf("%s: runs as %T, want *hostNarrowed", name, got)
		}
	}
	if got, ok := narrowRunner(fake, req, n, true).(*hostNarrowed); !ok {
		t.Errorf("paths: run as %T, want *hostNarrowed (full predecessor rows)", got)
	}

	sources := allSources(n)
	want := graph.NewTargetBlock(sources, targets, n, cpuRunner.DistType(), false)
	if err := cpuRunner.Run(ctx, want); err != nil {
		t.Fatal(err)
	}
	wantStats := graph.ComputeStats(want)
	w := len(targets)
	for _, layout := range []arrowio.Layout{arrowio.LayoutPairs, arrowio.LayoutMatrix, arrowio.LayoutStats} {
		fake.runs = 0
		opt := Options{Query: Query{Layout: layout}}
		blocks := PlanBlocks(len(sources), 1, 0, 7)
		err := runBlocks(ctx, g, native, opt, schedule{targets: targets}, sources, blocks, func(res blockResult) error {
			if st := res.stats; st != nil {
				lo := res.end - len(st.Sources)
				if !slices.Equal(st.Reachable, wantStats.Reachable[lo:res.end]) || !slices.Equal(st.SumInt, wantStats.SumInt[lo:res.end]) ||
					!slices.Equal(st.Eccentricity, wantStats.Eccentricity[lo:res.end]) {
					return errors.New("stats differ from those of the CPU engine's narrowed rows")
				}
				return nil
			}
			b := res.block
			if b == nil {
				return errors.New("a result with neither a block nor stats")
			}
			if !slices.Equal(b.Targets, targets) {
				return errors.New("a block without the targets' columns")
			}
			lo := res.end - len(b.Sources)
			if !slices.Equal(graph.DistOf[int32](b), graph.DistOf[int32](want)[lo*w:res.end*w]) {
				return errors.New("a block differs from the CPU engine's narrowed rows")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", layout, err)
		}
		if fake.runs != len(blocks) {
			t.Errorf("%s: %d blocks ran through the NarrowRunner's Run, want %d", layout, fake.runs, len(blocks))
		}
	}
}
