package benchsuite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// tinyGraph writes a random weighted graph of n vertices (ids 10, 20, …)
// as CSV and returns its path; seed is logged for reproduction.
func tinyGraph(t *testing.T, dir, name string, n, arcs int, seed uint64) string {
	t.Helper()
	t.Logf("%s: seed %d", name, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	for i := range n - 1 { // a path keeps most vertices reachable
		fmt.Fprintf(&b, "%d,%d,%d\n", 10*(i+1), 10*(i+2), 1+rng.IntN(50))
	}
	for range arcs {
		fmt.Fprintf(&b, "%d,%d,%d\n", 10*(1+rng.IntN(n)), 10*(1+rng.IntN(n)), 1+rng.IntN(50))
	}
	path := filepath.Join(dir, name+".csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cpuParams are Params of CPU rows over graphs, with algos, every source
// and 4 check sources unless the test changes them.
func cpuParams(graphs []string, algos ...graph.Algorithm) Params {
	return Params{Graphs: graphs, Engines: []string{"cpu"}, CPUAlgos: algos, Check: 4, Seed: 1, DiskGraph: "none"}
}

func TestRunExtrapolates(t *testing.T) {
	path := tinyGraph(t, t.TempDir(), "tiny", 30, 90, 2)
	p := cpuParams([]string{path}, graph.Auto, graph.Delta)
	p.CPUSample, p.Check = 7, 3
	rep, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Graphs) != 1 || rep.Graphs[0].Name != "tiny" || rep.Graphs[0].Vertices != 30 {
		t.Fatalf("graphs = %+v, want one graph tiny of 30 vertices", rep.Graphs)
	}
	if rep.Graphs[0].FloorSeconds != nil || rep.Bandwidth != nil {
		t.Errorf("floor and bandwidth set without a GPU engine")
	}
	if len(rep.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rep.Rows))
	}
	for _, row := range rep.Rows {
		if row.Sources != 7 || !row.Extrapolated || row.Rows != 7 || row.Checked != 3 {
			t.Errorf("row %+v: want 7 sources and rows, extrapolated, 3 checked", row)
		}
		if want := row.MeasuredSeconds * 30 / 7; math.Abs(row.Seconds-want) > 1e-9*want {
			t.Errorf("%s: seconds %g, want measured × n / sources = %g", row.Algorithm, row.Seconds, want)
		}
		if want := 30 * 30 / row.Seconds; math.Abs(row.PairsPerSecond-want) > 1e-9*want {
			t.Errorf("%s: pairs/s %g, want %g", row.Algorithm, row.PairsPerSecond, want)
		}
		if want := float64(row.Arcs) * 30 / row.Seconds; math.Abs(row.RelaxationsPerSecond-want) > 1e-9*want {
			t.Errorf("%s: relaxations/s %g, want %g", row.Algorithm, row.RelaxationsPerSecond, want)
		}
	}
	if md := Markdown(rep); !strings.Contains(md, "extrapolated from 7 sources") {
		t.Errorf("table lacks the extrapolation note:\n%s", md)
	}
}

// shiftedWeights copies g with every weight raised by one: an engine that
// answers for another graph.
func shiftedWeights(g *pipeline.Graph) *pipeline.Graph {
	csr := *g.CSR
	switch w := g.CSR.Weights.(type) {
	case []int32:
		x := slices.Clone(w)
		for i := range x {
			x[i]++
		}
		csr.Weights = x
	case []int64:
		x := slices.Clone(w)
		for i := range x {
			x[i]++
		}
		csr.Weights = x
	}
	csr.MinWeight++
	csr.MaxWeight++
	return &pipeline.Graph{Table: g.Table, CSR: &csr, Undirected: g.Undirected}
}

// shifted is q prepared again on shiftedWeights of its graph: the same
// question answered for another graph.
func shifted(q *pipeline.Prepared) (*pipeline.Prepared, error) {
	return pipeline.Prepare(shiftedWeights(q.Graph()), q.Options())
}

