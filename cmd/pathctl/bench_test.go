package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// benchCLI runs pathctl bench in process.
func benchCLI(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"pathctl", "bench", "--quiet"}, args...), strings.NewReader(""), &out, &errb)
	return result{code, out.String(), errb.String()}
}

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
	return writeFile(t, dir, name+".csv", b.String())
}

func decodeReport(t *testing.T, r result) *BenchReport {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep BenchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, r.stdout)
	}
	return &rep
}

func TestBenchTableColumns(t *testing.T) {
	dir := t.TempDir()
	path := tinyGraph(t, dir, "tiny", 40, 120, 1)
	r := benchCLI(t, "--graphs", path, "--engine", "cpu", "--cpu-algos", "auto,dijkstra,bfs,bellman-ford", "--cpu-sample", "0", "--check", "5")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	header := "| graph | n | arcs | run | sources | seconds | pairs/s | relaxations/s | vs cpu auto | floor (s) | checked | note |"
	if !strings.Contains(r.stdout, header) {
		t.Errorf("table header missing:\n%s", r.stdout)
	}
	for _, algo := range []string{"auto", "dijkstra", "bfs", "bellman-ford"} {
		line := ""
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, "| tiny | 40 |") && strings.Contains(l, "| pathctl cpu "+algo+" |") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("no row for cpu %s:\n%s", algo, r.stdout)
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 12 {
			t.Errorf("row has %d cells, want 12: %s", len(cells), line)
			continue
		}
		if got := strings.TrimSpace(cells[4]); got != "40" {
			t.Errorf("cpu %s: sources %s, want 40", algo, got)
		}
		if got := strings.TrimSpace(cells[9]); got != "—" {
			t.Errorf("cpu %s: floor %q without a GPU, want —", algo, got)
		}
		if got := strings.TrimSpace(cells[10]); got != "5 ok" {
			t.Errorf("cpu %s: checked %q, want 5 ok", algo, got)
		}
		if !strings.Contains(cells[11], "all sources") {
			t.Errorf("cpu %s: note %q lacks 'all sources'", algo, cells[11])
		}
	}
	if !strings.Contains(r.stdout, "Machine: ") || !strings.Contains(r.stdout, "CPUs") {
		t.Errorf("machine line missing:\n%s", r.stdout)
	}
}

func TestBenchJSONAndExtrapolation(t *testing.T) {
	dir := t.TempDir()
	path := tinyGraph(t, dir, "tiny", 30, 90, 2)
	rep := decodeReport(t, benchCLI(t, "--graphs", path, "--engine", "cpu", "--cpu-algos", "auto,delta", "--cpu-sample", "7", "--check", "3", "--json"))
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
	// The markdown says so too.
	r := benchCLI(t, "--graphs", path, "--engine", "cpu", "--cpu-sample", "7")
	if r.code != 0 || !strings.Contains(r.stdout, "extrapolated from 7 sources") {
		t.Errorf("exit %d; table lacks the extrapolation note:\n%s%s", r.code, r.stdout, r.stderr)
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
	case []float32:
		x := slices.Clone(w)
		for i := range x {
			x[i]++
		}
		csr.Weights = x
	case []float64:
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

func TestBenchCatchesWrongEngine(t *testing.T) {
	dir := t.TempDir()
	path := tinyGraph(t, dir, "tiny", 30, 90, 3)
	for _, tc := range []struct {
		name   string
		wrong  func(opt pipeline.Options) bool // which runs answer for the shifted graph
		layout string
		want   string
	}{
		{"every run", func(pipeline.Options) bool { return true }, "stats", "wrong answer"},
		{"timed stats run only", func(o pipeline.Options) bool { return o.Layout == arrowio.LayoutStats }, "stats", "(timed run): wrong answer"},
		{"check run only", func(o pipeline.Options) bool { return len(o.Sources) == 4 }, "stats", "wrong answer: distance"},
		{"timed matrix run", func(o pipeline.Options) bool { return len(o.Sources) != 4 }, "matrix", "(timed run): wrong answer: distance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old func(context.Context, *pipeline.Graph, pipeline.Options, func(arrow.Record) error) (*pipeline.Summary, error)) {
				runPipeline = old
			}(runPipeline)
			runPipeline = func(ctx context.Context, g *pipeline.Graph, opt pipeline.Options, emit func(arrow.Record) error) (*pipeline.Summary, error) {
				if tc.wrong(opt) {
					g = shiftedWeights(g)
				}
				return pipeline.Run(ctx, g, opt, emit)
			}
			r := benchCLI(t, "--graphs", path, "--engine", "cpu", "--cpu-sample", "0", "--check", "4", "--layout", tc.layout)
			if r.code == 0 {
				t.Fatalf("a wrong engine passed:\n%s", r.stdout)
			}
			if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "serial oracle") {
				t.Errorf("stderr %q lacks %q and 'serial oracle'", r.stderr, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("a failed bench printed a table:\n%s", r.stdout)
			}
		})
	}
}

