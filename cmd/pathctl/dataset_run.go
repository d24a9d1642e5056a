package main

// The steps of a -o DIR/ run (executeDataset, dataset.go), in their order:
// the request's flags, what DIR holds, the graph and the query, the
// manifest, the blocks a resume keeps, the start of writing, each block's
// file, and the complete manifest. A datasetRun carries what one step
// hands the next.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// datasetRun is one -o DIR/ run: its request, then what its steps build.
type datasetRun struct {
	e   *env
	c   *cli.Context
	opt pipeline.Options
	// The request (checkDatasetRequest).
	out, dir, format, ext    string
	resume, overwrite, quiet bool
	partitionBy              string
	fault                    *datasetFault
	// prior is the manifest a resume continues (openDatasetDir).
	prior *datasetManifestFile
	// The graph and the query (readGraph, prepare); blockProgress is the
	// running block's progress, which the prepared query's Progress calls.
	g             *pipeline.Graph
	q             *pipeline.Prepared
	blockProgress func(done, total int64)
	// The plan (plan): the manifest, the blocks complete, and with
	// --partition-by source each source's directory.
	m             *datasetManifestFile
	done          map[int]datasetFile
	partitionDirs []string
	// The writing (start): the files' schema (the matrix's names its
	// vertex file), the vertices of the result's columns, the files'
	// options, the digits of a block's number, and the progress of every
	// block.
	schema   *arrow.Schema
	columns  *arrowio.Vertices
	wopt     arrowio.WriteOptions
	width    int
	bar      *progress
	prog     *datasetProgress
	computed int
}

// checkDatasetRequest checks the flags of -o out, before anything is read.
func checkDatasetRequest(e *env, c *cli.Context, opt pipeline.Options, out string) (*datasetRun, error) {
	r := &datasetRun{e: e, c: c, opt: opt, out: out, dir: filepath.Clean(out), quiet: c.Bool("quiet")}
	var err error
	if r.format, r.ext, err = datasetFormat(c.String("format"), out); err != nil { // dataset_space.go
		return nil, err
	}
	r.resume, r.overwrite = c.Bool("resume"), c.Bool("overwrite")
	if r.resume && r.overwrite {
		return nil, usagef("--resume and --overwrite: give one (--overwrite starts the dataset again)")
	}
	blockFlag := c.Int("dataset-block")
	if blockFlag < 0 || (c.IsSet("dataset-block") && blockFlag == 0) {
		return nil, usagef("--dataset-block %d: want 1 or more", blockFlag)
	}
	if r.fault, err = parseDatasetFault(c.String("dataset-fault")); err != nil {
		return nil, err
	}
	if r.partitionBy, err = checkPartitionBy(c, opt.Layout); err != nil {
		return nil, err
	}
	if c.String("vertices-out") != "" {
		return nil, usagef("--vertices-out: a dataset (-o %s) keeps its vertex order in %s", out, filepath.Join(out, "_vertices"+r.ext))
	}
	if err := checkOutputPaths(c, opt.Layout, "-"); err != nil {
		return nil, err
	}
	if parent := filepath.Dir(r.dir); parent != "" {
		if st, err := os.Stat(parent); err != nil || !st.IsDir() {
			return nil, usagef("-o %s: directory %s does not exist", out, parent)
		}
	}
	if st, err := os.Stat(r.dir); err == nil && !st.IsDir() {
		return nil, usagef("-o %s: %s is a file, not a directory", out, r.dir)
	}
	return r, nil
}

// openDatasetDir decides from what DIR holds whether to start, resume
// (reading the prior manifest) or refuse, before the graph is read.
func (r *datasetRun) openDatasetDir() error {
	entries, err := os.ReadDir(r.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return usagef("-o %s: %v", r.out, err)
	}
	if len(entries) == 0 {
		return nil
	}
	switch {
	case r.resume && onlyTemporaries(entries):
		// Killed before its first manifest: nothing to keep.
		removeDatasetTemporaries(r.dir)
	case r.resume:
		r.prior, err = readDatasetManifest(r.dir)
		return err
	case r.overwrite:
		return clearDataset(r.dir, entries)
	default:
		return usagef("-o %s: the directory is not empty; give --resume to continue the run it holds, or --overwrite to replace it", r.out)
	}
	return nil
}