// TestRunCatchesWrongEngine makes the timed run, the check run or both
// answer for another graph: every case fails, naming the run and the
// serial oracle, and no report comes back.
func TestRunCatchesWrongEngine(t *testing.T) {
	path := tinyGraph(t, t.TempDir(), "tiny", 30, 90, 3)
	// A verifier that runs the engine on the shifted graph and compares
	// with the oracle of the true one, as pipeline.Verify would see a
	// wrong engine.
	wrongVerify := func(ctx context.Context, q *pipeline.Prepared, samples int, seed uint64) (*pipeline.VerifyReport, error) {
		opt := q.Options()
		opt.Layout = arrowio.LayoutMatrix
		mq, err := pipeline.Prepare(q.Graph(), opt)
		if err != nil {
			return nil, err
		}
		check, err := pipeline.NewRowCheck(mq, opt.Sources)
		if err != nil {
			return nil, err
		}
		sq, err := shifted(mq)
		if err != nil {
			return nil, err
		}
		if _, err := sq.Run(ctx, check.Observe); err != nil {
			return nil, err
		}
		return check.Report(), nil
	}
	wrongRun := func(ctx context.Context, q *pipeline.Prepared, emit func(arrow.RecordBatch) error) (*pipeline.Summary, error) {
		sq, err := shifted(q)
		if err != nil {
			return nil, err
		}
		return sq.Run(ctx, emit)
	}
	for _, tc := range []struct {
		name        string
		layout      arrowio.Layout
		wrongRun    bool
		wrongVerify bool
		want        string
	}{
		{"every run", arrowio.LayoutStats, true, true, "(timed run): wrong answer: source"},
		{"timed stats run only", arrowio.LayoutStats, true, false, "(timed run): wrong answer: source"},
		{"check run only", arrowio.LayoutStats, false, true, "wrong answer: distance"},
		{"timed matrix run", arrowio.LayoutMatrix, true, false, "(timed run): wrong answer: distance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := cpuParams([]string{path}, graph.Auto)
			p.Layout = tc.layout
			if tc.wrongRun {
				p.Run = wrongRun
			}
			if tc.wrongVerify {
				p.Verify = wrongVerify
			}
			rep, err := Run(context.Background(), p)
			if err == nil {
				t.Fatalf("a wrong engine passed: %+v", rep.Rows)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "serial oracle") {
				t.Errorf("error %q lacks %q and 'serial oracle'", err, tc.want)
			}
			if rep != nil {
				t.Errorf("a failed bench returned a report")
			}
		})
	}
}

