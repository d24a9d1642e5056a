package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/pipeline"
)

// inProcess runs the CLI in this process with its own streams.
func inProcess(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"pathctl"}, args...), strings.NewReader(""), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// Usage errors exit 2 with one line naming what is wrong, and the nearest
// command or flag where one was mistyped (issue points 15.9, 14.14, 13.6).
func TestMistakesAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	ids := writeFile(t, dir, "ids.txt", "1\n")
	out := filepath.Join(dir, "x.arrow")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runn", in}, `unknown command "runn" (did you mean "run"?)`},
		{[]string{"help", "runn"}, `did you mean "run"?`},
		{[]string{"gen", "rmatt", "-o", out}, `did you mean "gen rmat"?`},
		{[]string{"run", in, "--sourcs", "1", "-o", out}, "unknown flag --sourcs for run (did you mean --sources?)"},
		{[]string{"gen", "--bogus"}, "unknown flag --bogus for gen"},
		{[]string{"gen", "rmat", "--bogus", "-o", out}, "unknown flag --bogus for gen rmat"},
		{[]string{"bfs", in, "-s", "1", "--sources-file", ids, "-o", out}, "does not apply to bfs"},
		{[]string{"bfs", in, "-o", out}, "bfs needs --source"},
		{[]string{"gen", "grid", "--rows", "3"}, "gen grid needs --output"},
		{[]string{"run", in, "-o"}, "flag -o needs a value"},
		{[]string{"run", in, "--delta", "NaN", "-o", out}, "--delta NaN"},
		{[]string{"run", in, "--delta", "-1", "-o", out}, "--delta -1"},
		{[]string{"run", in, "--input-format", "foo", "-o", out}, `--input-format "foo"`},
		{[]string{"run", in, "--threads", "-1", "-o", out}, "--threads -1"},
		{[]string{"run", in, "--threads", "0", "-o", out}, "--threads 0"},
		{[]string{"run", in, "--max-block", "-3", "-o", out}, "--max-block -3"},
		{[]string{"run", in, "--mem", "-1", "-o", out}, "negative"},
		{[]string{"run", in, "--mem", "12parsecs", "-o", out}, `--mem "12parsecs"`},
		{[]string{"run", in, "--sources", "1", "--sources-file", ids, "-o", out}, "--sources and --sources-file cannot both be given"},
		{[]string{"run", in, "--weight-col", "weight", "--unweighted", "-o", out}, "cannot both be given"},
		{[]string{"bfs", in, "-s", "1", "--algo", "dijkstra", "-o", out}, "bfs runs bfs or bfs-level"},
		{[]string{"gen", "grid", "--rows", "0", "-o", out}, "--rows 0: want 1 or more"},
		{[]string{"gen", "rmat", "--scale", "0", "-o", out}, "--scale 0"},
		{[]string{"gen", "uniform", "--degree", "0", "-o", out}, "--degree 0"},
		{[]string{"gen", "grid", "--float-weights", "-o", filepath.Join(dir, "g.gr")}, "DIMACS"},
		{[]string{"gen", "grid", "-o", filepath.Join(dir, "x.foo")}, `".foo"`},
		{[]string{"gen", "grid", "--format", "foo", "-o", filepath.Join(dir, "x.csv")}, `"foo"`},
		{[]string{"run", in, "-o", filepath.Join(dir, "nodir", "x.arrow")}, "directory " + filepath.Join(dir, "nodir") + " does not exist"},
		{[]string{"gen", "grid", "-o", filepath.Join(dir, "nodir", "x.csv")}, "directory " + filepath.Join(dir, "nodir") + " does not exist"},
	} {
		r := inProcess(t, tc.args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %q", tc.args, r.code, exitUsage, r.stderr)
		}
		if !strings.HasPrefix(r.stderr, "pathctl: ") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: stderr %q, want one line with %q", tc.args, r.stderr, tc.want)
		}
		if strings.Contains(r.stderr, ".tmp-") {
			t.Errorf("%v: the message names a temporary file: %q", tc.args, r.stderr)
		}
		assertNoOutput(t, dir, "x.arrow")
	}
}