// readGraph reads the graph; the caller closes r.g.
func (r *datasetRun) readGraph() error {
	opt := r.opt
	g, err := readGraph(r.e, r.c, pipeline.LoadOptions{Engine: loadEngine(opt.Engine, opt.Layout), Sources: len(opt.Sources), Log: opt.Log, Notice: opt.Notice, Devices: opt.Devices,
		Algorithm: opt.Algorithm, Tune: opt.Tune})
	r.g = g
	return err
}

// prepare prepares the query once for every block. One progress serves
// every block: the prepared query holds a closure that calls the running
// block's blockProgress, set before each block runs.
func (r *datasetRun) prepare() error {
	if err := readIndexFlag(r.c, r.g, &r.opt, nil); err != nil {
		return err
	}
	r.opt.Progress = func(d, t int64) { r.blockProgress(d, t) }
	q, err := pipeline.Prepare(r.g, r.opt)
	if err != nil {
		return queryError(r.c, r.g, err)
	}
	r.q = q
	return nil
}

// plan makes the run's manifest: the graph's identity, the query, the
// block size and count, the schema; with --partition-by source, each
// source's directory.
func (r *datasetRun) plan() error {
	c, opt, q := r.c, r.opt, r.q
	sources, targets := q.Sources(), graph.Distinct(q.Targets()) // the manifest identifies targets as a set in order
	m := &datasetManifestFile{Version: datasetVersion, Graph: graphIdentity(r.g, c)}
	m.Query = datasetQuery{
		Layout: string(opt.Layout), Format: r.format, Compression: c.String("compression"), Algorithm: string(opt.Algorithm),
		Sources: len(sources), SourcesHash: idsHash(sources, opt.Sources == nil),
		K: opt.K, Reverse: opt.Reverse, WithPredecessors: opt.WithPredecessors, WithPaths: opt.WithPaths,
		PartitionBy: r.partitionBy,
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
	if r.prior != nil {
		priorBlock = r.prior.Query.BlockSize
	}
	m.Query.BlockSize = datasetBlockPlan(c, opt.Layout, r.partitionBy, len(sources), len(targets), r.g.NumVertices(), opt.Targets != nil, priorBlock)
	var err error
	if r.partitionBy == partitionBySource {
		if r.partitionDirs, err = r.sourcePartitionDirs(sources); err != nil {
			return err
		}
	}
	m.Schema.Text = q.Schema().String()
	if m.Schema.IPC, err = schemaIPC(q.Schema()); err != nil {
		return err
	}
	m.Blocks = datasetBlockCount(len(sources), m.Query.BlockSize)
	r.m = m
	return nil
}

// sourcePartitionDirs is each source's directory for --partition-by
// source; no source at all is one, the default partition, for the
// schema's empty file.
func (r *datasetRun) sourcePartitionDirs(sources []graph.VertexID) ([]string, error) {
	if len(sources) == 0 {
		return []string{partitionBySource + "=" + hiveDefaultPartition}, nil
	}
	ids := make([]string, len(sources))
	for i, v := range sources {
		ids[i] = r.g.Table.Vertices.Format(v)
	}
	return sourcePartitions(ids)
}

// keepComplete sets r.done to the blocks a resume keeps: the prior
// manifest's files that are still whole. It refuses a prior run of
// another graph or query, and reports a prior run that is complete
// (nothing to do) as complete.
func (r *datasetRun) keepComplete() (complete bool, err error) {
	r.done = map[int]datasetFile{}
	prior := r.prior
	if prior == nil {
		return false, nil
	}
	if diff := manifestDiff(prior, r.m); diff != "" {
		return false, usagef("--resume: %s holds another run: %s", r.out, diff)
	}
	if prior.Complete {
		// Killed between the complete manifest's rename and the partial
		// one's removal: the latter is left over.
		os.Remove(filepath.Join(r.dir, datasetPartial))
		removeDatasetTemporaries(r.dir)
		if !r.quiet {
			fmt.Fprintf(r.e.stderr, "pathctl: %s is complete (%d blocks, %d rows); nothing to resume\n", r.out, prior.Blocks, prior.Rows)
		}
		return true, nil
	}
	for _, f := range prior.Files {
		// A file that is missing or of another size than recorded
		// (truncated) is computed again.
		path := filepath.Join(r.dir, filepath.FromSlash(f.Path))
		if st, err := os.Stat(path); err == nil && st.Size() == f.Bytes {
			r.done[f.Block] = f
		} else if err == nil {
			// Removed now, so that readers of the dataset meanwhile never
			// meet it.
			os.Remove(path)
		}
	}
	removeDatasetTemporaries(r.dir)
	return false, nil
}

// start checks the free space, makes DIR, settles the files' schema and
// options, and writes the partial manifest first: a run killed at any
// later point leaves a dataset --resume knows.
func (r *datasetRun) start() error {
	m := r.m
	if err := checkDatasetSpace(r.c, r.q, r.out, m, r.done, len(r.q.Sources())); err != nil { // dataset_space.go
		return err
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("pathctl: -o %s: %w", r.out, err)
	}
	r.schema, r.columns = r.q.Schema(), r.q.Columns()
	r.wopt = arrowio.WriteOptions{Format: r.format, Compression: r.c.String("compression"), Vertices: r.columns,
		MatrixWrites: arrowio.MatrixWritesPositional}
	if r.opt.Layout == arrowio.LayoutMatrix {
		m.Vertices = "_vertices" + r.ext
		md := r.schema.Metadata()
		meta := arrow.NewMetadata(append(md.Keys(), "pathctl.vertices"), append(md.Values(), m.Vertices))
		r.schema = arrow.NewSchema(r.schema.Fields(), &meta)
	}
	if err := writeDatasetManifest(r.dir, datasetPartial, m, r.done); err != nil {
		return datasetWriteError(r.out, datasetPartial, err, len(r.done), m.Blocks)
	}
	r.width = max(5, len(strconv.Itoa(m.Blocks-1)))
	r.bar = newProgressOf(r.e, r.c, r.g.NumVertices())
	r.prog = newDatasetProgress(r.bar, r.done, len(r.q.Sources())) // dataset_space.go
	return nil
}

// finish releases the engine, writes the matrix's vertex file and the
// complete manifest, and removes the partial one.
func (r *datasetRun) finish() error {
	m := r.m
	if err := r.g.Release(); err != nil {
		return queryError(r.c, r.g, err)
	}
	if m.Vertices != "" {
		if err := writeVertices(filepath.Join(r.dir, m.Vertices), r.columns, r.wopt); err != nil {
			return datasetWriteError(r.out, m.Vertices, err, len(r.done), m.Blocks)
		}
	}
	m.Complete = true
	err := r.fault.beforeManifest(r.dir, datasetManifest, m, finalBlock)
	if err == nil {
		err = writeDatasetManifest(r.dir, datasetManifest, m, r.done)
	}
	if err != nil {
		return datasetWriteError(r.out, datasetManifest, err, len(r.done), m.Blocks)
	}
	r.fault.at("renamed", finalBlock)
	os.Remove(filepath.Join(r.dir, datasetPartial))
	if !r.quiet {
		fmt.Fprintf(r.e.stderr, "pathctl: dataset %s: %d sources in %d blocks (%d computed now), %d rows; manifest %s\n",
			r.out, len(r.q.Sources()), m.Blocks, r.computed, m.Rows, filepath.Join(r.out, datasetManifest))
	}
	return nil
}
