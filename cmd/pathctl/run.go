// The run, sssp and bfs commands: their flags put together, the sources
// they read, and execute, which runs one request and writes its result.

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/trace"
	"github.com/pathctl/pathctl/pipeline"
)

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
		Query:     pipeline.Query{Algorithm: params.algo, Layout: layout, Sources: sources, WithPredecessors: c.Bool("with-predecessors"), Delta: params.delta},
		Resources: pipeline.Resources{Engine: c.String("engine"), Threads: params.threads, MemBudget: params.mem, MaxBlock: params.maxBlock, Devices: params.devices, Tune: params.tune},
	}
	if err := applyQueryFlags(c, &opt); err != nil {
		return err
	}
	opt.Betweenness = bopt
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
		return executeDataset(e, c, opt, out) // -o DIR/: dataset.go
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
	index := startIndexFlag(c, opt) // decoded beside the graph's reading
	g, err := readGraphTimed(e, c, pipeline.LoadOptions{Engine: loadEngine(opt.Engine, layout), Sources: len(sources), Log: opt.Log, Notice: opt.Notice, Devices: opt.Devices,
		Algorithm: opt.Algorithm, Tune: opt.Tune}, &stages)
	if err != nil {
		return err
	}
	defer g.Close() // on the error paths; closed below otherwise
	if err := readIndexFlag(c, g, &opt, index); err != nil {
		return err
	}
	var bar *progress // progress.go: a bar, or lines on a log, made once the output is created
	opt.Progress = func(done, total int64) { bar.update(done, total) }
	q, err := pipeline.Prepare(g, opt)
	if err != nil {
		return queryError(c, g, err)
	}
	schema, columns := q.Schema(), q.Columns()
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
		wopt.MatrixRows = len(q.Sources())
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
	if err := checkSpace(c, q, out, format); err != nil { // space.go
		return err
	}
	e.outputs.add(out) // a SIGQUIT removes their temporary files (signals.go)
	e.outputs.add(verticesOut)
	w, err := arrowio.CreateResult(out, schema, wopt)
	if err != nil {
		return usageError{err}
	}
	bar = newProgressOf(e, c, g.NumVertices())
	runStart := time.Now()
	trace.Printf("cli", "output created")
	sum, err := q.Run(e.ctx, w.Write)
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
			graph: g.Times(), open: openTimes, openedAtStart: e.devices.AtStart(),
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
	open          graph.GPUOpenTimes
	openedAtStart bool
	run           time.Duration // Prepared.Run: computing and writing the rows
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
		if o := t.open; o != (graph.GPUOpenTimes{}) {
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
