package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// randomTable draws a random edge table whose external ids are 0..n-1.
func randomTable(rng *rand.Rand, n, m int, kind testgraphs.WeightKind) *arrowio.EdgeTable {
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: m, Kind: kind, MinWeight: 0, MaxWeight: 20,
		Dyadic: true, Duplicates: m / 5})
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{}}
	for i := 0; i < n; i++ {
		v.Ints = append(v.Ints, int64(i))
	}
	return &arrowio.EdgeTable{Edges: *e, Vertices: v, Name: "random.parquet"}
}

// sameCSR reports how got differs from want, or "".
func sameCSR(got, want *graph.CSR) string {
	switch {
	case got.NumVertices != want.NumVertices || got.Type != want.Type:
		return fmt.Sprintf("%d vertices of %s, want %d of %s", got.NumVertices, got.Type, want.NumVertices, want.Type)
	case got.Weighted != want.Weighted || got.Undirected != want.Undirected:
		return fmt.Sprintf("weighted %v undirected %v, want %v %v", got.Weighted, got.Undirected, want.Weighted, want.Undirected)
	case got.MinWeight != want.MinWeight || got.MaxWeight != want.MaxWeight:
		return fmt.Sprintf("weights in [%v, %v], want [%v, %v]", got.MinWeight, got.MaxWeight, want.MinWeight, want.MaxWeight)
	case !slices.Equal(got.Offsets, want.Offsets):
		return "offsets differ"
	case !slices.Equal(got.Targets, want.Targets):
		return "targets differ"
	case fmt.Sprint(got.Weights) != fmt.Sprint(want.Weights):
		return "weights differ"
	}
	return ""
}

// collectText runs opt and renders every record, row by row, as text (the
// exact value of every cell, nulls included).
func collectText(t *testing.T, g *Graph, opt Options) (string, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator = mem
	var b strings.Builder
	_, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		b.WriteString(recordText(r))
		return nil
	})
	return b.String(), err
}

