package main

import (
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHiveEscape(t *testing.T) {
	// Hive's FileUtils.escapePathName of these values.
	for in, want := range map[string]string{
		"plain": "plain", "a/b": "a%2Fb", "x=y": "x%3Dy", "50%": "50%25", "q?": "q%3F", "sp ace": "sp ace",
		"ü": "ü", "t\tab": "t%09ab", `c:\d`: "c%3A%5Cd", "#[*]^{'\"": "%23%5B%2A%5D%5E%7B%27%22", "-7": "-7",
		"": hiveDefaultPartition,
	} {
		if got := hiveEscape(in); got != want {
			t.Errorf("hiveEscape(%q) = %q, want %q", in, got, want)
		}
	}
	// pyarrow (segment_encoding "uri"), DuckDB and Spark decode a value
	// as a URL path segment: each escaped id decodes to itself, and no
	// escaped id holds a slash or is a name readers skip.
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 3))
	for range 2000 {
		b := make([]byte, 1+rng.IntN(12))
		for i := range b {
			b[i] = byte(1 + rng.IntN(255))
		}
		s := string(b)
		esc := hiveEscape(s)
		if got, err := url.PathUnescape(esc); err != nil || got != s || strings.Contains(esc, "/") {
			t.Fatalf("seed %d: hiveEscape(%q) = %q decodes to %q (%v)", seed, s, esc, got, err)
		}
	}
}

// partitionEdges is a graph whose ids need escaping in a path.
func partitionEdges(t *testing.T, dir string) string {
	return writeFile(t, dir, "ids.csv", "src,dst,weight\na/b,x=y,1\nx=y,50%,2\n50%,q?,1.5\nq?,ü,1\nü,sp ace,3\nsp ace,a/b,1\nplain,a/b,4\n")
}

