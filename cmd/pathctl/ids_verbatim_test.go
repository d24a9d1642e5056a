package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
)

// writeStringEdges writes the edges src[i] -> dst[i] (weight 1 each, or
// weight[i]) to path, in the format its extension names.
func writeStringEdges(t *testing.T, path string, src, dst []string, weight []int64) string {
	t.Helper()
	mem := memory.NewGoAllocator()
	strs := func(vals []string) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	s, d := strs(src), strs(dst)
	defer s.Release()
	defer d.Release()
	var w arrow.Array
	if weight != nil {
		b := array.NewInt64Builder(mem)
		b.AppendValues(weight, nil)
		w = b.NewArray()
		b.Release()
		defer w.Release()
	}
	if err := arrowio.WriteEdges(path, s, d, w, arrowio.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestIDsVerbatimEveryFormatCLI: one table with the ids "a", " a", "b" and
// "c" as CSV (" a" quoted), TSV, Parquet and Arrow gives the same 4
// sources and the same distances; --sources-file and --targets-file ask
// for " a" as written.
func TestIDsVerbatimEveryFormatCLI(t *testing.T) {
	dir := t.TempDir()
	src, dst, weight := []string{"a", " a", "b", "a"}, []string{" a", "b", "c", "c"}, []int64{1, 2, 3, 10}
	inputs := []string{
		writeFile(t, dir, "g.csv", "src,dst,weight\na,\" a\",1\n\" a\",b,2\nb,c,3\na,c,10\n"),
		writeFile(t, dir, "g.tsv", "src\tdst\tweight\na\t a\t1\n a\tb\t2\nb\tc\t3\na\tc\t10\n"),
		writeStringEdges(t, filepath.Join(dir, "g.parquet"), src, dst, weight),
		writeStringEdges(t, filepath.Join(dir, "g.arrow"), src, dst, weight),
	}
	fromA := map[string][]string{"a>a": {"0"}, "a> a": {"1"}, "a>b": {"3"}, "a>c": {"6"}}
	fromSpaced := map[string][]string{" a> a": {"0"}, " a>b": {"2"}, " a>c": {"5"}}
	spacedFile := writeFile(t, dir, "spaced.txt", " a\n")
	aFile := writeFile(t, dir, "a.txt", "a\r\n")
	for _, in := range inputs {
		name := filepath.Base(in)
		out := filepath.Join(dir, "out.csv")
		r := inProcess(t, "run", in, "--engine", "cpu", "-o", out)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		_, rows := readCSVPairs(t, out)
		var sources []string
		for k := range rows {
			if s := k[:strings.Index(k, ">")]; !slices.Contains(sources, s) {
				sources = append(sources, s)
			}
		}
		slices.Sort(sources)
		if want := []string{" a", "a", "b", "c"}; !slices.Equal(sources, want) {
			t.Errorf("%s: sources %q, want %q", name, sources, want)
		}
		for k, v := range fromA {
			if !slices.Equal(rows[k], v) {
				t.Errorf("%s: all pairs %q = %q, want %q", name, k, rows[k], v)
			}
		}
		for file, want := range map[string]map[string][]string{spacedFile: fromSpaced, aFile: fromA} {
			r = inProcess(t, "run", in, "--engine", "cpu", "--sources-file", file, "-o", out)
			if r.code != 0 {
				t.Fatalf("%s --sources-file %s: exit %d: %s", name, filepath.Base(file), r.code, r.stderr)
			}
			if _, rows := readCSVPairs(t, out); !mapsEqual(rows, want) {
				t.Errorf("%s --sources-file %s: %q, want %q", name, filepath.Base(file), rows, want)
			}
		}
		r = inProcess(t, "run", in, "--engine", "cpu", "--sources", "a", "--targets-file", spacedFile, "-o", out)
		if _, rows := readCSVPairs(t, out); r.code != 0 || !mapsEqual(rows, map[string][]string{"a> a": {"1"}}) {
			t.Errorf("%s --targets-file: exit %d %s, rows %q; want a> a = 1", name, r.code, r.stderr, rows)
		}
		// The command line's list is trimmed (README): " a" there is a.
		r = inProcess(t, "run", in, "--engine", "cpu", "--sources", " a", "-o", out)
		if _, rows := readCSVPairs(t, out); r.code != 0 || !mapsEqual(rows, fromA) {
			t.Errorf("%s --sources ' a': exit %d %s, rows %q; want a's", name, r.code, r.stderr, rows)
		}
	}
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestSourcesFileVerbatimLines: an empty line is the id "" (a vertex of a
// Parquet graph), a line may be longer than 64 KiB, and a line over 1 MiB
// is refused with one line, exit 2.
func TestSourcesFileVerbatimLines(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("v", 100<<10)
	in := writeStringEdges(t, filepath.Join(dir, "g.parquet"), []string{"", "x"}, []string{"x", long}, nil)
	out := filepath.Join(dir, "out.csv")
	empty := writeFile(t, dir, "empty-line.txt", "\n")
	r := inProcess(t, "run", in, "--engine", "cpu", "--sources-file", empty, "-o", out)
	if r.code != 0 {
		t.Fatalf("--sources-file with an empty line: exit %d: %s", r.code, r.stderr)
	}
	if _, rows := readCSVPairs(t, out); !mapsEqual(rows, map[string][]string{">": {"0"}, ">x": {"1"}, ">" + long: {"2"}}) {
		t.Errorf("from \"\": %.200q", rows)
	}
	r = inProcess(t, "run", in, "--engine", "cpu", "--sources-file", empty, "--targets-file", empty, "-o", out)
	if _, rows := readCSVPairs(t, out); r.code != 0 || !mapsEqual(rows, map[string][]string{">": {"0"}}) {
		t.Errorf("from \"\" to \"\": exit %d %s, rows %q", r.code, r.stderr, rows)
	}
	longFile := writeFile(t, dir, "long.txt", long+"\n")
	r = inProcess(t, "run", in, "--engine", "cpu", "--sources-file", longFile, "-o", out)
	if r.code != 0 {
		t.Fatalf("--sources-file with a 100 KiB id: exit %d: %.300s", r.code, r.stderr)
	}
	if _, rows := readCSVPairs(t, out); !mapsEqual(rows, map[string][]string{long + ">" + long: {"0"}}) {
		t.Errorf("from the long id: %.200q", rows)
	}
	tooLong := writeFile(t, dir, "too-long.txt", "x\n"+strings.Repeat("w", 1<<20+1)+"\n")
	os.Remove(out)
	r = inProcess(t, "run", in, "--engine", "cpu", "--sources-file", tooLong, "-o", out)
	line := strings.TrimSpace(r.stderr)
	if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, "--sources-file "+tooLong) ||
		!strings.Contains(line, "line 2 is longer than 1048576 bytes") {
		t.Errorf("a 1 MiB line: exit %d, stderr %.300q; want exit 2 and one line naming the flag and the line", r.code, r.stderr)
	}
	assertNoOutput(t, dir, "out.csv")
	// A file naming no id at all is refused as before.
	none := writeFile(t, dir, "none.txt", "")
	r = inProcess(t, "run", in, "--engine", "cpu", "--sources-file", none, "-o", out)
	if r.code != exitUsage || !strings.Contains(r.stderr, "--sources-file "+none+" names no id") {
		t.Errorf("an empty file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestSameColumnFlagsRefused: --src-col equal to --dst-col (every row a
// self-loop), or --weight-col equal to either, is a usage error: exit 2,
// one line naming both flags, no output, in every input format.
func TestSameColumnFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	inputs := []string{
		writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n"),
		writeStringEdges(t, filepath.Join(dir, "g.parquet"), []string{"a", "b"}, []string{"b", "c"}, []int64{3, 4}),
		writeStringEdges(t, filepath.Join(dir, "g.arrow"), []string{"a", "b"}, []string{"b", "c"}, []int64{3, 4}),
	}
	out := filepath.Join(dir, "out.arrow")
	for _, c := range []struct {
		args  []string
		flags [2]string
	}{
		{[]string{"--src-col", "src", "--dst-col", "src"}, [2]string{"--src-col", "--dst-col"}},
		{[]string{"--src-col", "dst"}, [2]string{"--src-col", "--dst-col"}},
		{[]string{"--dst-col", "src"}, [2]string{"--src-col", "--dst-col"}},
		{[]string{"--weight-col", "src"}, [2]string{"--src-col", "--weight-col"}},
		{[]string{"--weight-col", "dst"}, [2]string{"--dst-col", "--weight-col"}},
	} {
		for _, in := range inputs {
			for _, cmd := range [][]string{{"run", in}, {"sssp", in, "-s", "1"}} {
				args := append(append(slices.Clone(cmd), "--engine", "cpu", "-o", out), c.args...)
				r := inProcess(t, args...)
				line := strings.TrimSpace(r.stderr)
				if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, c.flags[0]) || !strings.Contains(line, c.flags[1]) {
					t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %s and %s", args, r.code, r.stderr, c.flags[0], c.flags[1])
				}
				assertNoOutput(t, dir, "out.arrow")
			}
		}
	}
}
