package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/internal/trace"
	"github.com/pathctl/pathctl/pipeline"
)

// inputFlags read and shape the edge table.
func inputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "input-format", Usage: "input format: parquet, arrow, arrows, csv, tsv or gr (default: from the file extension; required for -)"},
		&cli.StringFlag{Name: "src-col", Value: "src", Usage: "source id column"},
		&cli.StringFlag{Name: "dst-col", Value: "dst", Usage: "target id column"},
		&cli.StringFlag{Name: "weight-col", Usage: "weight column (default: weight if present, else the only numeric column besides the ids, said on stderr; else none: distances count edges)"},
		&cli.BoolFlag{Name: "unweighted", Usage: "ignore any weight column: distances count edges"},
		&cli.BoolFlag{Name: "undirected", Usage: "treat every row as an edge in both directions (Python: directed=False)"},
		&cli.StringFlag{Name: "vertices", Usage: "table of vertex ids (its only column, or the column vertex or id), so that vertices without edges are in the graph too (default: the ids in the edges)"},
		&cli.IntFlag{Name: "max-vertices", Usage: "the most vertices a DIMACS problem line may declare; its vertices are allocated from the header alone (default: 2^26)"},
		&cli.StringFlag{Name: "dist-type", Usage: "distance type int32, int64, float32 or float64 (default: the narrowest that holds every distance)"},
	}
}

// weightFlags are the flags bfs accepts (the Python package and old
// scripts pass them) but ignores: it counts edges whatever the weights.
var weightFlags = []string{"weight-col", "unweighted", "delta"}

// hideFlags keeps the named flags out of a command's help.
func hideFlags(flags []cli.Flag, names []string) {
	for _, f := range flags {
		if !slices.Contains(names, f.Names()[0]) {
			continue
		}
		switch f := f.(type) {
		case *cli.StringFlag:
			f.Hidden = true
		case *cli.BoolFlag:
			f.Hidden = true
		case *cli.Float64Flag:
			f.Hidden = true
		case *cli.IntFlag:
			f.Hidden = true
		}
	}
}

// computeFlags choose what to compute and where.
func computeFlags(defaultAlgo pipeline.Algorithm) []cli.Flag {
	algos := "dijkstra, delta, edge, bfs, bfs-level, bellman-ford, ch (contraction hierarchy, CPU) or auto"
	if defaultAlgo == pipeline.BFS {
		algos = "bfs (with predecessors) or bfs-level"
	}
	flags := []cli.Flag{
		&cli.StringFlag{Name: "algo", Value: string(defaultAlgo), Usage: "algorithm: " + algos},
		&cli.StringFlag{Name: "engine", Value: "auto", Usage: "engine: auto (GPU where usable, else CPU), cpu or gpu"},
	}
	return append(flags,
		&cli.Float64Flag{Name: "delta", Usage: "bucket width of --algo delta and of --nearest on the GPU, > 0 (default: chosen from the weights)"},
		&cli.IntFlag{Name: "threads", Usage: "CPU threads, >= 1 (default: every core)"},
		&cli.StringFlag{Name: "mem", Aliases: []string{"gpu-mem"}, Usage: "memory budget for the source blocks in flight, in bytes or with a unit: 512MiB, 8GB (default: 1 GiB on the CPU, 80% of the GPU's free memory, at most 8 GiB, on a GPU)"},
		&cli.StringFlag{Name: "devices", Value: "all", Usage: "GPUs a gpu run uses: all, or ordinals such as 0,1 (one engine each, fed from one queue of source blocks; --mem applies to each)"},
		&cli.IntFlag{Name: "max-block", Usage: "sources per block at most (default: a sixteenth of the sources, or as many as the memory budget holds for the stats layout on a GPU)"},
		tuneFlag(),
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print the engine, algorithm and block plan chosen, and why the GPU is not used"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"},
	)
}

// tuneFlag is --tune, the GPU engine's tuning (pipeline.Options.Tune).
func tuneFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "tune", Usage: "GPU engine tuning KEY=VALUE, comma-separated or repeated, later settings winning (docs/engine.md lists every key, its default and the measurement that chose it; for comparing settings)"}
}