func TestDatasetPartitionBySource(t *testing.T) {
	tmp := t.TempDir()
	edges := partitionEdges(t, tmp)
	for _, c := range []struct {
		layout, format string
		sources        []string
	}{
		{"pairs", "parquet", nil},
		{"pairs", "arrow", []string{"q?", "a/b", "plain"}},
		{"matrix", "parquet", []string{"x=y", "ü"}},
		{"stats", "arrow", nil},
	} {
		t.Run(c.layout+"/"+c.format, func(t *testing.T) {
			args := []string{"run", edges, "--engine", "cpu", "-q", "--layout", c.layout}
			if c.sources != nil {
				args = append(args, "--sources-file", writeFile(t, t.TempDir(), "sources.txt", strings.Join(c.sources, "\n")+"\n"))
			}
			one := filepath.Join(t.TempDir(), "one."+c.format)
			if code, stderr := runInProcess(t, append(args, "-o", one)...); code != 0 {
				t.Fatalf("one file: exit %d: %s", code, stderr)
			}
			schema, want := tableRows(t, one)
			dir := filepath.Join(t.TempDir(), "ds") + "/"
			dsArgs := append(args, "--format", c.format, "--partition-by", "source", "-o", dir)
			if code, stderr := runInProcess(t, dsArgs...); code != 0 {
				t.Fatalf("dataset: exit %d: %s", code, stderr)
			}
			if got := datasetRows(t, dir, schema); !slices.Equal(got, want) {
				t.Fatalf("dataset rows\n%v\nwant the one file's\n%v", got, want)
			}
			m := readManifest(t, dir)
			ids := c.sources
			if ids == nil {
				ids = []string{"50%", "a/b", "plain", "q?", "sp ace", "x=y", "ü"} // vertex order: byte-wise
			}
			if m.Query.PartitionBy != "source" || m.Query.BlockSize != 1 || len(m.Files) != len(ids) {
				t.Fatalf("manifest %+v", m.Query)
			}
			for i, f := range m.Files {
				dirName, _, _ := strings.Cut(f.Path, "/")
				value, err := url.PathUnescape(strings.TrimPrefix(dirName, "source="))
				if err != nil || value != ids[i] || !strings.HasPrefix(dirName, "source=") {
					t.Fatalf("file %d at %s: the partition decodes to %q (%v), want %q", i, f.Path, value, err, ids[i])
				}
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestDatasetPartitionBySourceResumed kills a run partitioned by source
// after a partition is renamed, before the manifest lists it: --resume
// writes the rest, and the rows are the one file's.
func TestDatasetPartitionBySourceResumed(t *testing.T) {
	tmp := t.TempDir()
	edges := partitionEdges(t, tmp)
	one := filepath.Join(tmp, "one.parquet")
	if r := pathctl(t, nil, "run", edges, "--engine", "cpu", "-q", "-o", one); r.code != 0 {
		t.Fatal(r.stderr)
	}
	schema, want := tableRows(t, one)
	for _, point := range []string{"kill:renamed:2", "kill:part:4"} {
		t.Run(point, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds") + "/"
			args := []string{"run", edges, "--engine", "cpu", "-q", "--partition-by", "source", "-o", dir}
			pathctlKilled(t, append(args, "--dataset-fault", point)...)
			checkSubset(t, readLikeDataset(t, dir, schema), want)
			// Resuming with the other partitioning is another query.
			if r := pathctl(t, nil, "run", edges, "--engine", "cpu", "-q", "--resume", "-o", dir); r.code != 2 ||
				!strings.Contains(r.stderr, `query.partition_by is "source" there, "source_block" here`) {
				t.Fatalf("resume by source block: exit %d: %s", r.code, r.stderr)
			}
			if r := pathctl(t, nil, append(args, "--resume")...); r.code != 0 {
				t.Fatalf("--resume: exit %d: %s", r.code, r.stderr)
			}
			if got := datasetRows(t, dir, schema); !slices.Equal(got, want) {
				t.Fatalf("resumed rows\n%v\nwant\n%v", got, want)
			}
		})
	}
}

func TestDatasetPartitionBySourceRefusals(t *testing.T) {
	tmp := t.TempDir()
	edges := partitionEdges(t, tmp)
	grid := filepath.Join(tmp, "grid.parquet")
	if code, stderr := runInProcess(t, "gen", "grid", "--rows", "32", "--cols", "32", "-o", grid); code != 0 {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{edges, "--partition-by", "target"}, `--partition-by "target": want source_block or source`},
		{[]string{edges, "--partition-by", "source", "--dataset-block", "2"}, "--dataset-block"},
		{[]string{edges, "--partition-by", "source", "--nearest", "--sources", "plain"}, "the nearest layout is one answer"},
		{[]string{grid, "--partition-by", "source"}, "1024 sources would be 1024 partitions, at most 1000"},
	} {
		dir := filepath.Join(t.TempDir(), "ds") + "/"
		code, stderr := runInProcess(t, append(append([]string{"run"}, c.args...), "--engine", "cpu", "-q", "-o", dir)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s", c.args, code, stderr, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: left %d entries in the dataset directory", c.args, len(entries))
		}
	}
}

// TestDatasetOfSSSP: sssp, which has no --partition-by, writes its one
// source as a dataset of one source block.
func TestDatasetOfSSSP(t *testing.T) {
	tmp := t.TempDir()
	edges := partitionEdges(t, tmp)
	one := filepath.Join(tmp, "one.parquet")
	if code, stderr := runInProcess(t, "sssp", edges, "-s", "plain", "-q", "-o", one); code != 0 {
		t.Fatal(stderr)
	}
	schema, want := tableRows(t, one)
	dir := filepath.Join(tmp, "ds") + "/"
	if code, stderr := runInProcess(t, "sssp", edges, "-s", "plain", "-q", "-o", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := datasetRows(t, dir, schema); !slices.Equal(got, want) || readManifest(t, dir).Query.PartitionBy != "source_block" {
		t.Fatalf("rows %v, want %v; manifest %+v", got, want, readManifest(t, dir).Query)
	}
}

// TestDatasetOneAnswerLayouts: nearest and betweenness, one answer over
// every source, are a dataset of one block with the one file's rows.
func TestDatasetOneAnswerLayouts(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	for _, layout := range [][]string{{"--nearest", "--sources", "1,5"}, {"--layout", "betweenness"}} {
		args := append([]string{"run", edges, "--engine", "cpu", "-q"}, layout...)
		one := filepath.Join(t.TempDir(), "one.parquet")
		if code, stderr := runInProcess(t, append(args, "-o", one)...); code != 0 {
			t.Fatalf("%v: one file: exit %d: %s", layout, code, stderr)
		}
		schema, want := tableRows(t, one)
		dir := filepath.Join(t.TempDir(), "ds") + "/"
		if code, stderr := runInProcess(t, append(args, "--dataset-block", "1", "-o", dir)...); code != 0 {
			t.Fatalf("%v: dataset: exit %d: %s", layout, code, stderr)
		}
		if got := datasetRows(t, dir, schema); !slices.Equal(got, want) || len(want) == 0 {
			t.Fatalf("%v: dataset rows\n%v\nwant\n%v", layout, got, want)
		}
		if m := readManifest(t, dir); m.Blocks != 1 || len(m.Files) != 1 {
			t.Fatalf("%v: %d blocks, %d files; want one", layout, m.Blocks, len(m.Files))
		}
	}
}