// TestBenchFloor stands a CPU run in for the GPU rows (the hooks) to check
// the bandwidth, the floor column and the GPU rows' labels without a GPU.
func TestBenchFloor(t *testing.T) {
	defer func(old func() (float64, *gpu.DeviceInfo, error)) { measureBandwidth = old }(measureBandwidth)
	defer func(old func(context.Context, *pipeline.Graph, pipeline.Options, func(arrow.Record) error) (*pipeline.Summary, error)) {
		runPipeline = old
	}(runPipeline)
	measureBandwidth = func() (float64, *gpu.DeviceInfo, error) {
		return 2e9, &gpu.DeviceInfo{Name: "Test GPU", DriverVersion: 13000}, nil
	}
	var engines []string
	runPipeline = func(ctx context.Context, g *pipeline.Graph, opt pipeline.Options, emit func(arrow.Record) error) (*pipeline.Summary, error) {
		engines = append(engines, opt.Engine)
		opt.Engine = "cpu"
		return pipeline.Run(ctx, g, opt, emit)
	}
	dir := t.TempDir()
	path := tinyGraph(t, dir, "tiny", 50, 100, 4)
	rep := decodeReport(t, benchCLI(t, "--graphs", path, "--algos", "auto,edge", "--cpu-sample", "0", "--json"))
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
	md := benchMarkdown(rep)
	for _, s := range []string{"2.0 GB/s", fmt.Sprintf("| %.3g |", want), "| pathctl gpu edge |", "Test GPU"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
}

func TestBenchDisk(t *testing.T) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	path := tinyGraph(t, dir, "tiny", 300, 900, 5)
	rep := decodeReport(t, benchCLI(t, "--graphs", path, "--engine", "cpu", "--cpu-sample", "16", "--disk-graph", "tiny", "--disk-dir", disk, "--json"))
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
	// Two rounds by default, and the ratio compares the best of each.
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
	md := benchMarkdown(rep)
	if !strings.Contains(md, "Best of 2 alternating rounds; Arrow file "+joinSeconds(d.ArrowRuns)+" s") {
		t.Errorf("markdown lacks the disk rounds:\n%s", md)
	}
	if !strings.Contains(md, "of the disk's sequential speed") {
		t.Errorf("markdown lacks the disk line:\n%s", md)
	}
}

