package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/internal/benchsuite"
	"github.com/pathctl/pathctl/pipeline"
)

// The library behind the command is tested in internal/benchsuite; these
// tests check the command: flags, the markdown table, the JSON that
// bench/bench_gpu.py reads, and exit statuses.

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

func decodeReport(t *testing.T, r result) *benchsuite.Report {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep benchsuite.Report
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

// TestBenchJSON checks the keys of --json that bench/bench_gpu.py reads,
// and that --out writes the markdown table beside it.
func TestBenchJSON(t *testing.T) {
	dir := t.TempDir()
	path := tinyGraph(t, dir, "tiny", 30, 90, 2)
	out := filepath.Join(dir, "table.md")
	r := benchCLI(t, "--graphs", path, "--engine", "cpu", "--cpu-algos", "auto,delta", "--cpu-sample", "7", "--check", "3", "--json", "--out", out)
	rep := decodeReport(t, r)
	if len(rep.Rows) != 2 || rep.Rows[1].Algorithm != "delta" || rep.Rows[1].Sources != 7 || rep.Rows[1].Checked != 3 {
		t.Errorf("rows %+v: want auto and delta, 7 sources, 3 checked", rep.Rows)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"machine", "d2h_bytes_per_second", "graphs", "rows", "disk"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("--json lacks %q", key)
		}
	}
	row := doc["rows"].([]any)[0].(map[string]any)
	for _, key := range []string{"graph", "engine", "algorithm", "chosen", "layout", "n", "arcs", "sources", "seconds",
		"measured_seconds", "extrapolated", "pairs_per_second", "relaxations_per_second", "checked_sources"} {
		if _, ok := row[key]; !ok {
			t.Errorf("--json row lacks %q", key)
		}
	}
	table, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(table), "extrapolated from 7 sources") || !strings.Contains(string(table), "| pathctl cpu delta |") {
		t.Errorf("--out table:\n%s", table)
	}
}

// TestBenchNamedSuiteGraph runs a suite graph, saves it, and checks that
// the saved file holds the graph `pathctl gen` writes with the same
// parameters.
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
	if len(rep.Rows) != 1 || rep.Rows[0].Sources != 16 || rep.Rows[0].Checked != 2 {
		t.Errorf("rows %+v", rep.Rows)
	}
	generated := filepath.Join(dir, "gen.parquet")
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"pathctl", "gen", "grid", "--rows", "128", "--cols", "128", "--seed", "1", "-o", generated},
		strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("pathctl gen: exit %d: %s", code, errb.String())
	}
	saved, err := arrowio.ReadEdges(g.Path, arrowio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := arrowio.ReadEdges(generated, arrowio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(saved.Vertices.Ints, want.Vertices.Ints) || !slices.Equal(saved.Edges.Src, want.Edges.Src) ||
		!slices.Equal(saved.Edges.Dst, want.Edges.Dst) || !slices.Equal(saved.Edges.IntWeights, want.Edges.IntWeights) {
		t.Errorf("the saved grid128 differs from pathctl gen grid's")
	}
}

func TestBenchExitStatus(t *testing.T) {
	bad := writeFile(t, t.TempDir(), "bad.csv", "src,dst\n1\n")
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"--graphs", "no-such-graph"}, exitUsage},
		{[]string{"--graphs", "grid128", "--layout", "pairs"}, exitUsage},
		{[]string{"--graphs", "grid128", "--layout", "square"}, exitUsage},
		{[]string{"--graphs", "grid128", "--engine", "tpu"}, exitUsage},
		{[]string{"--graphs", "grid128", "--algos", "quantum"}, exitUsage},
		{[]string{"--graphs", "grid128", "--sample", "-1"}, exitUsage},
		{[]string{"--graphs", "grid128", "--mem", "-1"}, exitUsage},
		{[]string{"--graphs", "grid128", "--mem", "1 parsec"}, exitUsage},
		{[]string{"--graphs", "grid128", "--disk-graph", "rmat16", "--engine", "cpu"}, exitUsage},
		{[]string{"--graphs", "grid128,grid128", "--engine", "cpu", "--cpu-sample", "4"}, exitUsage},
		{[]string{"grid128"}, exitUsage},
		{[]string{"--graphs", bad, "--engine", "cpu"}, exitInput},
	}
	if st := pipeline.GPUStatus(); !st.Available {
		cases = append(cases, struct {
			args []string
			code int
		}{[]string{"--graphs", "grid128", "--engine", "gpu"}, exitUnavailable})
	}
	for _, tc := range cases {
		r := benchCLI(t, tc.args...)
		if r.code != tc.code {
			t.Errorf("bench %v: exit %d, want %d (%s)", tc.args, r.code, tc.code, r.stderr)
		}
		if r.stdout != "" {
			t.Errorf("bench %v failed but printed:\n%s", tc.args, r.stdout)
		}
	}
}