// readTune checks --tune and returns its settings as one spec; a setting
// that is not valid is a usage error naming it.
func readTune(c *cli.Context) (string, error) {
	spec := strings.Join(c.StringSlice("tune"), ",")
	if err := pipeline.CheckTune(spec); err != nil {
		return "", usagef("--tune: %v", err)
	}
	return spec, nil
}

// computeParams are the compute flags, checked.
type computeParams struct {
	algo     pipeline.Algorithm
	threads  int
	mem      int64
	delta    float64
	maxBlock int
	devices  []int  // nil: every device
	tune     string // --tune, checked
}

// readComputeParams checks the compute flags: a value that means nothing
// is a usage error, and a memory budget beyond the machine's memory is
// said on notice (nil: not said).
func readComputeParams(c *cli.Context, notice io.Writer) (computeParams, error) {
	var p computeParams
	var err error
	if p.algo, err = pipeline.ParseAlgorithm(c.String("algo")); err != nil {
		return p, usagef("--algo: %v", err)
	}
	if c.Command.Name == "bfs" && p.algo != pipeline.BFS && p.algo != pipeline.BFSLevel {
		return p, usagef("--algo %s: bfs runs bfs or bfs-level; use sssp or run for weighted distances", p.algo)
	}
	if p.threads = c.Int("threads"); p.threads < 0 || (c.IsSet("threads") && p.threads == 0) {
		return p, usagef("--threads %d: want 1 or more (leave it out for every core)", p.threads)
	}
	if p.maxBlock = c.Int("max-block"); p.maxBlock < 0 || (c.IsSet("max-block") && p.maxBlock == 0) {
		return p, usagef("--max-block %d: want 1 or more", p.maxBlock)
	}
	if p.delta = c.Float64("delta"); c.IsSet("delta") && !(p.delta > 0 && !math.IsInf(p.delta, 0)) {
		return p, usagef("--delta %v: want a finite width > 0 (leave it out to choose from the weights)", p.delta)
	}
	if p.devices, err = pipeline.ParseDevices(c.String("devices")); err != nil {
		return p, usagef("--devices %s: want all or device ordinals such as 0,1", c.String("devices"))
	}
	if p.tune, err = readTune(c); err != nil {
		return p, err
	}
	if c.IsSet("mem") {
		if p.mem, err = parseBytes("mem", c.String("mem")); err != nil {
			return p, err
		}
		if p.mem == 0 {
			return p, usagef("--mem 0: want a budget above 0 (leave it out for the default)")
		}
		if phys := arrowio.PhysicalMemory(); phys > 0 && p.mem > phys && notice != nil {
			fmt.Fprintf(notice, "pathctl: note: --mem %s is more than this machine's memory (%s); runs past it will fail or swap\n", gen.HumanBytes(p.mem), gen.HumanBytes(phys))
		}
	}
	return p, nil
}

// outputFlags choose the result layout and file.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "output file; - writes an Arrow IPC stream to stdout; DIR/ writes a partitioned dataset (docs/cli.md)"},
		&cli.StringFlag{Name: "layout", Value: "pairs", Usage: "pairs (source, target, distance), matrix (one row of n distances per source), stats (centralities per source) or betweenness (one row per vertex)"},
		&cli.StringFlag{Name: "format", Usage: "arrow (IPC file), arrows (IPC stream), parquet or csv (default: from the output's extension)"},
		&cli.StringFlag{Name: "compression", Usage: "none, zstd or lz4 (default: none for Arrow IPC, zstd for Parquet)"},
		&cli.BoolFlag{Name: "with-predecessors", Usage: "add a predecessor column to the pairs layout"},
		&cli.StringFlag{Name: "vertices-out", Usage: "where the matrix layout writes its vertex order (default: <output>.vertices.<ext>)"},
		// How a matrix written as one batch into a file in memory gets its
		// values: copied into a mapping on every core, or positioned
		// writes (arrowio.WriteOptions.MatrixWrites); for benchmarks, so
		// hidden, and read from the environment so that the Python
		// package's runs can be switched too.
		&cli.StringFlag{Name: "matrix-writes", EnvVars: []string{"PATHCTL_MATRIX_WRITES"}, Hidden: true,
			Usage: "mapped, prefill or pwrite: how a matrix in a memfd or on tmpfs is written (default: prefill when the graph is on the GPU, else pwrite)"},
	}
}

