package devices

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// fakeBrandesDeviceRunner has Brandes's passes, on the CPU engine, as the
// GPU runner has them on its device; each call is one chunk of its device
// (and fails where the device fails).
type fakeBrandesDeviceRunner struct {
	*fakeDeviceRunner
	g   *graph.CSR
	req graph.Request
}

func (r *fakeBrandesDeviceRunner) BetweennessSupported() error { return nil }
func (r *fakeBrandesDeviceRunner) BetweennessBytes(bool) (fixed, perSource int64) {
	return 1 << 12, 1 << 10
}

func (r *fakeBrandesDeviceRunner) RunBetweenness(ctx context.Context, sources []graph.VertexID, endpoints bool) ([]float64, error) {
	if err := r.dev.chunk(len(sources)); err != nil {
		return nil, err
	}
	opt := cpu.BetweennessOptions{Endpoints: endpoints, Hops: r.req.Algorithm.CountsHops()}
	return cpu.New(cpu.WithThreads(1)).Betweenness(ctx, r.g, sources, opt)
}

func (r *fakeBrandesDeviceRunner) RunEdgeBetweenness(ctx context.Context, sources []graph.VertexID) ([]float64, error) {
	if err := r.dev.chunk(len(sources)); err != nil {
		return nil, err
	}
	opt := cpu.BetweennessOptions{Hops: r.req.Algorithm.CountsHops()}
	return cpu.New(cpu.WithThreads(1)).EdgeBetweenness(ctx, r.g, sources, opt)
}

// TestBetweennessOverDevices runs both betweenness layouts on three fake
// devices (blocks shared among them, one device failing from its second
// chunk on) and checks the values against the CPU engine's alone, on a
// random graph with ties (weights 1..3) and its hop counts, every vertex a
// source or a sample; every device that did not fail computed a part.
func TestBetweennessOverDevices(t *testing.T) {
	rng := testgraphs.Rand(t, 53)
	edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 140, M: 700, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 3})
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
	for i := range 140 {
		v.Ints = append(v.Ints, int64(i))
	}
	g, err := pipeline.LoadGraph(&arrowio.EdgeTable{Edges: *edges, Vertices: v, Name: "ties.parquet"}, pipeline.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, q := range []pipeline.Query{
		{Layout: arrowio.LayoutBetweenness},
		{Layout: arrowio.LayoutBetweenness, Betweenness: pipeline.BetweennessOptions{Unnormalized: true, Endpoints: true}},
		{Layout: arrowio.LayoutBetweenness, Algorithm: graph.BFS, Betweenness: pipeline.BetweennessOptions{Sample: 90, Seed: 3}},
		{Layout: arrowio.LayoutEdgeBetweenness},
		{Layout: arrowio.LayoutEdgeBetweenness, Betweenness: pipeline.BetweennessOptions{Unnormalized: true}},
	} {
		want, _ := betweennessValues(t, g, pipeline.Options{Query: q, Resources: pipeline.Resources{Engine: "cpu"}})
		devs := gateAll(newFakeDevice(), newFakeDevice(), newFakeDevice())
		for _, d := range devs {
			d.brandes = true
		}
		devs[2].failAfter, devs[2].failWith = 1, errors.New("fake: CUDA_ERROR_ILLEGAL_ADDRESS")
		var notice strings.Builder
		opt := pipeline.Options{Query: q, Notice: &notice,
			Resources: pipeline.Resources{Engine: "gpu", Devices: []int{0, 1, 2}, Driver: fakeDevices(devs...), MaxBlock: 48}}
		got, sum := betweennessValues(t, g, opt)
		if sum.Engine != "gpu" {
			t.Fatalf("%+v: engine %s, notes %q", q, sum.Engine, notice.String())
		}
		if len(got) != len(want) {
			t.Fatalf("%+v: %d rows, want %d", q, len(got), len(want))
		}
		for i := range want {
			if d := math.Abs(got[i] - want[i]); d > 1e-9*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("%+v: row %d: %v over three devices, %v on the CPU engine", q, i, got[i], want[i])
			}
		}
		for i, d := range devs[:2] {
			if len(d.seen()) == 0 {
				t.Errorf("%+v: device %d computed nothing", q, i)
			}
		}
		if len(devs[2].seen()) > 1 && !strings.Contains(notice.String(), "its blocks go to the other devices") {
			t.Errorf("%+v: the failed device was not said: %q", q, notice.String())
		}
	}
}

// betweennessValues runs opt's betweenness layout and returns its values
// (the last column) in row order and the summary.
func betweennessValues(t *testing.T, g *pipeline.Graph, opt pipeline.Options) ([]float64, *pipeline.Summary) {
	t.Helper()
	var out []float64
	sum, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		out = append(out, r.Column(int(r.NumCols())-1).(*array.Float64).Float64Values()...)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", opt.Engine, err)
	}
	return out, sum
}
