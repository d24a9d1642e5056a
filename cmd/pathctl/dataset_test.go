package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// runInProcess runs pathctl's Main with args and returns its exit status
// and stderr.
func runInProcess(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"pathctl"}, args...), strings.NewReader(""), &out, &errb)
	return code, errb.String()
}

// datasetEdges is a small weighted graph with an unreachable part.
func datasetEdges(t *testing.T, dir string) string {
	return writeFile(t, dir, "edges.csv", "src,dst,weight\n1,2,1.5\n2,3,2.25\n3,1,1\n1,4,7\n4,5,1\n5,6,0.5\n7,6,2\n")
}

// tableRows reads every row of a Parquet or Arrow IPC file as text, one
// string per row, with the file's schema (metadata left out).
func tableRows(t *testing.T, path string) (string, []string) {
	t.Helper()
	var recs []arrow.RecordBatch
	var schema *arrow.Schema
	if strings.HasSuffix(path, ".arrow") {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := ipc.NewFileReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer r.Close()
		schema = r.Schema()
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.RecordBatch(i)
			if err != nil {
				t.Fatal(err)
			}
			rec.Retain()
			recs = append(recs, rec)
		}
	} else {
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer pf.Close()
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer tbl.Release()
		schema = tbl.Schema()
		tr := array.NewTableReader(tbl, 1<<20)
		defer tr.Release()
		for tr.Next() {
			rec := tr.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
	}
	var rows []string
	for _, rec := range recs {
		for i := 0; i < int(rec.NumRows()); i++ {
			var cells []string
			for j := 0; j < int(rec.NumCols()); j++ {
				cells = append(cells, rec.Column(j).ValueStr(i))
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
		rec.Release()
	}
	var names []string
	for _, f := range schema.Fields() {
		names = append(names, f.Name+":"+f.Type.String())
	}
	return strings.Join(names, ","), rows
}

// readManifest reads DIR/_pathctl.json.
func readManifest(t *testing.T, dir string) datasetManifestFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, datasetManifest))
	if err != nil {
		t.Fatal(err)
	}
	var m datasetManifestFile
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// datasetRows concatenates the rows of the dataset's parts in block
// order, checking that each part has the schema given and that no
// temporary file is left anywhere in dir.
func datasetRows(t *testing.T, dir, schema string) []string {
	t.Helper()
	m := readManifest(t, dir)
	var rows []string
	for _, f := range m.Files {
		s, r := tableRows(t, filepath.Join(dir, filepath.FromSlash(f.Path)))
		if s != schema {
			t.Fatalf("%s: schema %s, want %s", f.Path, s, schema)
		}
		if int64(len(r)) != f.Rows {
			t.Fatalf("%s: %d rows, the manifest says %d", f.Path, len(r), f.Rows)
		}
		rows = append(rows, r...)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.HasPrefix(d.Name(), ".") || d.Name() == datasetPartial {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	return rows
}

func TestDatasetEqualsOneFile(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	for _, layout := range []string{"pairs", "matrix", "stats"} {
		for _, format := range []string{"parquet", "arrow"} {
			t.Run(layout+"/"+format, func(t *testing.T) {
				one := filepath.Join(tmp, layout+"."+format)
				if code, stderr := runInProcess(t, "run", edges, "--engine", "cpu", "-q", "--layout", layout, "-o", one); code != 0 {
					t.Fatalf("one file: exit %d: %s", code, stderr)
				}
				dir := filepath.Join(tmp, layout+"-"+format) + "/"
				if code, stderr := runInProcess(t, "run", edges, "--engine", "cpu", "-q", "--layout", layout, "--format", format, "--dataset-block", "3", "-o", dir); code != 0 {
					t.Fatalf("dataset: exit %d: %s", code, stderr)
				}
				schema, want := tableRows(t, one)
				got := datasetRows(t, dir, schema)
				if !slices.Equal(got, want) {
					t.Fatalf("dataset rows\n%v\nwant the one file's\n%v", got, want)
				}
				m := readManifest(t, dir)
				if !m.Complete || m.Blocks != 3 || len(m.Files) != 3 || m.Query.BlockSize != 3 || m.Query.Layout != layout ||
					m.Query.Format != format || m.Graph.Vertices != 7 || m.Graph.Hash == "" || m.Schema.IPC == "" || m.Rows != int64(len(want)) {
					t.Fatalf("manifest %+v", m)
				}
				if m.Files[1].Path != "source_block=00001/part-0."+format {
					t.Fatalf("second part at %s", m.Files[1].Path)
				}
				if layout == "matrix" {
					if _, err := os.Stat(filepath.Join(dir, "_vertices."+format)); err != nil || m.Vertices != "_vertices."+format {
						t.Fatalf("vertex order %q: %v", m.Vertices, err)
					}
				}
			})
		}
	}
}

func TestDatasetResumeAfterCrash(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	dir := filepath.Join(tmp, "ds") + "/"
	args := []string{"run", edges, "--engine", "cpu", "-q", "--dataset-block", "2", "-o", dir}
	if code, stderr := runInProcess(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := readManifest(t, dir)
	schema, _ := tableRows(t, filepath.Join(dir, m.Files[0].Path))
	full := datasetRows(t, dir, schema)

	// A crash after block 2 was renamed but before the partial manifest
	// listed it, and block 3 never written: the partial manifest lists
	// blocks 0 and 1, a temporary file lies in block 3's partition.
	partial := m
	partial.Complete = false
	done := map[int]datasetFile{0: m.Files[0], 1: m.Files[1]}
	if err := writeDatasetManifest(dir, datasetPartial, &partial, done); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, datasetManifest))
	os.Remove(filepath.Join(dir, filepath.FromSlash(m.Files[3].Path)))
	writeFile(t, filepath.Join(dir, "source_block=00003"), ".part-0.parquet.tmp-1-x-1", "half")
	// Block 0's file is truncated: the resume computes it again.
	if err := os.Truncate(filepath.Join(dir, m.Files[0].Path), 10); err != nil {
		t.Fatal(err)
	}

	code, stderr := runInProcess(t, append(args, "--resume")...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if got := datasetRows(t, dir, schema); !slices.Equal(got, full) {
		t.Fatalf("resumed rows\n%v\nwant\n%v", got, full)
	}
	if r := readManifest(t, dir); !r.Complete || len(r.Files) != m.Blocks {
		t.Fatalf("resumed manifest %+v", r)
	}

	// Resuming a finished run does nothing and says so.
	before, _ := os.Stat(filepath.Join(dir, datasetManifest))
	code, stderr = runInProcess(t, "run", edges, "--engine", "cpu", "--dataset-block", "2", "-o", dir, "--resume")
	if code != 0 || !strings.Contains(stderr, "nothing to resume") {
		t.Fatalf("resume of a complete run: exit %d: %s", code, stderr)
	}
	if after, _ := os.Stat(filepath.Join(dir, datasetManifest)); !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("the complete manifest was rewritten")
	}
}

func TestDatasetResumeRefusesAnotherRun(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	other := writeFile(t, tmp, "other.csv", "src,dst,weight\n1,2,1.5\n2,3,2.5\n3,1,1\n1,4,7\n4,5,1\n5,6,0.5\n7,6,2\n")
	dir := filepath.Join(tmp, "ds") + "/"
	if code, stderr := runInProcess(t, "run", edges, "--engine", "cpu", "-q", "-o", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", other, "--resume"}, "graph.hash"},
		{[]string{"run", edges, "--undirected", "--resume"}, "graph."},
		{[]string{"run", edges, "--layout", "stats", "--resume"}, `query.layout is "pairs" there, "stats" here`},
		{[]string{"run", edges, "--cutoff", "3", "--resume"}, "query.cutoff"},
		{[]string{"run", edges, "--sources", "1,2", "--resume"}, "query.sources"},
		{[]string{"run", edges, "--dataset-block", "2", "--resume"}, "query.block_size"},
	} {
		code, stderr := runInProcess(t, append(append(tc.args, "--engine", "cpu"), "-o", dir)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tc.args, code, stderr, tc.want)
		}
	}
}

