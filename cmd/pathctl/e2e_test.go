package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// binPath is the pathctl binary the end-to-end tests run, built once.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pathctl-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "pathctl")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building pathctl: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// pathctl runs the binary as a user would.
func pathctl(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running pathctl %v: %v", args, err)
	}
	return result{code, out.String(), errb.String()}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readCSVPairs reads a pairs CSV into map["s>t"] = distance text.
func readCSVPairs(t *testing.T, path string) (header []string, rows map[string][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rows = map[string][]string{}
	for _, r := range recs[1:] {
		rows[r[0]+">"+r[1]] = r[2:]
	}
	return recs[0], rows
}

// dijkstraOracle is a plain serial Dijkstra over a map-based graph, written
// here so the end-to-end tests share no code with the engines.
func dijkstraOracle(n int, arcs map[[2]int]float64, src int) []float64 {
	dist := make([]float64, n)
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	adj := make([][][2]float64, n)
	for a, w := range arcs {
		adj[a[0]] = append(adj[a[0]], [2]float64{float64(a[1]), w})
	}
	done := make([]bool, n)
	dist[src] = 0
	for {
		u := -1
		for v := 0; v < n; v++ {
			if !done[v] && !math.IsInf(dist[v], 1) && (u < 0 || dist[v] < dist[u]) {
				u = v
			}
		}
		if u < 0 {
			return dist
		}
		done[u] = true
		for _, e := range adj[u] {
			if d := dist[u] + e[1]; d < dist[int(e[0])] {
				dist[int(e[0])] = d
			}
		}
	}
}

func TestRunMatchesOracleEveryAlgorithm(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	n := 30 + rng.IntN(30)
	arcs := map[[2]int]float64{}
	present := map[int]bool{} // vertices named by some row
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	for i := 0; i < n*3; i++ {
		u, v, w := rng.IntN(n), rng.IntN(n), rng.IntN(20)
		fmt.Fprintf(&b, "v%d,v%d,%d\n", u, v, w)
		present[u], present[v] = true, true
		if u == v {
			continue
		}
		if old, ok := arcs[[2]int{u, v}]; !ok || float64(w) < old {
			arcs[[2]int{u, v}] = float64(w)
		}
	}
	in := writeFile(t, dir, "g.csv", b.String())
	for _, algo := range []string{"auto", "dijkstra", "delta", "edge", "bellman-ford"} {
		out := filepath.Join(dir, algo+".csv")
		r := pathctl(t, nil, "run", in, "--algo", algo, "--engine", "cpu", "-o", out, "--with-predecessors", "--quiet")
		if r.code != 0 {
			t.Fatalf("seed %d: %s: exit %d: %s", seed, algo, r.code, r.stderr)
		}
		header, rows := readCSVPairs(t, out)
		if strings.Join(header, ",") != "source,target,distance,predecessor" {
			t.Fatalf("%s: header %v", algo, header)
		}
		pairs := 0
		for s := range present {
			want := dijkstraOracle(n, arcs, s)
			for v := range present {
				key := fmt.Sprintf("v%d>v%d", s, v)
				got, ok := rows[key]
				if math.IsInf(want[v], 1) {
					if ok {
						t.Fatalf("seed %d: %s: %s reachable (%v), oracle says not", seed, algo, key, got)
					}
					continue
				}
				pairs++
				if !ok {
					t.Fatalf("seed %d: %s: %s missing, oracle %v", seed, algo, key, want[v])
				}
				if d, err := strconv.ParseFloat(got[0], 64); err != nil || d != want[v] {
					t.Fatalf("seed %d: %s: %s = %v, oracle %v", seed, algo, key, got[0], want[v])
				}
				// The predecessor closes a shortest path: d(s,p) + w(p,v) = d(s,v).
				if s != v {
					p, err := strconv.Atoi(strings.TrimPrefix(got[1], "v"))
					if err != nil {
						t.Fatalf("seed %d: %s: %s predecessor %q", seed, algo, key, got[1])
					}
					w, ok := arcs[[2]int{p, v}]
					if !ok || want[p]+w != want[v] {
						t.Fatalf("seed %d: %s: %s predecessor %d does not close a shortest path", seed, algo, key, p)
					}
				} else if got[1] != "" {
					t.Fatalf("seed %d: %s: the source has predecessor %q", seed, algo, got[1])
				}
			}
		}
		if len(rows) != pairs {
			t.Fatalf("seed %d: %s: %d rows, want %d reachable pairs", seed, algo, len(rows), pairs)
		}
	}
}

func TestBadInputNamesFileColumnRow(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body string
		args       []string
		code       int
		want       []string
	}{
		{"missing.csv", "a,b\n1,2\n", nil, exitInput, []string{"missing.csv", "src"}},
		{"nanweight.csv", "src,dst,weight\n1,2,3\n2,3,nan\n", nil, exitInput, []string{"nanweight.csv", "weight", "nan"}},
		{"badweight.csv", "src,dst,weight\n1,2,3\n2,3,heavy\n", nil, exitInput, []string{"badweight.csv", "weight", "heavy"}},
		{"nullid.csv", "src,dst\n1,2\n,3\n", nil, exitInput, []string{"nullid.csv", "src"}},
		{"negative.csv", "src,dst,weight\n1,2,3\n2,3,-1\n", []string{"--algo", "dijkstra"}, exitNegative, []string{"bellman-ford", "negative"}},
		{"cycle.csv", "src,dst,weight\n1,2,1\n2,3,-2\n3,1,-1\n", []string{"--algo", "bellman-ford"}, exitNegative, []string{"negative cycle"}},
		{"truncated.parquet", "PAR1garbage", nil, exitInput, []string{"truncated.parquet"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := writeFile(t, dir, c.name, c.body)
			out := filepath.Join(dir, c.name+".out.arrow")
			r := pathctl(t, nil, append([]string{"run", in, "-o", out}, c.args...)...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, c.code, r.stderr)
			}
			// Notices (such as the CPU fallback) may come first; the error is
			// the last line, and a single one.
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "pathctl: ") {
				t.Fatalf("want an error line starting 'pathctl: ', got %q", r.stderr)
			}
			for _, l := range lines[:len(lines)-1] {
				if !strings.Contains(l, "using the CPU engine") {
					t.Fatalf("unexpected line before the error: %q", l)
				}
			}
			if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
				t.Fatalf("panic trace: %s", r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(last, w) {
					t.Errorf("message %q does not name %q", r.stderr, w)
				}
			}
			assertNoOutput(t, dir, c.name+".out")
		})
	}
}

