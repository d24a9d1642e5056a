// Reading EDGES into a graph for run, sssp and bfs: loadGraph, readGraph
// and its timed stages, and the size of the edge file.

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/internal/trace"
	"github.com/pathctl/pathctl/pipeline"
)

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
// opens beside the read (earlyDevices.Begin).
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
	if pipeline.OpensEarly(build, inputBytes(path)) {
		e.devices.Begin(build.Devices)
	}
	build.Device, build.OtherDevices, build.ExitAfter = e.devices.First(), e.devices.Others(), e.exits
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