func TestDatasetNonEmptyDirectory(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	dir := filepath.Join(tmp, "ds")
	if code, stderr := runInProcess(t, "run", edges, "--engine", "cpu", "-q", "-o", dir+"/"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// An existing directory is a dataset even without the slash.
	code, stderr := runInProcess(t, "run", edges, "--engine", "cpu", "-q", "--layout", "stats", "-o", dir)
	if code != 2 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("non-empty directory: exit %d: %s", code, stderr)
	}
	code, stderr = runInProcess(t, "run", edges, "--engine", "cpu", "-q", "--layout", "stats", "--overwrite", "-o", dir)
	if code != 0 {
		t.Fatalf("--overwrite: exit %d: %s", code, stderr)
	}
	if m := readManifest(t, dir); m.Query.Layout != "stats" {
		t.Fatalf("--overwrite left layout %s", m.Query.Layout)
	}
	// --overwrite deletes nothing pathctl did not write.
	writeFile(t, dir, "notes.txt", "mine")
	code, stderr = runInProcess(t, "run", edges, "--engine", "cpu", "-q", "--overwrite", "-o", dir)
	if code != 2 || !strings.Contains(stderr, "notes.txt") {
		t.Fatalf("--overwrite over a foreign file: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	// --resume of a directory that is not a dataset.
	plain := t.TempDir()
	writeFile(t, plain, "x", "")
	code, stderr = runInProcess(t, "run", edges, "--engine", "cpu", "-q", "--resume", "-o", plain)
	if code != 2 || !strings.Contains(stderr, "not a pathctl dataset") {
		t.Fatalf("--resume of a plain directory: exit %d: %s", code, stderr)
	}
}