// assertNoOutput fails when a file (or temporary file) whose name contains
// stem is left in dir.
func assertNoOutput(t *testing.T, dir, stem string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), stem) {
			t.Fatalf("output left behind: %s", e.Name())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n")
	for _, args := range [][]string{
		{"run", in, "--algo", "nope", "-o", filepath.Join(dir, "x.arrow")},
		{"run", in, "--layout", "cube", "-o", filepath.Join(dir, "x.arrow")},
		{"run", in, "--sources", "99", "-o", filepath.Join(dir, "x.arrow")},
		{"run", in, "--algo", "bfs-level", "--with-predecessors", "-o", filepath.Join(dir, "x.arrow")},
		{"run", "-o", filepath.Join(dir, "x.arrow")},
		{"run", in, "--no-such-flag"},
		{"sssp", in, "-o", filepath.Join(dir, "x.arrow")},
	} {
		r := pathctl(t, nil, args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %q", args, r.code, exitUsage, r.stderr)
		}
		if !strings.HasPrefix(r.stderr, "pathctl: ") && !strings.Contains(r.stderr, "Incorrect Usage") {
			t.Errorf("%v: stderr %q", args, r.stderr)
		}
		assertNoOutput(t, dir, "x.arrow")
	}
	r := pathctl(t, nil, "run", in, "--engine", "gpu", "-o", filepath.Join(dir, "x.arrow"))
	if runtime.GOOS == "linux" && r.code != exitUnavailable && r.code != 0 {
		t.Errorf("--engine gpu: exit %d: %s", r.code, r.stderr)
	}
	if r.code == exitUnavailable && !strings.Contains(r.stderr, "gpu") {
		t.Errorf("--engine gpu failure does not say why: %q", r.stderr)
	}
}