func runCommand(e *env) *cli.Command {
	flags := append(inputFlags(), computeFlags(pipeline.Auto)...)
	flags = append(flags, outputFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "sources", Usage: "comma-separated source ids (default: every vertex); a repeated id runs once, at its first place, and its rows appear once"},
		&cli.StringFlag{Name: "sources-file", Usage: "file of source ids, one per line (repeats run once, as with --sources)"},
		// The Python package's handoff (arrowio.WriteOptions.ResultPeer):
		// a socket to the process that reads the matrix, which is written
		// into its memory.
		&cli.IntFlag{Name: "result-peer", Value: -1, Hidden: true,
			Usage: "file descriptor of a Unix socket to the process reading the result: a matrix bound for a memfd is written into its memory instead"},
	)
	flags = append(flags, queryFlags()...)
	flags = append(flags, betweennessFlags()...)
	flags = append(flags, indexFlag())
	flags = append(flags, dryRunFlags()...) // dryrun.go
	flags = append(flags, datasetFlags()...)
	return &cli.Command{
		Name:      "run",
		Usage:     "shortest paths from every source (or --sources) to every vertex",
		ArgsUsage: "EDGES",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			if err := checkNoConflict(c, "sources", "sources-file"); err != nil {
				return err
			}
			sources, err := parseSources(c.String("sources"), c.String("sources-file"))
			if err != nil {
				return err
			}
			return execute(e, c, sources)
		},
	}
}

func ssspCommand(e *env, name, usage string, algo pipeline.Algorithm) *cli.Command {
	flags := append(inputFlags(), computeFlags(algo)...)
	flags = append(flags, outputFlags()...)
	flags = append(flags, &cli.StringFlag{Name: "source", Aliases: []string{"s"}, Required: true, Usage: "the source vertex id"})
	flags = append(flags, queryFlags()...)
	// One source is one block.
	hideFlags(flags, []string{"max-block"})
	if algo == pipeline.BFS {
		hideFlags(flags, weightFlags)
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "EDGES",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			return execute(e, c, []string{c.String("source")})
		},
	}
}

// parseSources reads --sources and --sources-file without repeats (the
// count decides the engine before the graph is read; the pipeline drops
// repeats again by vertex, where "7" and "007" are one).
func parseSources(list, file string) ([]string, error) {
	ids, err := parseIDs("sources", list, file)
	return dedupe(ids), err
}

// parseIDs reads the ids of --NAME and --NAME-file. The command-line list
// is split on commas and each id trimmed of spaces, as a shell user writes
// it ("1, 2"); the file has one id per line kept verbatim
// (arrowio.ReadIDList: only the line ending is removed, an empty line is
// the id ""), so ids with spaces around them, commas or no characters at
// all are asked for through the file, as every edge reader keeps them.
func parseIDs(name, list, file string) ([]string, error) {
	var ids []string
	if list != "" {
		for _, s := range strings.Split(list, ",") {
			if s = strings.TrimSpace(s); s != "" {
				ids = append(ids, s)
			}
		}
		if ids == nil {
			return nil, usagef("--%s %q names no id", name, list)
		}
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, usagef("--%s-file: %v", name, err)
		}
		defer f.Close()
		fromFile, err := arrowio.ReadIDList(f)
		if err != nil {
			return nil, usagef("--%s-file %s: %v", name, file, err)
		}
		ids = append(ids, fromFile...)
		if ids == nil {
			return nil, usagef("--%s-file %s names no id", name, file)
		}
	}
	return ids, nil
}

// dedupe drops the repeats of ids, keeping each at its first place.
func dedupe(ids []string) []string {
	seen := make(map[string]struct{}, len(ids))
	out := ids[:0]
	for _, id := range ids {
		if _, ok := seen[id]; !ok {
			seen[id] = struct{}{}
			out = append(out, id)
		}
	}
	return out
}

// loadGraph reads EDGES and builds its CSR on the CPU as the input flags
// say.
func loadGraph(e *env, c *cli.Context) (*pipeline.Graph, error) {
	return readGraph(e, c, pipeline.LoadOptions{})
}