// TestRunFloor stands a CPU run in for the GPU rows (the parameters) to
// check the bandwidth, the floor column and the GPU rows' labels without a
// GPU.
func TestRunFloor(t *testing.T) {
	var engines []string
	p := cpuParams([]string{tinyGraph(t, t.TempDir(), "tiny", 50, 100, 4)}, graph.Auto)
	p.Engines, p.Algos, p.DiskGraph = []string{"auto"}, []graph.Algorithm{graph.Auto, graph.Edge}, ""
	p.MeasureDownload = func() (pipeline.Download, error) {
		return pipeline.Download{BytesPerSecond: 2e9, Device: "Test GPU", CUDADriver: 13000}, nil
	}
	p.Run = func(ctx context.Context, q *pipeline.Prepared, emit func(arrow.RecordBatch) error) (*pipeline.Summary, error) {
		engines = append(engines, q.Options().Engine)
		return q.OnCPU().Run(ctx, emit)
	}
	p.Verify = func(ctx context.Context, q *pipeline.Prepared, samples int, seed uint64) (*pipeline.VerifyReport, error) {
		return pipeline.Verify(ctx, q.OnCPU(), samples, seed)
	}
	rep, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Bandwidth == nil || *rep.Bandwidth != 2e9 {
		t.Fatalf("bandwidth %v, want 2e9", rep.Bandwidth)
	}
	if rep.Machine.GPU != "Test GPU" || rep.Machine.CUDADriver != "13.0" {
		t.Errorf("machine %+v: want GPU Test GPU, CUDA 13.0", rep.Machine)
	}
	want := 50.0 * 50 * 4 / 2e9 // int32 distances
	if f := rep.Graphs[0].FloorSeconds; f == nil || math.Abs(*f-want) > 1e-15 {
		t.Errorf("floor %v, want n² × 4 / bandwidth = %g", f, want)
	}
	var runs []string
	for _, row := range rep.Rows {
		runs = append(runs, row.Engine+" "+row.Algorithm)
	}
	if !slices.Equal(runs, []string{"gpu auto", "gpu edge", "cpu auto"}) {
		t.Errorf("rows %v, want gpu auto, gpu edge, cpu auto", runs)
	}
	if !slices.Contains(engines, "gpu") {
		t.Errorf("engines asked for %v: the GPU rows did not ask for gpu", engines)
	}
	if rep.Disk != nil || !strings.Contains(rep.DiskSkipped, "rmat16") {
		t.Errorf("disk %+v, skipped %q: want skipped, naming rmat16", rep.Disk, rep.DiskSkipped)
	}
	md := Markdown(rep)
	for _, s := range []string{"2.0 GB/s", fmt.Sprintf("| %.3g |", want), "| pathctl gpu edge |", "Test GPU"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
}

// TestRunGPUUnavailable: "gpu" without a usable GPU fails as unavailable;
// "auto" runs the CPU rows and says why.
func TestRunGPUUnavailable(t *testing.T) {
	p := cpuParams([]string{tinyGraph(t, t.TempDir(), "tiny", 20, 40, 6)}, graph.Auto)
	p.MeasureDownload = func() (pipeline.Download, error) { return pipeline.Download{}, errors.New("gpu: no device") }
	p.Engines = []string{"gpu", "cpu"}
	if _, err := Run(context.Background(), p); !errors.Is(err, pipeline.ErrUnavailable) {
		t.Errorf("engine gpu without a GPU: error %v, want pipeline.ErrUnavailable", err)
	}
	p.Engines = []string{"auto"}
	rep, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Engine != "cpu" || rep.Machine.GPUReason != "gpu: no device" {
		t.Errorf("auto without a GPU: rows %+v, reason %q", rep.Rows, rep.Machine.GPUReason)
	}
	if md := Markdown(rep); !strings.Contains(md, "no GPU (gpu: no device)") {
		t.Errorf("markdown lacks the reason:\n%s", md)
	}
}

func TestRunDisk(t *testing.T) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	p := cpuParams([]string{tinyGraph(t, dir, "tiny", 300, 900, 5)}, graph.Auto)
	p.CPUSample, p.DiskGraph, p.DiskDir, p.DiskRounds = 16, "tiny", disk, 2
	rep, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Disk
	if d == nil {
		t.Fatalf("no disk result; skipped: %s", rep.DiskSkipped)
	}
	// 300 rows of 300 int32 distances, plus validity bitmaps and framing.
	if d.Bytes < 300*300*4 || d.Bytes > 2*300*300*4+1<<16 {
		t.Errorf("Arrow file of %d bytes for a 300×300 int32 matrix", d.Bytes)
	}
	if d.ArrowSeconds <= 0 || d.PlainSeconds <= 0 || d.ComputeSeconds <= 0 {
		t.Errorf("disk times %+v: want all positive", d)
	}
	// The ratio compares the best of each.
	if len(d.ArrowRuns) != 2 || len(d.PlainRuns) != 2 {
		t.Errorf("disk rounds: %d Arrow and %d plain runs, want 2 each", len(d.ArrowRuns), len(d.PlainRuns))
	} else if d.ArrowSeconds != min(d.ArrowRuns[0], d.ArrowRuns[1]) || d.PlainSeconds != min(d.PlainRuns[0], d.PlainRuns[1]) {
		t.Errorf("disk seconds %v / %v are not the best of the runs %v / %v", d.ArrowSeconds, d.PlainSeconds, d.ArrowRuns, d.PlainRuns)
	}
	if want := d.ArrowRate / d.PlainRate; math.Abs(d.Ratio-want) > 1e-12 || math.Abs(d.ArrowRate-float64(d.Bytes)/d.ArrowSeconds) > 1e-6*d.ArrowRate {
		t.Errorf("disk rates %+v inconsistent", d)
	}
	left, err := os.ReadDir(disk)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the disk measurement left %d files behind", len(left))
	}
	md := Markdown(rep)
	if !strings.Contains(md, "Best of 2 alternating rounds; Arrow file "+joinSeconds(d.ArrowRuns)+" s") {
		t.Errorf("markdown lacks the disk rounds:\n%s", md)
	}
	if !strings.Contains(md, "of the disk's sequential speed") {
		t.Errorf("markdown lacks the disk line:\n%s", md)
	}
}