// TestBenchMemTakesUnits: bench --mem reads a size as run --mem does.
func TestBenchMemTakesUnits(t *testing.T) {
	for _, tc := range []struct {
		mem  string
		want int64
	}{{"", 0}, {"512MiB", 512 << 20}, {"8GB", 8e9}, {"1048576", 1 << 20}} {
		cmd := benchCommand(&env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard})
		var p benchsuite.Params
		var perr error
		cmd.Action = func(c *cli.Context) error {
			p, perr = benchParams(c)
			return nil
		}
		args := []string{"pathctl", "bench", "--graphs", "grid128"}
		if tc.mem != "" {
			args = append(args, "--mem", tc.mem)
		}
		app := &cli.App{Name: "pathctl", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: io.Discard}
		if err := app.Run(args); err != nil || perr != nil || p.MemBudget != tc.want {
			t.Errorf("bench --mem %q: budget %d (%v, %v), want %d", tc.mem, p.MemBudget, err, perr, tc.want)
		}
	}
}

// TestBenchDistType: --dist-type gives every graph that distance type, as
// run's does (float32 weights measured as float64 distances, checked
// against the oracle in that type), and refuses one that cannot hold the
// distances, or no type at all, as a usage error.
func TestBenchDistType(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	rng := rand.New(rand.NewPCG(3, 9))
	t.Log("seed 3")
	for i := range 40 {
		fmt.Fprintf(&b, "%d,%d,%g\n", i, (i+1)%40, float32(0.1+9.9*rng.Float64()))
		fmt.Fprintf(&b, "%d,%d,%g\n", rng.IntN(40), rng.IntN(40), float32(0.1+9.9*rng.Float64()))
	}
	path := writeFile(t, dir, "floats.csv", b.String())
	for _, dt := range []string{"", "float64"} {
		args := []string{"--graphs", path, "--engine", "cpu", "--cpu-sample", "0", "--check", "5", "--json"}
		if dt != "" {
			args = append(args, "--dist-type", dt)
		}
		rep := decodeReport(t, benchCLI(t, args...))
		want := dt
		if want == "" {
			want = "float64" // a CSV's fractions read as float64
		}
		if len(rep.Graphs) != 1 || rep.Graphs[0].DistType != want {
			t.Fatalf("--dist-type %q: graphs %+v, want %s distances", dt, rep.Graphs, want)
		}
		if len(rep.Rows) != 1 || rep.Rows[0].Checked != 5 {
			t.Fatalf("--dist-type %q: rows %+v, want one row with 5 sources checked", dt, rep.Rows)
		}
	}
	rep := decodeReport(t, benchCLI(t, "--graphs", "grid128", "--engine", "cpu", "--cpu-sample", "8", "--check", "2",
		"--dist-type", "int64", "--json"))
	if rep.Graphs[0].DistType != "int64" {
		t.Errorf("grid128 with --dist-type int64: %s distances", rep.Graphs[0].DistType)
	}
	for _, args := range [][]string{
		{"--graphs", path, "--engine", "cpu", "--dist-type", "int32"},
		{"--graphs", path, "--engine", "cpu", "--dist-type", "float16"},
	} {
		r := benchCLI(t, args...)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "--dist-type") {
			t.Errorf("bench %v: exit %d, stdout %q, stderr %q; want exit %d naming --dist-type and nothing printed",
				args, r.code, r.stdout, r.stderr, exitUsage)
		}
	}
}