// readGraph reads EDGES and builds its CSR as the input flags and build
// say (where it is built, what to log). Close the graph when done.
//
// Ctrl-C returns at once: the readers stop at their next batch or chunk,
// but building the vertex dictionary and the CSR are not interruptible, so
// they run aside and are dropped (the process is about to exit).
func readGraph(e *env, c *cli.Context, build pipeline.LoadOptions) (*pipeline.Graph, error) {
	return readGraphTimed(e, c, build, nil)
}

// loadStages is where readGraph's time went, for the --verbose breakdown
// of the wall time.
type loadStages struct {
	begin time.Time     // when the read began
	read  time.Duration // reading the vertex table and the edges
	load  time.Duration // pipeline.LoadGraph (its own Times split it up)
}

// readGraphTimed is readGraph, recording its stages in stages where not
// nil (set only when it returns a graph).
func readGraphTimed(e *env, c *cli.Context, build pipeline.LoadOptions, stages *loadStages) (*pipeline.Graph, error) {
	type loaded struct {
		g      *pipeline.Graph
		stages loadStages
		err    error
	}
	done := make(chan loaded, 1)
	go func() {
		var st loadStages
		g, err := buildGraph(e, c, build, &st)
		done <- loaded{g, st, err}
	}()
	select {
	case r := <-done:
		if stages != nil {
			*stages = r.stages
		}
		return r.g, r.err
	case <-e.ctx.Done():
		go func() {
			if r := <-done; r.g != nil {
				r.g.Close()
			}
		}()
		return nil, fmt.Errorf("reading %s: %w", c.Args().First(), context.Cause(e.ctx))
	}
}

// buildGraph is readGraph's work: read EDGES, build the CSR, recording
// the stages in stages. Where the CSR may be built on the GPU, the device
// opens beside the read (pipeline.OpenEarly).
func buildGraph(e *env, c *cli.Context, build pipeline.LoadOptions, stages *loadStages) (*pipeline.Graph, error) {
	if c.NArg() != 1 {
		return nil, usagef("%s needs exactly one EDGES file (or - for stdin), got %d arguments", c.Command.Name, c.NArg())
	}
	path := c.Args().First()
	ropt := arrowio.ReadOptions{
		Format: c.String("input-format"), SrcCol: c.String("src-col"), DstCol: c.String("dst-col"),
		WeightCol: c.String("weight-col"), Unweighted: c.Bool("unweighted"),
		MaxVertices: c.Int("max-vertices"), Context: e.ctx,
	}
	if ropt.MaxVertices < 0 {
		return nil, usagef("--max-vertices %d is negative", ropt.MaxVertices)
	}
	if ropt.Format != "" {
		if _, err := arrowio.ParseFormat(ropt.Format); err != nil {
			return nil, usagef("--input-format %q: want parquet, arrow, arrows, csv, tsv or gr", ropt.Format)
		}
	}
	quiet := c.Bool("quiet")
	if c.Command.Name == "bfs" {
		// Hop counts whatever the weights: read none.
		for _, f := range weightFlags {
			if c.IsSet(f) && !quiet {
				fmt.Fprintf(e.stderr, "pathctl: note: bfs counts edges; --%s is ignored\n", f)
			}
		}
		ropt.WeightCol, ropt.Unweighted = "", true
	}
	if ropt.WeightCol != "" && ropt.Unweighted {
		return nil, usagef("--weight-col and --unweighted cannot both be given")
	}
	// Creating the GPU context and loading the kernels take longer than
	// reading a million edges: done side by side, they cost the longer.
	// Main began the opening at process start where the command line said
	// that the run may use the GPU, and gives it up where nobody takes it;
	// else it begins here, once the flags are parsed, with the other
	// devices' of a run over several (the graph keeps what it takes).
	build.Device, build.ExitAfter = e.device, e.exits
	early := pipeline.OpenEarly(&build, inputBytes(path))
	defer early.Release()
	readStart := time.Now()
	stages.begin = readStart
	if v := c.String("vertices"); v != "" {
		if v == "-" {
			return nil, usagef("--vertices needs a file; standard input is for the edges")
		}
		verts, err := arrowio.ReadVertices(v, arrowio.ReadOptions{})
		if err != nil {
			return nil, inputError{err}
		}
		build.Vertices = verts
	}
	var tbl *arrowio.EdgeTable
	var err error
	if path == "-" {
		if ropt.Format == "" {
			return nil, usagef("reading edges from stdin needs --input-format")
		}
		tbl, err = arrowio.ReadEdgesFrom(e.stdin, "stdin", ropt)
	} else {
		tbl, err = arrowio.ReadEdges(path, ropt)
	}
	if err != nil {
		return nil, inputError{err}
	}
	stages.read = time.Since(readStart)
	trace.Printf("cli", "edges read (%d)", tbl.Edges.Len())
	if tbl.WeightNote != "" && !quiet {
		fmt.Fprintf(e.stderr, "pathctl: note: %s; --weight-col NAME chooses the weight, --unweighted counts edges\n", tbl.WeightNote)
	}
	var dt pipeline.DistType
	if s := c.String("dist-type"); s != "" {
		if dt, err = pipeline.ParseDistType(s); err != nil {
			return nil, usagef("--dist-type: %v", err)
		}
	}
	build.Undirected, build.DistType = c.Bool("undirected"), dt
	loadStart := time.Now()
	g, err := pipeline.LoadGraph(tbl, build)
	stages.load = time.Since(loadStart)
	if err != nil {
		if errors.Is(err, pipeline.ErrUnavailable) || errors.Is(err, pipeline.ErrInvalid) {
			return nil, err
		}
		if dt != 0 {
			return nil, usageError{err}
		}
		return nil, inputError{err}
	}
	return g, nil
}