// The error urfave/cli gives for a missing required flag is a usage error
// by its type, not by its text (13.6): the check runs before urfave's.
func TestRequiredFlagIsTypedUsageError(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	app := App(e)
	_, err := prepareArgs(app, []string{"pathctl", "sssp", "edges.csv"})
	var ue usageError
	if err == nil || !errorsAs(err, &ue) || exitCode(err) != exitUsage {
		t.Fatalf("sssp without --source: %v (exit %d), want a usageError", err, exitCode(err))
	}
	if _, err := prepareArgs(app, []string{"pathctl", "sssp", "--help"}); err != nil {
		t.Errorf("sssp --help is refused: %v", err)
	}
}

func errorsAs(err error, target *usageError) bool {
	u, ok := err.(usageError)
	if ok {
		*target = u
	}
	return ok
}

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1073741824", 1 << 30}, {"1GiB", 1 << 30}, {"1gib", 1 << 30}, {"8GB", 8e9}, {"512 MiB", 512 << 20},
		{"1.5GiB", 3 << 29}, {"64kB", 64000}, {"10B", 10}, {"2TiB", 2 << 40},
	} {
		got, err := parseBytes("mem", tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "-1", "-1GiB", "1.5", "GiB", "1 parsec", "NaN", "1e30GiB", "0.1B"} {
		if _, err := parseBytes("mem", bad); err == nil || exitCode(err) != exitUsage {
			t.Errorf("parseBytes(%q) = %v, want a usage error", bad, err)
		}
	}
}