// TestSuiteGraphMatchesSavedFile checks that a generated suite graph is the
// graph its saved Parquet file reads back as, and that the file is what
// `pathctl gen` writes with the same parameters.
func TestSuiteGraphMatchesSavedFile(t *testing.T) {
	dir := t.TempDir()
	edges, err := gen.RMAT(8, 4, 3) // small, with ids that never occur
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := suiteTable("r8", edges)
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "r8.parquet")
	if err := saveEdgeList(saved, edges); err != nil {
		t.Fatal(err)
	}
	generated := filepath.Join(dir, "gen.parquet")
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"pathctl", "gen", "rmat", "--scale", "8", "--edge-factor", "4", "--seed", "3", "-o", generated},
		strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("pathctl gen: exit %d: %s", code, errb.String())
	}
	for _, p := range []string{saved, generated} {
		back, err := arrowio.ReadEdges(p, arrowio.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Vertices.Ints, tbl.Vertices.Ints) {
			t.Fatalf("%s: %d vertices read back, suite table has %d (or other ids)", p, len(back.Vertices.Ints), len(tbl.Vertices.Ints))
		}
		if len(tbl.Vertices.Ints) >= int(edges.NumVertices) {
			t.Errorf("every one of %d ids occurs; the test wants some that do not", edges.NumVertices)
		}
		a, err := graph.Build(&tbl.Edges, graph.BuildOptions{Undirected: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := graph.Build(&back.Edges, graph.BuildOptions{Undirected: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Offsets, b.Offsets) || !slices.Equal(a.Targets, b.Targets) || !slicesEqualAny(a.Weights, b.Weights) {
			t.Errorf("%s: CSR differs from the suite table's", p)
		}
	}
}

func slicesEqualAny(a, b any) bool {
	switch x := a.(type) {
	case []int32:
		y, ok := b.([]int32)
		return ok && slices.Equal(x, y)
	case []int64:
		y, ok := b.([]int64)
		return ok && slices.Equal(x, y)
	}
	return false
}

func TestBenchNamedSuiteGraph(t *testing.T) {
	dir := t.TempDir()
	rep := decodeReport(t, benchCLI(t, "--graphs", "grid128", "--engine", "cpu", "--cpu-sample", "16", "--check", "2",
		"--save-graphs", dir, "--json"))
	g := rep.Graphs[0]
	// A 128×128 grid: 16384 vertices, 2·(127·128)·2 arcs undirected.
	if g.Name != "grid128" || g.Vertices != 128*128 || g.Arcs != 4*127*128 || !g.Undirected {
		t.Errorf("grid128 = %+v", g)
	}
	if g.Path != filepath.Join(dir, "grid128.parquet") {
		t.Errorf("saved path %q", g.Path)
	}
	if _, err := os.Stat(g.Path); err != nil {
		t.Errorf("saved graph: %v", err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Sources != 16 || rep.Rows[0].Checked != 2 {
		t.Errorf("rows %+v", rep.Rows)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--graphs", "no-such-graph"},
		{"--graphs", "grid128", "--layout", "pairs"},
		{"--graphs", "grid128", "--engine", "tpu"},
		{"--graphs", "grid128", "--algos", "quantum"},
		{"--graphs", "grid128", "--sample", "-1"},
		{"--graphs", "grid128", "--disk-graph", "rmat16", "--engine", "cpu"},
		{"--graphs", "grid128,grid128", "--engine", "cpu", "--cpu-sample", "4"},
	} {
		r := benchCLI(t, args...)
		if r.code != exitUsage {
			t.Errorf("bench %v: exit %d, want %d (%s)", args, r.code, exitUsage, r.stderr)
		}
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

func TestSameDistance(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		got, want float64
		float     bool
		same      bool
	}{
		{3, 3, false, true},
		{3, 4, false, false},
		{inf, inf, false, true},
		{inf, 5, true, false},
		{nan, nan, false, true}, // both eccentricities null
		{nan, 2, true, false},
		{1 + 1e-9, 1, true, true},
		{1 + 1e-9, 1, false, false},
		{1.01, 1, true, false},
	} {
		if got := sameDistance(tc.got, tc.want, tc.float); got != tc.same {
			t.Errorf("sameDistance(%v, %v, float=%v) = %v, want %v", tc.got, tc.want, tc.float, got, tc.same)
		}
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