func TestStdoutStreamAndStdin(t *testing.T) {
	body := "src,dst,weight\na,b,2\nb,c,3\na,c,9\n"
	r := pathctl(t, []byte(body), "run", "-", "--input-format", "csv", "--sources", "a", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rdr, err := ipc.NewReader(strings.NewReader(r.stdout), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	got := map[string]int64{}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		src := rec.Column(0).(*array.String)
		tgt := rec.Column(1).(*array.String)
		d := rec.Column(2)
		for i := 0; i < int(rec.NumRows()); i++ {
			var v int64
			switch c := d.(type) {
			case *array.Int32:
				v = int64(c.Value(i))
			case *array.Int64:
				v = c.Value(i)
			default:
				t.Fatalf("distance type %s", d.DataType())
			}
			got[src.Value(i)+">"+tgt.Value(i)] = v
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"a>a": 0, "a>b": 2, "a>c": 5}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestEveryLayoutAndFormat(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,1.5\n2,3,2.25\n3,1,1\n4,1,7\n")
	for _, layout := range []string{"pairs", "matrix", "stats"} {
		for _, ext := range []string{"arrow", "arrows", "parquet", "csv"} {
			out := filepath.Join(dir, layout+"."+ext)
			r := pathctl(t, nil, "run", in, "--layout", layout, "-o", out, "--quiet")
			if r.code != 0 {
				t.Fatalf("%s %s: exit %d: %s", layout, ext, r.code, r.stderr)
			}
			if st, err := os.Stat(out); err != nil || st.Size() == 0 {
				t.Fatalf("%s %s: no output (%v)", layout, ext, err)
			}
			if layout == "matrix" {
				if _, err := os.Stat(filepath.Join(dir, "matrix.vertices."+ext)); err != nil {
					t.Fatalf("matrix %s: vertices file missing: %v", ext, err)
				}
			}
		}
	}
	// The IPC file of the matrix layout holds the float distances in vertex order.
	f, err := os.Open(filepath.Join(dir, "matrix.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rdr, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if v, ok := rdr.Schema().Metadata().GetValue("pathctl.vertices"); !ok || v != "matrix.vertices.arrow" {
		t.Fatalf("pathctl.vertices metadata = %q, %v", v, ok)
	}
	rec, err := rdr.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	list := rec.Column(1).(*array.FixedSizeList)
	vals := list.ListValues().(*array.Float64)
	// source 1 (row 0): to 1,2,3,4 = 0, 1.5, 3.75, +Inf
	want := []float64{0, 1.5, 3.75, math.Inf(1)}
	for i, w := range want {
		if vals.Value(i) != w {
			t.Fatalf("matrix row 0 = %v, want %v", vals.Float64Values()[:4], want)
		}
	}
	if rec.Schema().Field(1).Type.(*arrow.FixedSizeListType).Len() != 4 {
		t.Fatalf("list size %v", rec.Schema().Field(1).Type)
	}
}

func TestInterruptLeavesNoOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "big.parquet")
	if r := pathctl(t, nil, "gen", "grid", "--rows", "150", "--cols", "150", "-o", in); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	out := filepath.Join(dir, "apsp.arrow")
	cmd := exec.Command(binPath, "run", in, "--algo", "edge", "--engine", "cpu", "-o", out, "--quiet")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Skipf("run finished before the interrupt (%v); nothing to check", err)
	}
	if ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", ee.ExitCode(), exitInterrupted, errb.String())
	}
	assertNoOutput(t, dir, "apsp")
}

func TestGenIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	var sums []string
	for i, procs := range []string{"1", "2"} {
		out := filepath.Join(dir, fmt.Sprintf("r%d.csv", i))
		cmd := exec.CommandContext(context.Background(), binPath, "gen", "rmat", "--scale", "10", "--seed", "7", "-o", out)
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+procs)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen: %v %s", err, b)
		}
		b, _ := os.ReadFile(out)
		lines := strings.Split(string(b), "\n")
		if len(lines) < 10000 {
			t.Fatalf("scale 10 × 16 gave %d lines", len(lines))
		}
		sort.Strings(lines[1:])
		sums = append(sums, strings.Join(lines, "\n"))
	}
	if sums[0] != sums[1] {
		t.Fatal("the same seed gave different graphs under GOMAXPROCS 1 and 2")
	}
}

func TestInfo(t *testing.T) {
	r := pathctl(t, nil, "info", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"engines"`) || !strings.Contains(r.stdout, `"cpu"`) {
		t.Fatalf("info --json: %d %s %s", r.code, r.stdout, r.stderr)
	}
}