// recordText renders r's rows a line each, its columns' values followed
// by tabs.
func recordText(r arrow.RecordBatch) string {
	var b strings.Builder
	for i := 0; i < int(r.NumRows()); i++ {
		for c := 0; c < int(r.NumCols()); c++ {
			b.WriteString(r.Column(c).ValueStr(i))
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestLoadGraphEngines checks LoadGraph's engine choice where it does not
// need a GPU: the CPU build by default and for "cpu", auto's silent
// fallback (Run says once that it uses the CPU, without looking for the
// GPU again), auto's CPU build for few sources, the ErrUnavailable error of
// "gpu" without a GPU (the same as Run's), an unknown engine, the log line,
// and Close (twice, on a CPU graph).
func TestLoadGraphEngines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tbl := randomTable(rng, 100, 400, testgraphs.Int)
	want, err := graph.Build(&tbl.Edges, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	status := GPUStatus()
	for _, engine := range []string{"", "cpu", "auto"} {
		var log, notice bytes.Buffer
		opens := devices.Opens()
		g, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: engine, Log: &log, Notice: &notice})
		if err != nil {
			t.Fatalf("engine %q: %v", engine, err)
		}
		wantOn := "cpu"
		if engine == "auto" && status.Available {
			wantOn = "gpu"
		}
		if g.BuiltOn() != wantOn {
			t.Errorf("engine %q: built on %s, want %s (GPU: %+v)", engine, g.BuiltOn(), wantOn, status)
		}
		if diff := sameCSR(g.CSR, want); diff != "" {
			t.Errorf("engine %q: %s", engine, diff)
		}
		if !g.Undirected || g.Table != tbl {
			t.Errorf("engine %q: Undirected %v, Table %p, want true, %p", engine, g.Undirected, g.Table, tbl)
		}
		if l := log.String(); !strings.HasPrefix(l, "pathctl: CSR built on the "+strings.ToUpper(wantOn)+" in ") || strings.Count(l, "\n") != 1 {
			t.Errorf("engine %q: log %q", engine, l)
		}
		if notice.Len() != 0 {
			t.Errorf("engine %q: LoadGraph's notice %q", engine, notice.String())
		}
		if engine == "auto" && !status.Available {
			// Run says once, in the verbose log only (a machine without
			// a GPU runs quietly), that it falls back, for the reason
			// LoadGraph found, and does not open the GPU again.
			var runNotice, runLog bytes.Buffer
			if _, err := collectText(t, g, Options{Notice: &runNotice, Log: &runLog}); err != nil {
				t.Fatal(err)
			}
			wantLog := fmt.Sprintf("pathctl: GPU engine unavailable (%s); using the CPU engine\n", status.Reason)
			if runNotice.Len() != 0 || strings.Count(runLog.String(), wantLog) != 1 {
				t.Errorf("auto: Run's notice %q and log %q, want no notice and %q in the log", runNotice.String(), runLog.String(), wantLog)
			}
			if got := devices.Opens() - opens; got != 1 {
				t.Errorf("auto: %d GPU engines opened by LoadGraph and Run, want 1", got)
			}
			_, err := collectText(t, g, Options{Resources: Resources{Engine: "gpu"}})
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), status.Reason) {
				t.Errorf("auto, then Run on the GPU: %v", err)
			}
		}
		for range 2 {
			if err := g.Close(); err != nil {
				t.Errorf("engine %q: Close: %v", engine, err)
			}
		}
	}

	// Auto with few sources stays on the CPU without opening a device.
	opens := devices.Opens()
	g, err := LoadGraph(tbl, LoadOptions{Engine: "auto", Sources: minGPUSources - 1})
	if err != nil {
		t.Fatal(err)
	}
	if g.BuiltOn() != "cpu" || devices.Opens() != opens {
		t.Errorf("auto for %d sources: built on %s, %d devices opened", minGPUSources-1, g.BuiltOn(), devices.Opens()-opens)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	small := randomTable(rng, minGPUSources-1, 100, testgraphs.Int)
	if g, err = LoadGraph(small, LoadOptions{Engine: "auto"}); err != nil {
		t.Fatal(err)
	}
	if g.BuiltOn() != "cpu" || devices.Opens() != opens {
		t.Errorf("auto on %d vertices: built on %s, %d devices opened", minGPUSources-1, g.BuiltOn(), devices.Opens()-opens)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}

	if _, err := LoadGraph(tbl, LoadOptions{Engine: "tpu"}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"tpu"`) {
		t.Errorf("engine tpu: %v", err)
	}

	if !status.Available {
		_, err := LoadGraph(tbl, LoadOptions{Engine: "gpu"})
		cpuGraph, cerr := LoadGraph(tbl, LoadOptions{})
		if cerr != nil {
			t.Fatal(cerr)
		}
		_, runErr := collectText(t, cpuGraph, Options{Resources: Resources{Engine: "gpu"}})
		if !errors.Is(err, ErrUnavailable) || runErr == nil || err.Error() != runErr.Error() {
			t.Errorf("engine gpu without a GPU: %v; want Run's error %v", err, runErr)
		}
	}
}

// badTables are edge tables graph.Build refuses.
var badTables = []struct {
	name  string
	edges graph.Edges
	opt   LoadOptions
}{
	{"target out of range", graph.Edges{NumVertices: 2, Src: []int32{0, 1}, Dst: []int32{1, 2}}, LoadOptions{}},
	{"lengths", graph.Edges{NumVertices: 2, Src: []int32{0, 1}, Dst: []int32{1}}, LoadOptions{}},
	{"NaN weight", graph.Edges{NumVertices: 2, Src: []int32{0, 1}, Dst: []int32{1, 0}, Float32Weights: []float32{1, float32(math.NaN())}}, LoadOptions{}},
	// (int32 asked for and too small is refused before Build, naming the
	// edge: TestOverflowingGraphsRefused.)
	{"float32 too coarse for the weights", graph.Edges{NumVertices: 3, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{1 << 40}}, LoadOptions{DistType: graph.DistFloat32}},
	{"float weights in int64", graph.Edges{NumVertices: 3, Src: []int32{0}, Dst: []int32{1}, Float64Weights: []float64{0.5}}, LoadOptions{DistType: graph.DistInt64}},
}

// TestLoadGraphErrorsReadTheSame checks that a table graph.Build refuses
// gets the same message, naming the table, from every engine LoadGraph
// can build on here, and that a refused build leaves no device open.
func TestLoadGraphErrorsReadTheSame(t *testing.T) {
	engines := []string{"cpu", "auto"}
	if GPUStatus().Available {
		engines = append(engines, "gpu")
	}
	for _, bt := range badTables {
		tbl := &arrowio.EdgeTable{Edges: bt.edges, Name: "bad.csv"}
		_, want := graph.Build(&tbl.Edges, graph.BuildOptions{Undirected: bt.opt.Undirected, DistType: bt.opt.DistType})
		if want == nil {
			t.Fatalf("%s: graph.Build accepts it", bt.name)
		}
		for _, engine := range engines {
			opt := bt.opt
			opt.Engine, opt.Sources = engine, 1000
			_, err := LoadGraph(tbl, opt)
			if err == nil || err.Error() != "bad.csv: "+want.Error() {
				t.Errorf("%s: engine %s: %v, want %q", bt.name, engine, err, "bad.csv: "+want.Error())
			}
		}
	}
}

// TestGPUBuiltGraphRuns builds random graphs (internal/testgraphs, and
// gen's R-MAT and grid) on the GPU and checks, for every layout, that runs
// on them equal runs on the same graph built on the CPU: on the GPU engine
// (the graph's own, one context for the build and every run; the first run
// adopts the device copy instead of uploading the graph) and on the CPU
// engine (Options.Engine cpu uses the host CSR); where distances are exact
// also that the GPU's equal the CPU's. It checks the device memory: the
// graph alone after the build, nothing after Close.
func TestGPUBuiltGraphRuns(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	kinds := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float32, testgraphs.Float64, testgraphs.Unweighted}
	for trial := 0; trial < 8; trial++ {
		n := minGPUSources + rng.IntN(600)
		kind := kinds[trial%len(kinds)]
		undirected := trial%2 == 1
		tbl := randomTable(rng, n, n*(1+rng.IntN(6)), kind)
		name := fmt.Sprintf("seed %d: trial %d (n=%d, %s, undirected=%v)", seed, trial, n, kind, undirected)
		checkGPUBuilt(t, name, tbl, undirected, kind != testgraphs.Float32, rng)
	}
	rmat, err := gen.RMAT(9, 8, seed)
	if err != nil {
		t.Fatal(err)
	}
	grid, err := gen.Grid(16, 24, seed, gen.WithFloatWeights(0, 4))
	if err != nil {
		t.Fatal(err)
	}
	for i, el := range []*gen.EdgeList{rmat, grid} {
		e, err := el.GraphEdges()
		if err != nil {
			t.Fatal(err)
		}
		v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{}}
		for i := 0; i < e.NumVertices; i++ {
			v.Ints = append(v.Ints, int64(i))
		}
		tbl := &arrowio.EdgeTable{Edges: *e, Vertices: v, Name: "gen.parquet"}
		// Uniform float weights: sums depend on the order of the additions.
		exact := i == 0
		checkGPUBuilt(t, fmt.Sprintf("seed %d: gen graph %d", seed, i), tbl, i == 0, exact, rng)
	}
}

// checkGPUBuilt is TestGPUBuiltGraphRuns on one table.
func checkGPUBuilt(t *testing.T, name string, tbl *arrowio.EdgeTable, undirected, exact bool, rng *rand.Rand) {
	t.Helper()
	opens := devices.Opens()
	var log bytes.Buffer
	g, err := LoadGraph(tbl, LoadOptions{Undirected: undirected, Engine: "gpu", Log: &log})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if g.BuiltOn() != "gpu" || !strings.HasPrefix(log.String(), "pathctl: CSR built on the GPU in ") {
		t.Fatalf("%s: built on %s, log %q", name, g.BuiltOn(), log.String())
	}
	ref, err := LoadGraph(tbl, LoadOptions{Undirected: undirected})
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameCSR(g.CSR, ref.CSR); diff != "" {
		t.Fatalf("%s: the GPU's CSR: %s", name, diff)
	}
	dev := devices.GPUEngine(g.device)
	n, arcs := int64(g.NumVertices()), g.CSR.NumEdges()
	graphBytes := 8*(n+1) + 4*arcs + int64(g.CSR.Type.Size())*arcs
	if got := dev.LiveBytes(); got != graphBytes {
		t.Fatalf("%s: %d device bytes after the build, want the graph's %d", name, got, graphBytes)
	}
	maxBlock := 1 + rng.IntN(int(n))
	for i, layout := range []arrowio.Layout{arrowio.LayoutStats, arrowio.LayoutPairs, arrowio.LayoutMatrix} {
		// One device: the engine count below is one device's (over
		// several, a run opens an engine per device it uses).
		opt := Options{Query: Query{Layout: layout}, Resources: Resources{Engine: "gpu", MaxBlock: maxBlock, Devices: []int{0}}}
		got, err := collectText(t, g, opt)
		if err != nil {
			t.Fatalf("%s: %s on the GPU-built graph: %v", name, layout, err)
		}
		if i == 0 {
			if up := dev.GraphUploads(); up != 0 {
				t.Fatalf("%s: the first run uploaded the graph (%d uploads); want it to adopt the device copy", name, up)
			}
			if live := dev.LiveBytes(); live != 0 {
				t.Fatalf("%s: %d device bytes after the first run closed", name, live)
			}
		}
		want, err := collectText(t, ref, opt)
		if err != nil {
			t.Fatalf("%s: %s on the CPU-built graph: %v", name, layout, err)
		}
		if got != want {
			t.Fatalf("%s: %s on the GPU engine: the GPU-built graph's result differs from the CPU-built graph's", name, layout)
		}
		opt.Engine = "cpu"
		gotCPU, err := collectText(t, g, opt)
		if err != nil {
			t.Fatal(err)
		}
		wantCPU, err := collectText(t, ref, opt)
		if err != nil {
			t.Fatal(err)
		}
		if gotCPU != wantCPU {
			t.Fatalf("%s: %s on the CPU engine: the GPU-built graph's result differs from the CPU-built graph's", name, layout)
		}
		if exact && layout != arrowio.LayoutStats && got != wantCPU {
			t.Fatalf("%s: %s: the GPU engine's distances differ from the CPU engine's", name, layout)
		}
	}
	// Every GPU run above used the graph's engine; ref's opened their own.
	if got := devices.Opens() - opens; got != 1+3 {
		t.Fatalf("%s: %d GPU engines opened, want 1 for the GPU-built graph and 3 for the CPU-built one", name, got)
	}
	for range 2 {
		if err := g.Close(); err != nil {
			t.Fatalf("%s: Close: %v", name, err)
		}
	}
	if live := dev.LiveBytes(); live != 0 {
		t.Fatalf("%s: %d device bytes after Close", name, live)
	}
	// A closed graph still runs, on an engine of its own.
	if _, err := collectText(t, g, Options{Query: Query{Layout: arrowio.LayoutStats}, Resources: Resources{Engine: "gpu"}}); err != nil {
		t.Fatalf("%s: a run after Close: %v", name, err)
	}
}

// TestGPUBuiltSharedCases runs every algorithm on the shared test graphs
// built on the GPU and on the CPU, on the GPU engine: the same distances,
// and the same errors (negative weights, negative cycles naming external
// ids).
func TestGPUBuiltSharedCases(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	for _, c := range testgraphs.Cases() {
		ref := caseGraph(t, &c)
		g, err := LoadGraph(ref.Table, LoadOptions{Undirected: c.Undirected, Engine: "gpu"})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if diff := sameCSR(g.CSR, ref.CSR); diff != "" {
			t.Fatalf("%s: the GPU's CSR: %s", c.Name, diff)
		}
		for _, algo := range algorithms {
			opt := Options{Query: Query{Algorithm: algo, Layout: arrowio.LayoutMatrix}, Resources: Resources{Engine: "gpu", MaxBlock: 2}}
			got, gerr := collectText(t, g, opt)
			want, werr := collectText(t, ref, opt)
			if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%s: %s: the GPU-built graph gives %v, the CPU-built %v, or their distances differ", c.Name, algo, gerr, werr)
			}
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkLoadGraph times LoadGraph on R-MAT graphs (undirected, integer
// weights) on each engine, opening the device included; build-ms is the
// CSR build alone.
func BenchmarkLoadGraph(b *testing.B) {
	for _, scale := range []int{16, 20} {
		el, err := gen.RMAT(scale, 16, 1)
		if err != nil {
			b.Fatal(err)
		}
		e, err := el.GraphEdges()
		if err != nil {
			b.Fatal(err)
		}
		tbl := &arrowio.EdgeTable{Edges: *e, Name: "rmat"}
		for _, engine := range []string{"cpu", "gpu"} {
			b.Run(fmt.Sprintf("rmat%d/%s", scale, engine), func(b *testing.B) {
				if st := GPUStatus(); engine == "gpu" && !st.Available {
					b.Skip("no GPU: " + st.Reason)
				}
				var build time.Duration
				for range b.N {
					g, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: engine})
					if err != nil {
						b.Fatal(err)
					}
					build += g.buildTime
					if err := g.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(build.Microseconds())/1e3/float64(b.N), "build-ms")
			})
		}
	}
}

// TestFloat32Rounding: the verbose log of a run on float32 weights (with
// fractions or without) says, once, that they are computed in float64 and
// rounded to float32, and the graph's arcs are float64; float32 weights
// asked for as float64 distances, float64 weights and integer weights get
// no such line and keep their type.
func TestFloat32Rounding(t *testing.T) {
	const hint = "float32 weights computed as float64 distances, rounded once to float32"
	cases := []struct {
		name   string
		kind   testgraphs.WeightKind
		dyadic bool
		dt     DistType
		want   bool
	}{
		{"float32 fractions", testgraphs.Float32, false, 0, true},
		{"float32 fractions as float32", testgraphs.Float32, false, graph.DistFloat32, true},
		{"float32 fractions as float64", testgraphs.Float32, false, graph.DistFloat64, false},
		{"float32 eighths", testgraphs.Float32, true, 0, true},
		{"float64 fractions", testgraphs.Float64, false, 0, false},
		{"integers", testgraphs.Int, false, 0, false},
	}
	for _, c := range cases {
		rng := rand.New(rand.NewPCG(4, 5))
		e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 40, M: 160, Kind: c.kind, MinWeight: 1, MaxWeight: 10, Dyadic: c.dyadic})
		v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{}}
		for i := range 40 {
			v.Ints = append(v.Ints, int64(i))
		}
		g, err := LoadGraph(&arrowio.EdgeTable{Edges: *e, Vertices: v, Name: "hint.parquet"}, LoadOptions{Engine: "cpu", DistType: c.dt})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var log bytes.Buffer
		if _, err := collectText(t, g, Options{Resources: Resources{Engine: "cpu"}, Log: &log}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.Count(log.String(), hint); got != map[bool]int{true: 1, false: 0}[c.want] {
			t.Errorf("%s (%s distances): the rounding line appears %d times in the log:\n%s", c.name, g.CSR.Type, got, log.String())
		}
		if rounds := g.DistType() == graph.DistFloat32 && g.CSR.Type == graph.DistFloat64; rounds != c.want {
			t.Errorf("%s: the graph's results are %s from %s arcs", c.name, g.DistType(), g.CSR.Type)
		}
	}
}