func TestMemFlagTakesUnitsAndWarnsPastPhysicalMemory(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	for _, mem := range []string{"1GiB", "8GB", "1073741824"} {
		r := inProcess(t, "run", in, "--engine", "cpu", "--mem", mem, "-o", filepath.Join(dir, "o.csv"))
		if r.code != 0 || strings.Contains(r.stderr, "note:") {
			t.Errorf("--mem %s: exit %d, stderr %q", mem, r.code, r.stderr)
		}
	}
	phys := arrowio.PhysicalMemory()
	if phys <= 0 {
		t.Skip("the machine's memory is not known on this system")
	}
	r := inProcess(t, "run", in, "--engine", "cpu", "--mem", "1000TiB", "-o", filepath.Join(dir, "o.csv"))
	if r.code != 0 || !strings.Contains(r.stderr, "pathctl: note: --mem 1000.0 TiB is more than this machine's memory ("+gen.HumanBytes(phys)+")") {
		t.Errorf("--mem 1000TiB: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Help reads once: no doubled default, no empty description, and bfs shows
// only what applies to it (15.9).
func TestHelpText(t *testing.T) {
	var walk func(prefix []string, cmds []*cli.Command)
	doubled := regexp.MustCompile(`\(default: .*\(default: `)
	saidTwice := regexp.MustCompile(`\bdefault\b.*\(default: `)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := append(append([]string{}, prefix...), c.Name)
			for _, f := range c.Flags {
				if df, ok := f.(cli.DocGenerationFlag); ok && df.GetUsage() == "" {
					t.Errorf("%s: flag --%s has no description", strings.Join(path, " "), f.Names()[0])
				}
			}
			if len(c.Subcommands) > 0 {
				walk(path, c.Subcommands)
				continue
			}
			r := inProcess(t, append(path, "--help")...)
			if r.code != 0 {
				t.Errorf("%v --help: exit %d %s", path, r.code, r.stderr)
			}
			for _, line := range strings.Split(r.stdout, "\n") {
				if doubled.MatchString(line) {
					t.Errorf("%v --help: doubled default in %q", path, line)
				}
				if strings.Contains(line, "(default: false)") {
					t.Errorf("%v --help: %q", path, line)
				}
				// A zero value printed as the default of a flag whose
				// zero means "none" or is explained in its usage, or a
				// default said twice in two ways.
				if strings.HasSuffix(line, "(default: 0)") || saidTwice.MatchString(line) {
					t.Errorf("%v --help: default said twice or as a bare zero: %q", path, line)
				}
			}
		}
	}
	walk(nil, App(&env{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}).Commands)

	r := inProcess(t, "bfs", "--help")
	for _, hidden := range []string{"--weight-col", "--unweighted", "--delta", "dijkstra", "--max-block"} {
		if strings.Contains(r.stdout, hidden) {
			t.Errorf("bfs --help shows %s", hidden)
		}
	}
	if !strings.Contains(r.stdout, "--source") || !strings.Contains(r.stdout, "bfs-level") {
		t.Errorf("bfs --help lacks its own options:\n%s", r.stdout)
	}
	// What bfs ignores is still accepted, and said.
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	r = inProcess(t, "bfs", in, "-s", "1", "--unweighted", "-o", filepath.Join(dir, "o.csv"))
	if r.code != 0 || !strings.Contains(r.stderr, "pathctl: note: bfs counts edges; --unweighted is ignored") {
		t.Errorf("bfs --unweighted: exit %d, stderr %q", r.code, r.stderr)
	}
}

func readCSVRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// A lone numeric column not called weight is the weight, said on one
// stable stderr line (15.3).
func TestLoneNumericColumnIsTheWeight(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "trips.csv", "src,dst,minutes\na,b,5\nb,c,7\na,c,20\n")
	out := filepath.Join(dir, "o.csv")
	r := inProcess(t, "run", in, "--sources", "a", "--engine", "cpu", "-o", out)
	const note = `pathctl: note: took column "minutes" as the edge weight (no column is named "weight"); --weight-col NAME chooses the weight, --unweighted counts edges` + "\n"
	if r.code != 0 || !strings.HasPrefix(r.stderr, note) {
		t.Fatalf("exit %d, stderr %q; want it to start with %q", r.code, r.stderr, note)
	}
	got := map[string]string{}
	for _, row := range readCSVRows(t, out)[1:] {
		got[row[1]] = row[2]
	}
	if got["c"] != "12" {
		t.Errorf("d(a, c) = %s, want 12 (5 + 7 minutes)", got["c"])
	}
	r = inProcess(t, "run", in, "--sources", "a", "--engine", "cpu", "--unweighted", "-o", out)
	if r.code != 0 || strings.Contains(r.stderr, "note:") {
		t.Fatalf("--unweighted: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, row := range readCSVRows(t, out)[1:] {
		if row[1] == "c" && row[2] != "1" {
			t.Errorf("--unweighted d(a, c) = %s, want 1 hop", row[2])
		}
	}
	two := writeFile(t, dir, "two.csv", "src,dst,minutes,km\na,b,5,1\n")
	r = inProcess(t, "run", two, "--engine", "cpu", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, `pathctl: note: no column is named "weight", so distances count edges; the numeric columns "minutes", "km" are unused`) {
		t.Errorf("two numeric columns: exit %d, stderr %q", r.code, r.stderr)
	}
	r = inProcess(t, "run", two, "--engine", "cpu", "--quiet", "-o", out)
	if r.stderr != "" {
		t.Errorf("--quiet printed %q", r.stderr)
	}
}

// --vertices adds vertices without edges; they are in the matrix and the
// stats, unreachable from every other vertex (15.4).
func TestVerticesFlagAddsIsolatedVertices(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,5,4\n")
	verts := writeFile(t, dir, "v.csv", "vertex\n1\n2\n5\n7\n")
	out := filepath.Join(dir, "m.arrow")
	r := inProcess(t, "run", in, "--vertices", verts, "--layout", "matrix", "--engine", "cpu", "-o", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	lt, ok := fr.Schema().Field(1).Type.(*arrow.FixedSizeListType)
	if !ok || lt.Len() != 4 {
		t.Fatalf("matrix distance type %v, want a list of 4 (vertices 1, 2, 5, 7)", fr.Schema().Field(1).Type)
	}
	var rows int64
	for i := 0; i < fr.NumRecords(); i++ {
		rec, err := fr.RecordBatchAt(i)
		if err != nil {
			t.Fatal(err)
		}
		rows += rec.NumRows()
		rec.Release()
	}
	if rows != 4 {
		t.Errorf("matrix has %d rows, want 4", rows)
	}

	stats := filepath.Join(dir, "s.csv")
	r = inProcess(t, "run", in, "--vertices", verts, "--layout", "stats", "--sources", "7,1", "--engine", "cpu", "-o", stats)
	if r.code != 0 {
		t.Fatalf("stats: exit %d: %s", r.code, r.stderr)
	}
	rows7 := readCSVRows(t, stats)
	if len(rows7) != 3 || rows7[1][0] != "7" || rows7[1][1] != "0" || rows7[2][0] != "1" || rows7[2][1] != "2" {
		t.Errorf("stats rows %v: want source 7 reaching 0 vertices and source 1 reaching 2", rows7)
	}
	bad := writeFile(t, dir, "bad.csv", "name\nx\n")
	r = inProcess(t, "run", in, "--vertices", bad, "-o", stats)
	if r.code != exitInput || !strings.Contains(r.stderr, "strings") {
		t.Errorf("string vertex table on integer edges: exit %d, stderr %q", r.code, r.stderr)
	}
}

// gen reports the vertices the file holds and writes DIMACS that reads
// back (15.4, 15.5).
func TestGenTrueCountAndDIMACS(t *testing.T) {
	dir := t.TempDir()
	pq := filepath.Join(dir, "r.parquet")
	r := inProcess(t, "gen", "rmat", "--scale", "10", "-o", pq)
	if r.code != 0 {
		t.Fatalf("gen: exit %d %s", r.code, r.stderr)
	}
	tbl, err := arrowio.ReadEdges(pq, arrowio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := tbl.Vertices.Len()
	if n >= 1024 {
		t.Fatalf("scale 10 used all %d ids; the test needs isolated ones", n)
	}
	want := "pathctl: wrote " + itoa(n) + " vertices, "
	if !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, itoa(1024-n)+" of the 1024 generated ids have no edge") {
		t.Errorf("gen said %q, want %q… and the ids without edges", r.stderr, want)
	}

	gr := filepath.Join(dir, "r.gr")
	r = inProcess(t, "gen", "rmat", "--scale", "10", "-o", gr)
	if r.code != 0 {
		t.Fatalf("gen -o .gr: exit %d %s", r.code, r.stderr)
	}
	back, err := arrowio.ReadEdges(gr, arrowio.ReadOptions{})
	if err != nil {
		t.Fatalf("reading the DIMACS gen wrote: %v", err)
	}
	if len(back.Edges.Src) != len(tbl.Edges.Src) || back.Vertices.Ints[0] != 1 {
		t.Errorf("DIMACS holds %d edges from id %d; parquet %d edges", len(back.Edges.Src), back.Vertices.Ints[0], len(tbl.Edges.Src))
	}
	if !strings.Contains(r.stderr, "wrote "+itoa(back.Vertices.Len())+" vertices") {
		t.Errorf("gen -o .gr said %q; the file has %d vertices", r.stderr, back.Vertices.Len())
	}
	r = inProcess(t, "run", gr, "--sources", "1", "--engine", "cpu", "-o", filepath.Join(dir, "o.csv"))
	if r.code != 0 {
		t.Errorf("run on gen's DIMACS: exit %d %s", r.code, r.stderr)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A machine without a GPU runs quietly; --verbose and info say why (15.10).
func TestNoGPULineUnlessVerbose(t *testing.T) {
	if pipeline.GPUStatus().Available {
		t.Skip("a GPU is usable here: auto takes it and has nothing to explain")
	}
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	for i := range 80 {
		b.WriteString(itoa(i) + "," + itoa((i+1)%80) + ",1\n")
	}
	in := writeFile(t, dir, "ring.csv", b.String())
	out := filepath.Join(dir, "o.arrow")
	r := inProcess(t, "run", in, "--layout", "stats", "-o", out)
	if r.code != 0 || strings.Contains(r.stderr, "GPU engine") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("auto on a CPU-only machine: exit %d, stderr %q; want the summary line alone", r.code, r.stderr)
	}
	r = inProcess(t, "run", in, "--layout", "stats", "--verbose", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "GPU engine unavailable (") {
		t.Errorf("--verbose does not say why the GPU is not used: %q", r.stderr)
	}
	r = inProcess(t, "info")
	if r.code != 0 || !strings.Contains(r.stdout, "engine gpu  unavailable: gpu: ") {
		t.Errorf("info does not say why: %q", r.stdout)
	}
}
