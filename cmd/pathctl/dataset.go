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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
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

// executeDataset is execute for -o DIR/: opt is the checked query.
func executeDataset(e *env, c *cli.Context, opt pipeline.Options, out string) error {
	quiet := c.Bool("quiet")
	dir := filepath.Clean(out)
	format, ext, err := datasetFormat(c.String("format"), out) // dataset_space.go
	if err != nil {
		return err
	}
	resume, overwrite := c.Bool("resume"), c.Bool("overwrite")
	if resume && overwrite {
		return usagef("--resume and --overwrite: give one (--overwrite starts the dataset again)")
	}
	blockFlag := c.Int("dataset-block")
	if blockFlag < 0 || (c.IsSet("dataset-block") && blockFlag == 0) {
		return usagef("--dataset-block %d: want 1 or more", blockFlag)
	}
	fault, err := parseDatasetFault(c.String("dataset-fault"))
	if err != nil {
		return err
	}
	partitionBy, err := checkPartitionBy(c, opt.Layout)
	if err != nil {
		return err
	}
	if c.String("vertices-out") != "" {
		return usagef("--vertices-out: a dataset (-o %s) keeps its vertex order in %s", out, filepath.Join(out, "_vertices"+ext))
	}
	if err := checkOutputPaths(c, opt.Layout, "-"); err != nil {
		return err
	}
	if parent := filepath.Dir(dir); parent != "" {
		if st, err := os.Stat(parent); err != nil || !st.IsDir() {
			return usagef("-o %s: directory %s does not exist", out, parent)
		}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return usagef("-o %s: %s is a file, not a directory", out, dir)
	}
	// What DIR holds decides whether to start, resume or refuse, before
	// the graph is read.
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return usagef("-o %s: %v", out, err)
	}
	var prior *datasetManifestFile
	if len(entries) > 0 {
		switch {
		case resume && onlyTemporaries(entries):
			// Killed before its first manifest: nothing to keep.
			removeDatasetTemporaries(dir)
		case resume:
			prior, err = readDatasetManifest(dir)
			if err != nil {
				return err
			}
		case overwrite:
			if err := clearDataset(dir, entries); err != nil {
				return err
			}
		default:
			return usagef("-o %s: the directory is not empty; give --resume to continue the run it holds, or --overwrite to replace it", out)
		}
	}

	g, err := readGraph(e, c, pipeline.LoadOptions{Engine: loadEngine(opt.Engine, opt.Layout), Sources: len(opt.Sources), Log: opt.Log, Notice: opt.Notice, Devices: opt.Devices,
		Algorithm: opt.Algorithm, Tune: opt.Tune})
	if err != nil {
		return err
	}
	defer g.Close()
	if err := readIndexFlag(c, g, &opt); err != nil {
		return err
	}
	// One progress for every block: blockProgress is the running block's
	// (set before each block runs; the prepared query holds this closure).
	var bar *progress
	var blockProgress func(done, total int64)
	opt.Progress = func(d, t int64) { blockProgress(d, t) }
	q, err := pipeline.Prepare(g, opt)
	if err != nil {
		return queryError(c, g, err)
	}
	schema, columns, sources, targets := q.Schema(), q.Columns(), q.Sources(), graph.Distinct(q.Targets()) // the manifest identifies targets as a set in order

	m := &datasetManifestFile{Version: datasetVersion}
	m.Graph = graphIdentity(g, c)
	m.Query = datasetQuery{
		Layout: string(opt.Layout), Format: format, Compression: c.String("compression"), Algorithm: string(opt.Algorithm),
		Sources: len(sources), SourcesHash: idsHash(sources, opt.Sources == nil),
		K: opt.K, Reverse: opt.Reverse, WithPredecessors: opt.WithPredecessors, WithPaths: opt.WithPaths,
		PartitionBy: partitionBy,
	}
	if opt.Targets != nil {
		m.Query.Targets, m.Query.TargetsHash = len(targets), idsHash(targets, false)
	}
	if opt.HasCutoff {
		m.Query.Cutoff = &opt.Cutoff
	}
	if opt.Layout.IsBetweenness() {
		m.Query.Betweenness = fmt.Sprintf("%+v", opt.Betweenness)
	}
	priorBlock := 0
	if prior != nil {
		priorBlock = prior.Query.BlockSize
	}
	m.Query.BlockSize = datasetBlockPlan(c, opt.Layout, partitionBy, len(sources), len(targets), g.NumVertices(), opt.Targets != nil, priorBlock)
	var partitionDirs []string // --partition-by source: each source's directory
	if partitionBy == partitionBySource {
		ids := make([]string, len(sources))
		for i, v := range sources {
			ids[i] = g.Table.Vertices.Format(v)
		}
		if partitionDirs, err = sourcePartitions(ids); err != nil {
			return err
		}
		if len(sources) == 0 {
			partitionDirs = []string{partitionBySource + "=" + hiveDefaultPartition} // the schema's empty file
		}
	}
	m.Schema.Text = schema.String()
	if m.Schema.IPC, err = schemaIPC(schema); err != nil {
		return err
	}
	m.Blocks = datasetBlockCount(len(sources), m.Query.BlockSize)

	done := map[int]datasetFile{}
	if prior != nil {
		if diff := manifestDiff(prior, m); diff != "" {
			return usagef("--resume: %s holds another run: %s", out, diff)
		}
		if prior.Complete {
			// Killed between the complete manifest's rename and the
			// partial one's removal: the latter is left over.
			os.Remove(filepath.Join(dir, datasetPartial))
			removeDatasetTemporaries(dir)
			if !quiet {
				fmt.Fprintf(e.stderr, "pathctl: %s is complete (%d blocks, %d rows); nothing to resume\n", out, prior.Blocks, prior.Rows)
			}
			return nil
		}
		for _, f := range prior.Files {
			// A file that is missing or of another size than recorded
			// (truncated) is computed again.
			path := filepath.Join(dir, filepath.FromSlash(f.Path))
			if st, err := os.Stat(path); err == nil && st.Size() == f.Bytes {
				done[f.Block] = f
			} else if err == nil {
				// Removed now, so that readers of the dataset meanwhile
				// never meet it.
				os.Remove(path)
			}
		}
		removeDatasetTemporaries(dir)
	}
	if err := checkDatasetSpace(c, q, out, m, done, len(sources)); err != nil { // dataset_space.go
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("pathctl: -o %s: %w", out, err)
	}

	wopt := arrowio.WriteOptions{Format: format, Compression: c.String("compression"), Vertices: columns,
		MatrixWrites: arrowio.MatrixWritesPositional}
	if opt.Layout == arrowio.LayoutMatrix {
		m.Vertices = "_vertices" + ext
		md := schema.Metadata()
		meta := arrow.NewMetadata(append(md.Keys(), "pathctl.vertices"), append(md.Values(), m.Vertices))
		schema = arrow.NewSchema(schema.Fields(), &meta)
	}
	// The partial manifest comes first: a run killed at any later point
	// leaves a dataset --resume knows.
	if err := writeDatasetManifest(dir, datasetPartial, m, done); err != nil {
		return datasetWriteError(out, datasetPartial, err, len(done), m.Blocks)
	}
	width := max(5, len(strconv.Itoa(m.Blocks-1)))
	bar = newProgressOf(e, c, g.NumVertices())
	prog := newDatasetProgress(bar, done, len(sources)) // dataset_space.go
	var computed int
	for b := 0; b < m.Blocks; b++ {
		first := b * m.Query.BlockSize
		count := min(m.Query.BlockSize, len(sources)-first)
		if _, ok := done[b]; ok {
			continue
		}
		rel := datasetPartPath(partitionDirs, b, width, ext) // dataset_partition.go
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("pathctl: %w", err)
		}
		block := q
		if opt.Layout != arrowio.LayoutNearest && !opt.Layout.IsBetweenness() {
			block = q.Slice(first, first+count)
		}
		blockProgress = prog.block(count)
		bw := wopt
		if opt.Layout == arrowio.LayoutMatrix {
			bw.MatrixRows = count
		}
		e.outputs.add(path) // a SIGQUIT removes its temporary file (signals.go)
		w, err := arrowio.CreateResult(path, schema, bw)
		if err != nil {
			return fmt.Errorf("pathctl: %w", err)
		}
		var rows int64
		emit := func(rec arrow.RecordBatch) error {
			rows += rec.NumRows()
			if err := fault.noSpace("part", b, path); err != nil {
				return err
			}
			if err := w.Write(rec); err != nil {
				return err
			}
			fault.at("part", b)
			return nil
		}
		// No source at all still writes one file, of no rows: the schema.
		if count > 0 || opt.Layout.IsBetweenness() {
			if _, err := block.Run(e.ctx, emit); err != nil {
				w.Abort()
				bar.finish()
				return datasetWriteError(out, rel, queryError(c, g, err), len(done), m.Blocks)
			}
		}
		if err := w.Close(); err != nil {
			return datasetWriteError(out, rel, err, len(done), m.Blocks)
		}
		syncDir(filepath.Dir(path))
		fault.at("renamed", b)
		done[b] = datasetFile{Path: rel, Block: b, First: first, Count: count, Rows: rows, Bytes: w.BytesWritten()}
		computed++
		err = fault.beforeManifest(dir, datasetPartial, m, b)
		if err == nil {
			err = writeDatasetManifest(dir, datasetPartial, m, done)
		}
		if err != nil {
			delete(done, b) // its file stays; a resume computes it again
			return datasetWriteError(out, datasetPartial, err, len(done), m.Blocks)
		}
	}
	bar.finish()
	if err := g.Release(); err != nil {
		return queryError(c, g, err)
	}
	if m.Vertices != "" {
		if err := writeVertices(filepath.Join(dir, m.Vertices), columns, wopt); err != nil {
			return datasetWriteError(out, m.Vertices, err, len(done), m.Blocks)
		}
	}
	m.Complete = true
	err = fault.beforeManifest(dir, datasetManifest, m, finalBlock)
	if err == nil {
		err = writeDatasetManifest(dir, datasetManifest, m, done)
	}
	if err != nil {
		return datasetWriteError(out, datasetManifest, err, len(done), m.Blocks)
	}
	fault.at("renamed", finalBlock)
	os.Remove(filepath.Join(dir, datasetPartial))
	if !quiet {
		fmt.Fprintf(e.stderr, "pathctl: dataset %s: %d sources in %d blocks (%d computed now), %d rows; manifest %s\n",
			out, len(sources), m.Blocks, computed, m.Rows, filepath.Join(out, datasetManifest))
	}
	return nil
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