// inputBytes is the size of the edge file at path, -1 where it is not a
// regular file (standard input, a pipe) or cannot be read: the read says
// why.
func inputBytes(path string) int64 {
	if path == "-" {
		return -1
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

// execute runs one request from the flags of run, sssp or bfs and writes
// the result atomically.
func execute(e *env, c *cli.Context, sources []string) error {
	quiet := c.Bool("quiet")
	var notice io.Writer
	if !quiet {
		notice = e.stderr
	}
	params, err := readComputeParams(c, notice)
	if err != nil {
		return err
	}
	layout, err := arrowio.ParseLayout(c.String("layout"))
	if err != nil {
		return usagef("--layout: %v", err)
	}
	bopt, err := readBetweennessFlags(c, layout)
	if err != nil {
		return err
	}
	switch w := c.String("matrix-writes"); w {
	case "", arrowio.MatrixWritesMapped, arrowio.MatrixWritesPrefill, arrowio.MatrixWritesPositional:
	default:
		return usagef("--matrix-writes %q (or PATHCTL_MATRIX_WRITES): want %s, %s or %s", w,
			arrowio.MatrixWritesMapped, arrowio.MatrixWritesPrefill, arrowio.MatrixWritesPositional)
	}
	out := c.String("output")
	format := c.String("format")
	if out == "-" && e.stdoutIsTTY && format != "csv" {
		return usagef("refusing to write Arrow binary to a terminal: give -o FILE (.arrow, .parquet, .csv) or --format csv")
	}
	opt := pipeline.Options{
		Algorithm: params.algo, Engine: c.String("engine"), Layout: layout, Sources: sources,
		WithPredecessors: c.Bool("with-predecessors"), Delta: params.delta,
		Threads: params.threads, MemBudget: params.mem, MaxBlock: params.maxBlock, Devices: params.devices, Tune: params.tune,
	}
	if err := applyQueryFlags(c, &opt); err != nil {
		return err
	}
	if !quiet {
		opt.Notice = e.stderr
	}
	if c.Bool("verbose") && !quiet {
		opt.Log = e.stderr
	}
	if err := routeCH(c, &opt); err != nil {
		return err
	}
	if c.Bool("dry-run") {
		return executeDryRun(e, c, opt, out, format) // dryrun.go: read the graph, write nothing
	}
	if isDatasetOutput(out) {
		return executeDataset(e, c, opt, bopt, out) // -o DIR/: dataset.go
	}
	if err := checkOutputPaths(c, layout, out); err != nil {
		return err
	}
	if err := checkOutputDir("-o", out); err != nil {
		return err
	}
	if err := checkOutputDir("--vertices-out", c.String("vertices-out")); err != nil {
		return err
	}
	// The CSR is built where the run will be: on the GPU for --engine gpu,
	// and for auto where a GPU is usable and the sources are many enough.
	started := e.start
	if started.IsZero() {
		started = time.Now()
	}
	var stages loadStages
	g, err := readGraphTimed(e, c, pipeline.LoadOptions{Engine: loadEngine(opt.Engine, layout), Sources: len(sources), Log: opt.Log, Notice: opt.Notice, Devices: opt.Devices,
		Algorithm: opt.Algorithm, Tune: opt.Tune}, &stages)
	if err != nil {
		return err
	}
	defer g.Close() // on the error paths; closed below otherwise
	if err := readIndexFlag(c, g, &opt); err != nil {
		return err
	}
	schema, err := pipeline.Schema(g, opt)
	if err != nil {
		return queryError(c, g, err)
	}
	columns, err := pipeline.Columns(g, opt)
	if err != nil {
		return queryError(c, g, err)
	}
	wopt := arrowio.WriteOptions{Format: format, Compression: c.String("compression"), Stdout: e.stdout, Vertices: columns,
		MatrixWrites: c.String("matrix-writes")}
	if fd := c.Int("result-peer"); c.IsSet("result-peer") && fd >= 0 {
		peer, err := resultPeer(fd)
		if err != nil {
			return err
		}
		defer peer.Close()
		wopt.ResultPeer = peer
	}

	// The matrix layout names its vertex order in a file beside it (not
	// beside a stream: stdout, a device, a FIFO).
	var verticesOut string
	if layout == arrowio.LayoutMatrix {
		verticesOut = c.String("vertices-out")
		if verticesOut == "" && out != "-" && !arrowio.WrittenInPlace(out) {
			verticesOut = defaultVerticesPath(out)
		}
		if verticesOut != "" {
			md := schema.Metadata()
			keys := append(md.Keys(), "pathctl.vertices")
			vals := append(md.Values(), filepath.Base(verticesOut))
			meta := arrow.NewMetadata(keys, vals)
			schema = arrow.NewSchema(schema.Fields(), &meta)
		}
	}
	if layout == arrowio.LayoutMatrix {
		// Known rows let an IPC file in memory (a memfd from the Python
		// package, a file on tmpfs) be written as one batch, in place.
		if rows, err := g.NumSources(opt.Sources); err == nil {
			wopt.MatrixRows = rows
		}
		// A GPU run leaves the cores idle while the device computes: the
		// file's pages are populated meanwhile. A CPU run needs its cores
		// for the engine: the kernel's own copy costs the least of them
		// (1.9 GB/s a core against 1.1 GB/s copying into the mapping, on
		// a 2-core machine).
		// Where the CSR was built does not say: a GPU run's CSR is built
		// on the CPU while the device opens (a one-stream writer there
		// held R-MAT 16's distance_matrix at 2.5 s of writes on an H100).
		if wopt.MatrixWrites == "" {
			wopt.MatrixWrites = arrowio.MatrixWritesPositional
			if g.BuiltOn() == "gpu" || g.HoldsDevice() {
				wopt.MatrixWrites = arrowio.MatrixWritesPrefill
			}
		}
	}
	if err := checkSpace(c, g, opt, out, format); err != nil { // space.go
		return err
	}
	e.outputs.add(out) // a SIGQUIT removes their temporary files (signals.go)
	e.outputs.add(verticesOut)
	w, err := arrowio.CreateResult(out, schema, wopt)
	if err != nil {
		return usageError{err}
	}
	bar := newProgressOf(e, c, g.NumVertices()) // progress.go: a bar, or lines on a log
	opt.Progress = bar.update
	runStart := time.Now()
	trace.Printf("cli", "output created")
	sum, err := runLayout(e.ctx, g, opt, bopt, w.Write)
	bar.finish()
	running := time.Since(runStart)
	trace.Printf("cli", "run done")
	openTimes := g.DeviceOpenTimes()
	closeStart := time.Now()
	if err == nil {
		// The device is not needed past the run. A process about to exit
		// leaves the context to the exit, which releases it at once
		// (Release still waits for the device's queued work, so that an
		// error of it aborts the output).
		err = g.Release()
	}
	closingDevice := time.Since(closeStart)
	trace.Printf("cli", "device left")
	if err != nil {
		w.Abort()
		return queryError(c, g, err)
	}
	if verticesOut != "" {
		if err := writeVertices(verticesOut, columns, wopt); err != nil {
			w.Abort()
			return err
		}
	}
	if err := w.Close(); err != nil {
		if verticesOut != "" {
			os.Remove(verticesOut)
		}
		return err
	}
	closingOutput, wall := time.Since(closeStart)-closingDevice, time.Since(started)
	trace.Printf("cli", "output closed")
	if !quiet {
		dest := out
		if w.InPeer() {
			dest = "the memory of the process reading it (--result-peer)"
		}
		printSummary(e, sum, g, dest, w.BytesWritten())
	}
	if opt.Log != nil {
		printWallTime(opt.Log, wallTimes{
			wall: wall, startUp: stages.begin.Sub(started), read: stages.read, load: stages.load,
			graph: g.Times(), open: openTimes, openedAtStart: e.device != nil,
			run: running, closeDevice: closingDevice, leftToExit: e.exits, closeOutput: closingOutput,
		})
	}
	return nil
}

// wallTimes are the stages of one run, from Main's start to the output
// closed, for --verbose.
type wallTimes struct {
	wall    time.Duration // the whole
	startUp time.Duration // Main's start to the read: flags, checks
	read    time.Duration // reading the edges (and the vertex table)
	load    time.Duration // pipeline.LoadGraph, waiting for the device included
	graph   pipeline.LoadTimes
	// open splits the device's opening (zero where none was kept);
	// openedAtStart says that it began at Main's start rather than at the
	// read.
	open          pipeline.OpenTimes
	openedAtStart bool
	run           time.Duration // pipeline.Run: computing and writing the rows
	closeDevice   time.Duration // closing the GPU engine, or abandoning it (0 on the CPU)
	leftToExit    bool          // the engine was abandoned to the process exit, not closed
	closeOutput   time.Duration // writing the vertex order, closing the output
}

// printWallTime writes the line of --verbose that splits the wall time
// into its stages; they add up to it, with what falls between them as
// "other". Of a device opened early only the part waited for after the
// read counts; the rest is said as hidden, with where the opening went.
func printWallTime(log io.Writer, t wallTimes) {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	graphOnly := t.load - t.graph.DeviceWait
	device := ""
	if t.graph.DeviceOpen > 0 {
		opened := ""
		switch {
		case t.graph.Early && t.openedAtStart:
			opened = fmt.Sprintf(", begun at start-up; device open overlapped: %s hidden", ms(t.graph.DeviceOpen-t.graph.DeviceWait))
		case t.graph.Early:
			opened = fmt.Sprintf(", beside the read; device open overlapped: %s hidden", ms(t.graph.DeviceOpen-t.graph.DeviceWait))
		}
		split := ""
		if o := t.open; o != (pipeline.OpenTimes{}) {
			split = fmt.Sprintf("; driver %s, context %s, kernels %s, rest %s", ms(o.Driver), ms(o.Context), ms(o.Kernels), ms(o.Rest))
		}
		device = fmt.Sprintf(" + waiting for the device %s (opening it took %s%s%s)", ms(t.graph.DeviceWait), ms(t.graph.DeviceOpen), opened, split)
	}
	csr := ms(t.graph.Build)
	if t.graph.BesideOpen {
		csr += ", on the CPU while waiting for the device"
		// The kernel's plan made after it, still in the wait: its time
		// lies inside the wait (or, where the device opened first, inside
		// the run's wait for it).
		switch {
		case t.graph.PlanAheadUsed:
			csr += fmt.Sprintf("; then the GPU kernel's plan %s, beside the opening too, taken by the run", ms(t.graph.PlanAhead))
		case t.graph.PlanAhead > 0:
			csr += fmt.Sprintf("; then the GPU kernel's plan %s, beside the opening too, not taken: the run planned its own", ms(t.graph.PlanAhead))
		}
	}
	closing := "closing the device"
	if t.leftToExit {
		closing = "leaving the device to the exit"
	}
	other := t.wall - t.startUp - t.read - t.load - t.run - t.closeDevice - t.closeOutput
	fmt.Fprintf(log, "pathctl: wall time %s = start-up %s + reading %s%s + building the graph %s (the CSR %s) + running %s (computing and writing the rows) + %s %s + closing the output %s + other %s\n",
		ms(t.wall), ms(t.startUp), ms(t.read), device, ms(graphOnly), csr, ms(t.run), closing, ms(t.closeDevice), ms(t.closeOutput), ms(max(other, 0)))
}

// checkOutputPaths refuses, before anything is read, an output that would
// overwrite a file the run reads: -o and the matrix's vertex file (given
// with --vertices-out, or its default beside -o) against the edges,
// --vertices, --sources-file and --targets-file, and against each other.
// Paths are compared as files (links and relative names resolved), so
// `-o ./edges.csv` and a link to edges.csv are caught too.
func checkOutputPaths(c *cli.Context, layout arrowio.Layout, out string) error {
	type input struct{ path, what string }
	var inputs []input
	if in := c.Args().First(); in != "" && in != "-" {
		inputs = append(inputs, input{in, "the input file"})
	}
	for _, flag := range []string{"vertices", "sources-file", "targets-file"} {
		if p := c.String(flag); p != "" && p != "-" {
			inputs = append(inputs, input{p, "the --" + flag + " file"})
		}
	}
	verticesOut, what := c.String("vertices-out"), "--vertices-out "+c.String("vertices-out")
	if verticesOut == "" && layout == arrowio.LayoutMatrix && out != "-" && !arrowio.WrittenInPlace(out) {
		verticesOut = defaultVerticesPath(out)
		what = "the matrix's vertex order, " + verticesOut + " by default,"
	}
	for _, in := range inputs {
		if out != "-" && sameFile(in.path, out) {
			return usagef("-o %s is %s; write the result elsewhere", out, in.what)
		}
		if verticesOut == "" || !sameFile(in.path, verticesOut) {
			continue
		}
		if c.String("vertices-out") == "" {
			return usagef("%s would overwrite %s; give --vertices-out another file", what, in.what)
		}
		return usagef("%s is %s; write the vertex order elsewhere", what, in.what)
	}
	if verticesOut != "" && out != "-" && sameFile(out, verticesOut) {
		return usagef("--vertices-out %s is the output file (-o); give the vertex order a file of its own", verticesOut)
	}
	return nil
}

// sameFile reports whether paths a and b name one file: one existing file
// (os.SameFile, which sees through links), or one absolute path not yet
// created. Devices and FIFOs are never the same as anything: writing
// /dev/null twice loses nothing.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return fa.Mode().IsRegular() && os.SameFile(fa, fb)
	}
	absA, err1 := filepath.Abs(a)
	absB, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && absA == absB
}

