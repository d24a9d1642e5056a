package main

// Results larger than one file (issue 42): -o DIR/ writes a hive-style
// dataset, one file per block of sources, and --resume completes a run
// that was killed.
//
// The blocks are planned here, not by the pipeline: the sources are cut
// into blocks of a fixed size (--dataset-block, stored in the manifest and
// reused on resume, so that the plan does not depend on the memory budget
// or the device), and each block is one run of the prepared query's slice
// of its sources (Prepared.Slice), whose rows go to the block's file. A block's run plans its own sub-blocks inside it as usual;
// what is lost is the overlap of one dataset block's writing with the next
// block's compute, a small share for blocks of thousands of sources.
//
// On disk, DIR holds:
//
//	source_block=00000/part-0.parquet   one per block, written under a hidden
//	                                    temporary name, renamed when complete
//	_vertices.parquet                   matrix layout: the vertex (target) order
//	_pathctl.partial.json               during the run: the blocks done so far
//	_pathctl.json                       written last: the run is complete
//
// Readers (pyarrow.dataset, DuckDB, Spark) skip the names starting with
// "." or "_".

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/pipeline"
)

const (
	datasetManifest = "_pathctl.json"
	datasetPartial  = "_pathctl.partial.json"
	// datasetVersion is the manifest's format; a resume refuses others.
	datasetVersion = 1
	// defaultDatasetBlock is the sources per file of the pairs and stats
	// layouts, and the most of the matrix layout (datasetBlockSize).
	defaultDatasetBlock = 4096
	// datasetMatrixBytes bounds a matrix block's distances (uncompressed)
	// under the default block size.
	datasetMatrixBytes = 1 << 30
)

// datasetFlags are the flags of -o DIR/.
func datasetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "resume", Usage: "-o DIR/: continue the run whose dataset DIR holds (same graph and query), computing only the source blocks not yet complete"},
		&cli.BoolFlag{Name: "overwrite", Usage: "-o DIR/: replace the pathctl dataset DIR holds instead of refusing a non-empty directory"},
		&cli.IntFlag{Name: "dataset-block", Usage: "-o DIR/: sources per file of the dataset, >= 1 (default: 4096; for the matrix layout fewer, so that a block's distances stay within 1 GiB; a resume reuses the dataset's)"},
		partitionFlag(),    // dataset_partition.go
		datasetFaultFlag(), // dataset_faults.go
	}
}

// isDatasetOutput reports whether -o out asks for a dataset: a path ending
// in a slash, or an existing directory.
func isDatasetOutput(out string) bool {
	if out == "" || out == "-" {
		return false
	}
	if strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(os.PathSeparator)) {
		return true
	}
	st, err := os.Stat(out)
	return err == nil && st.IsDir()
}

// executeDataset is execute for -o DIR/: opt is the checked query. Its
// steps are datasetRun's (dataset_run.go).
func executeDataset(e *env, c *cli.Context, opt pipeline.Options, out string) error {
	// 1. The request's flags, and what DIR holds: start, resume or
	// refuse, before the graph is read.
	r, err := checkDatasetRequest(e, c, opt, out)
	if err != nil {
		return err
	}
	if err := r.openDatasetDir(); err != nil {
		return err
	}
	// 2. The graph and the query, prepared once for every block.
	if err := r.readGraph(); err != nil {
		return err
	}
	defer r.g.Close()
	if err := r.prepare(); err != nil {
		return err
	}
	// 3. The manifest, and on a resume the blocks it keeps.
	if err := r.plan(); err != nil {
		return err
	}
	if complete, err := r.keepComplete(); err != nil || complete {
		return err
	}
	// 4. The partial manifest, each block's file, the complete manifest.
	if err := r.start(); err != nil {
		return err
	}
	if err := r.writeBlocks(); err != nil {
		return err
	}
	return r.finish()
}

// datasetBlockSize is the default sources per block: defaultDatasetBlock,
// and for the matrix layout at most as many rows as datasetMatrixBytes of
// float64 distances hold.
func datasetBlockSize(layout arrowio.Layout, targets, vertices int, narrowed bool) int {
	if layout != arrowio.LayoutMatrix {
		return defaultDatasetBlock
	}
	cols := vertices
	if narrowed {
		cols = targets
	}
	return max(1, min(defaultDatasetBlock, datasetMatrixBytes/(8*max(cols, 1))))
}

// isDatasetEntry reports whether a top-level name of DIR is one pathctl
// writes.
func isDatasetEntry(name string) bool {
	return name == datasetManifest || name == datasetPartial || isPartitionDir(name) ||
		strings.HasPrefix(name, "_vertices.") || strings.HasPrefix(name, "."+datasetManifest+".tmp-") ||
		strings.HasPrefix(name, "."+datasetPartial+".tmp-") || strings.HasPrefix(name, "._vertices.")
}

// clearDataset removes the pathctl dataset of dir for --overwrite; a
// directory that holds anything else is refused, so that --overwrite
// never deletes files pathctl did not write.
func clearDataset(dir string, entries []os.DirEntry) error {
	for _, ent := range entries {
		if !isDatasetEntry(ent.Name()) {
			return usagef("--overwrite: %s holds %s, which is not part of a pathctl dataset; remove it or write elsewhere", dir, ent.Name())
		}
	}
	for _, ent := range entries {
		if err := os.RemoveAll(filepath.Join(dir, ent.Name())); err != nil {
			return fmt.Errorf("pathctl: --overwrite: %w", err)
		}
	}
	return nil
}

// onlyTemporaries reports whether entries (of DIR) are the hidden
// temporary files and partitions of a run killed before its first
// manifest, with no part file complete.
func onlyTemporaries(entries []os.DirEntry) bool {
	for _, ent := range entries {
		name := ent.Name()
		if !isDatasetEntry(name) || name == datasetManifest || name == datasetPartial || strings.HasPrefix(name, "_vertices.") {
			return false
		}
	}
	return true
}

// removeDatasetTemporaries removes the hidden temporary files a killed run
// left in dir and its partitions.
func removeDatasetTemporaries(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, ent := range entries {
		name := ent.Name()
		switch {
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-"):
			os.Remove(filepath.Join(dir, name))
		case ent.IsDir() && isPartitionDir(name):
			parts, _ := os.ReadDir(filepath.Join(dir, name))
			for _, p := range parts {
				if strings.HasPrefix(p.Name(), ".") && strings.Contains(p.Name(), ".tmp-") {
					os.Remove(filepath.Join(dir, name, p.Name()))
				}
			}
		}
	}
}
