package main

// The plan and the space of a -o DIR/ dataset: its files, their size in
// --dry-run and against the free space, the error of a disk that fills
// up during the run, the durability of what was written before it, and
// the run's progress.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/pipeline"
)

// datasetWriteError is err, met while writing name (relative to the
// dataset out), as the run reports it. A full disk (ENOSPC, or a quota's
// EDQUOT) is the input's error, exit 3, as the free-space check's refusal
// is: the blocks complete so far stay, readable, and --resume computes the
// rest once there is room. An interruption says that the blocks complete
// are kept (datasetKept). Other errors pass unchanged.
func datasetWriteError(out, name string, err error, complete, blocks int) error {
	if pipeline.IsInterrupted(err) {
		return datasetKept{err, out, complete, blocks}
	}
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		return err
	}
	return inputError{fmt.Errorf("-o %s: the disk is full (no space left on device) while writing %s: "+
		"%d of %d blocks are complete and kept, readable as a dataset; free space and run the same command with --resume to compute the rest",
		out, name, complete, blocks)}
}

// datasetKept is an error that ended a dataset run which keeps the
// blocks complete so far (an interruption): it says so where the error
// is reported.
type datasetKept struct {
	error
	out              string
	complete, blocks int
}

func (e datasetKept) Unwrap() error { return e.error }

// interruptedOutput is what an interrupted run leaves: no output, or the
// complete blocks of a dataset, which --resume continues.
func interruptedOutput(err error) string {
	var kept datasetKept
	if errors.As(err, &kept) && kept.complete > 0 {
		return fmt.Sprintf("%s keeps %d of %d blocks, complete; the same command with --resume computes the rest", kept.out, kept.complete, kept.blocks)
	}
	return "no output written"
}

// syncDir flushes the entries of dir (a file renamed into it) to the
// disk, so that after a power loss the manifest lists no file whose name
// was lost. Errors are ignored: a file system that cannot sync a
// directory (some network ones) still renames atomically.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// datasetFormat is the format and file extension of a dataset's parts
// for --format (parquet unless arrow is asked for).
func datasetFormat(format, out string) (string, string, error) {
	switch format {
	case "", "parquet":
		return "parquet", ".parquet", nil
	case "arrow", "feather":
		return "arrow", ".arrow", nil
	}
	return "", "", usagef("--format %s: a dataset (-o %s) is written as parquet or arrow files", format, out)
}

// datasetBlockPlan is the sources per file: one answer over every source
// (nearest, betweenness) is one file; --partition-by source is one source
// a file; else the dataset's own on a resume (prior > 0: a
// --dataset-block that differs is another plan, refused), or the flag, or
// the default (datasetBlockSize).
func datasetBlockPlan(c *cli.Context, layout arrowio.Layout, partitionBy string, sources, targets, vertices int, narrowed bool, prior int) int {
	switch {
	case layout == arrowio.LayoutNearest || layout.IsBetweenness():
		return max(sources, 1)
	case partitionBy == partitionBySource:
		return 1
	case prior > 0 && !c.IsSet("dataset-block"):
		return prior
	case c.Int("dataset-block") > 0:
		return c.Int("dataset-block")
	}
	return datasetBlockSize(layout, targets, vertices, narrowed)
}

// datasetBlockCount is the files of sources in blocks of blockSize: no
// source at all still writes one (empty) file, which holds the schema.
func datasetBlockCount(sources, blockSize int) int {
	return max(1, (sources+blockSize-1)/blockSize)
}

// datasetBytesLeft is the estimated bytes of the blocks of m not in done,
// of a result of total bytes over sources: each block's share of the
// sources.
func datasetBytesLeft(total int64, m *datasetManifestFile, done map[int]datasetFile, sources int) int64 {
	if sources == 0 || m.Blocks == 1 {
		if len(done) > 0 {
			return 0
		}
		return total
	}
	left := 0
	for b := range m.Blocks {
		if _, ok := done[b]; !ok {
			left += min(m.Query.BlockSize, sources-b*m.Query.BlockSize)
		}
	}
	return int64(float64(total) * float64(left) / float64(sources))
}

// checkDatasetSpace refuses, as checkSpace does a file (exit 3 unless
// --force), a dataset at out whose blocks still to write (those not in
// done, on a resume) are estimated above the free space of the file
// system of its directory.
func checkDatasetSpace(c flagReader, q *pipeline.Prepared, out string, m *datasetManifestFile, done map[int]datasetFile, sources int) error {
	if spaceDir(out) == "" {
		return nil
	}
	return checkOutputSpace(out, datasetBytesLeft(q.Estimate().Bytes, m, done, sources), c.Bool("force"), freeSpace)
}

// datasetDryRun is the line --dry-run prints for -o DIR/: how many files
// the dataset is, where, and their estimated size; it refuses the flags
// the run would refuse.
func datasetDryRun(c *cli.Context, opt pipeline.Options, est pipeline.Estimate, out string) (string, error) {
	_, ext, err := datasetFormat(c.String("format"), out)
	if err != nil {
		return "", err
	}
	partitionBy, err := checkPartitionBy(c, opt.Layout)
	if err != nil {
		return "", err
	}
	if partitionBy == partitionBySource && est.Sources > maxSourcePartitions {
		if _, err := sourcePartitions(make([]string, est.Sources)); err != nil {
			return "", err
		}
	}
	blockSize := datasetBlockPlan(c, opt.Layout, partitionBy, est.Sources, est.Targets, est.Vertices, opt.Targets != nil, 0)
	blocks := datasetBlockCount(est.Sources, blockSize)
	width := max(5, len(strconv.Itoa(blocks-1)))
	where := fmt.Sprintf("one per block of up to %d sources: %s", blockSize, datasetPartPath(nil, 0, width, ext))
	if blocks > 1 {
		where += " to " + datasetPartPath(nil, blocks-1, width, ext)
	}
	if partitionBy == partitionBySource {
		where = "one per source: source=ID/part-0" + ext
	}
	side := datasetManifest
	if opt.Layout == arrowio.LayoutMatrix {
		side = "_vertices" + ext + ", " + side
	}
	size := fmt.Sprintf("about %s each, %s in all", gen.HumanBytes(est.Bytes/int64(blocks)), gen.HumanBytes(est.Bytes))
	if ext == ".parquet" {
		size += " (as Arrow IPC; Parquet, compressed, is smaller)"
	}
	files := fmt.Sprintf("%d files", blocks)
	if blocks == 1 {
		files = "1 file"
	}
	return fmt.Sprintf("dataset:    %s (%s), %s; %s", files, where, side, size), nil
}

// datasetProgress turns the progress of each block's run into that of
// the sources this run computes (a resume's blocks already complete
// left out, so that the time left is the time still to take).
type datasetProgress struct {
	bar         *progress
	done, total int64
}

func newDatasetProgress(bar *progress, done map[int]datasetFile, sources int) *datasetProgress {
	p := &datasetProgress{bar: bar, total: int64(sources)}
	for _, f := range done {
		p.total -= int64(f.Count)
	}
	return p
}

// block is the pipeline's Progress of the next block, of count sources;
// the block after it starts where it ends.
func (p *datasetProgress) block(count int) func(done, total int64) {
	start := p.done
	p.done += int64(count)
	return func(d, _ int64) { p.bar.update(start+min(d, int64(count)), p.total) }
}