// TestSuiteGraphMatchesSavedFile checks that a generated suite graph is the
// graph its saved Parquet file reads back as.
func TestSuiteGraphMatchesSavedFile(t *testing.T) {
	edges, err := gen.RMAT(8, 4, 3) // small, with ids that never occur
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := suiteTable("r8", edges)
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.Vertices.Ints) >= int(edges.NumVertices) {
		t.Errorf("every one of %d ids occurs; the test wants some that do not", edges.NumVertices)
	}
	saved := filepath.Join(t.TempDir(), "r8.parquet")
	if err := saveEdgeList(saved, edges); err != nil {
		t.Fatal(err)
	}
	back, err := arrowio.ReadEdges(saved, arrowio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Vertices.Ints, tbl.Vertices.Ints) {
		t.Fatalf("%d vertices read back, suite table has %d (or other ids)", len(back.Vertices.Ints), len(tbl.Vertices.Ints))
	}
	a, err := graph.Build(&tbl.Edges, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := graph.Build(&back.Edges, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Offsets, b.Offsets) || !slices.Equal(a.Targets, b.Targets) || fmt.Sprint(a.Weights) != fmt.Sprint(b.Weights) {
		t.Errorf("CSR differs from the suite table's")
	}
}

func TestParamsRefused(t *testing.T) {
	path := tinyGraph(t, t.TempDir(), "tiny", 10, 20, 8)
	for name, change := range map[string]func(p *Params){
		"no graph":          func(p *Params) { p.Graphs = nil },
		"unknown graph":     func(p *Params) { p.Graphs = []string{"no-such-graph"} },
		"pairs layout":      func(p *Params) { p.Layout = arrowio.LayoutPairs },
		"unknown engine":    func(p *Params) { p.Engines = []string{"tpu"} },
		"negative sample":   func(p *Params) { p.Sample = -1 },
		"disk graph absent": func(p *Params) { p.DiskGraph = "rmat16" },
		"graph twice":       func(p *Params) { p.Graphs = []string{path, path} },
	} {
		p := cpuParams([]string{path}, graph.Auto)
		change(&p)
		var pe *ParamsError
		if _, err := Run(context.Background(), p); !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *ParamsError", name, err)
		}
	}
	if _, err := ParseAlgorithms("auto,quantum"); err == nil {
		t.Errorf("ParseAlgorithms accepted quantum")
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("src,dst\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	if _, err := Run(context.Background(), cpuParams([]string{bad}, graph.Auto)); !errors.As(err, &ie) {
		t.Errorf("a malformed edge file: error %v, want an *InputError", err)
	}
}

func TestSampleSources(t *testing.T) {
	if s := sampleSources(10, 0, 1); s != nil {
		t.Errorf("sampleSources(10, 0) = %v, want nil (every source)", s)
	}
	if s := sampleSources(10, 10, 1); s != nil {
		t.Errorf("sampleSources(10, 10) = %v, want nil (every source)", s)
	}
	a, b := sampleSources(1000, 50, 7), sampleSources(1000, 50, 7)
	if !slices.Equal(a, b) || len(a) != 50 {
		t.Fatalf("sampleSources is not deterministic or has %d sources", len(a))
	}
	sorted := slices.Clone(a)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != 50 || sorted[0] < 0 || sorted[49] >= 1000 {
		t.Errorf("sample %v: want 50 distinct vertices in [0, 1000)", a)
	}
	if c := pickSources(5, 9, 1); len(c) != 5 {
		t.Errorf("pickSources(5, 9) has %d sources, want all 5", len(c))
	}
}

func TestNvidiaDriverVersion(t *testing.T) {
	for line, want := range map[string]string{
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 20:15:47 UTC 2025":                         "580.159.04",
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16-I3-B03-4-3)": "580.159.04",
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64":                                                          "",
		"something else entirely": "",
	} {
		if got := nvidiaDriverVersion(line); got != want {
			t.Errorf("nvidiaDriverVersion(%q) = %q, want %q", line, got, want)
		}
	}
}