// defaultVerticesPath turns out.arrow into out.vertices.arrow.
func defaultVerticesPath(out string) string {
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + ".vertices" + ext
}

func writeVertices(path string, columns *arrowio.Vertices, wopt arrowio.WriteOptions) error {
	rec := arrowio.VerticesRecord(columns, nil)
	defer rec.Release()
	w, err := arrowio.CreateResult(path, rec.Schema(), wopt)
	if err != nil {
		return err
	}
	if err := w.Write(rec); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

func printSummary(e *env, s *pipeline.Summary, g *pipeline.Graph, out string, bytes int64) {
	secs := s.Elapsed.Seconds()
	rate := float64(s.Pairs) / max(secs, 1e-9)
	dest := out
	if out == "-" {
		dest = "stdout"
	}
	fmt.Fprintf(e.stderr, "pathctl: %d sources × %d vertices (%d arcs): %d pairs in %s (%s pairs/s), engine %s, algorithm %s; %d rows, %s written to %s\n",
		s.Sources, g.NumVertices(), g.CSR.NumEdges(), s.Pairs, s.Elapsed.Round(time.Millisecond), humanCount(rate),
		s.Engine, s.Algorithm, s.Rows, gen.HumanBytes(bytes), dest)
}

func humanCount(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2fG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// resultPeer is the socket --result-peer names. The descriptor is checked
// before an os.File takes it (whose finalizer would close it).
func resultPeer(fd int) (*os.File, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, usagef("--result-peer %d: not an open file descriptor", fd)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		return nil, usagef("--result-peer %d: not a socket", fd)
	}
	return os.NewFile(uintptr(fd), "result-peer"), nil
}
