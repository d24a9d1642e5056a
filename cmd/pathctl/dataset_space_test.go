package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDatasetDryRun: --dry-run with -o DIR/ says how many files the
// dataset is and their size, and writes nothing; a format a dataset
// cannot take is refused as the run refuses it.
func TestDatasetDryRun(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	dir := filepath.Join(tmp, "ds") + "/"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset-block", "3"}, "dataset:    3 files (one per block of up to 3 sources: source_block=00000/part-0.parquet to source_block=00002/part-0.parquet), _pathctl.json; about "},
		{[]string{"--partition-by", "source", "--layout", "matrix", "--format", "arrow"}, "dataset:    7 files (one per source: source=ID/part-0.arrow), _vertices.arrow, _pathctl.json; about "},
		{[]string{"--layout", "stats"}, "dataset:    1 file (one per block of up to 4096 sources: source_block=00000/part-0.parquet), _pathctl.json"},
	} {
		r := pathctl(t, nil, append([]string{"run", edges, "--engine", "cpu", "--dry-run", "-o", dir}, c.args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, c.want) || !strings.Contains(r.stdout, " in all") {
			t.Errorf("%v: exit %d, stdout\n%s\nwant %q", c.args, r.code, r.stdout, c.want)
		}
	}
	oneErrorLine(t, pathctl(t, nil, "run", edges, "--dry-run", "--format", "csv", "-o", dir), 2, "--format csv: a dataset")
	oneErrorLine(t, pathctl(t, nil, "run", edges, "--dry-run", "--partition-by", "row", "-o", dir), 2, "--partition-by")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a dry run made the dataset's directory (%v)", err)
	}
}

// TestDatasetRefusedAboveFreeSpace: a dataset larger than the free space
// of its directory's file system exits 3 before anything is written,
// whether the directory exists or not.
func TestDatasetRefusedAboveFreeSpace(t *testing.T) {
	tmp := t.TempDir()
	edges := bigMatrixGraph(t, tmp)
	dir := filepath.Join(tmp, "ds")
	oneErrorLine(t, pathctl(t, nil, "run", edges, "--layout", "matrix", "--engine", "cpu", "-o", dir+"/"), 3, "needs about 66.0 TiB (estimated)", "--force")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the refused run made the dataset's directory (%v)", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	oneErrorLine(t, pathctl(t, nil, "run", edges, "--layout", "matrix", "--engine", "cpu", "-o", dir), 3, "needs about 66.0 TiB (estimated)", dir+" has")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the refused run wrote %v", entries)
	}
}

// TestDatasetBytesLeft: a resume needs room for the blocks not yet
// complete only, each its share of the sources.
func TestDatasetBytesLeft(t *testing.T) {
	m := &datasetManifestFile{Blocks: 4}
	m.Query.BlockSize = 3 // 10 sources: blocks of 3, 3, 3, 1
	for _, c := range []struct {
		done []int
		want int64
	}{
		{nil, 1000}, {[]int{0}, 700}, {[]int{0, 1, 2}, 100}, {[]int{3}, 900}, {[]int{0, 1, 2, 3}, 0},
	} {
		done := map[int]datasetFile{}
		for _, b := range c.done {
			done[b] = datasetFile{Block: b}
		}
		if got := datasetBytesLeft(1000, m, done, 10); got != c.want {
			t.Errorf("blocks %v done: %d bytes left, want %d", c.done, got, c.want)
		}
	}
	one := &datasetManifestFile{Blocks: 1}
	one.Query.BlockSize = 10
	if got := datasetBytesLeft(1000, one, nil, 10); got != 1000 {
		t.Errorf("one block to write: %d bytes, want 1000", got)
	}
}

// TestDatasetProgress: the progress of a run that resumes counts the
// sources it computes, block after block, and ends at their total.
func TestDatasetProgress(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(1000, 0)
	bar := &progress{lines: newProgressLines(&buf, time.Second, func() time.Time { return clock })}
	// 10 sources in blocks of 3, 3, 3, 1; the first block is complete.
	p := newDatasetProgress(bar, map[int]datasetFile{0: {Block: 0, Count: 3}}, 10)
	for _, count := range []int{3, 3, 1} {
		f := p.block(count)
		for d := 1; d <= count; d++ {
			clock = clock.Add(time.Second)
			f(int64(d), int64(count))
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 7 || !strings.Contains(lines[0], ": 1 of 7 sources") || !strings.Contains(lines[3], ": 4 of 7 sources") ||
		!strings.Contains(lines[6], "100.0%: 7 of 7 sources") {
		t.Fatalf("progress lines:\n%s", buf.String())
	}
}

func TestSpaceDirOfADataset(t *testing.T) {
	dir := t.TempDir()
	for out, want := range map[string]string{
		dir:                             dir,
		dir + "/":                       dir,
		filepath.Join(dir, "new") + "/": dir,
		filepath.Join(dir, "a", "b/"):   dir,
		filepath.Join(dir, "x.parquet"): dir,
	} {
		if got := spaceDir(out); got != want {
			t.Errorf("spaceDir(%q) = %q, want %q", out, got, want)
		}
	}
}
