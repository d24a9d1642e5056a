package main

// pathctl run --dry-run: the cost before the work. The graph is read (the
// vertices are counted from it) but nothing is computed and nothing is
// written, no temporary file either.

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/pipeline"
)

// dryRunFlags are --dry-run, --force and --progress.
func dryRunFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "read the graph and print what the run would do (vertices, sources, targets, rows, the output's estimated size, the engine and algorithm), computing and writing nothing"},
		&cli.BoolFlag{Name: "force", Usage: "write the output even where its estimated size is above the free space of its file system (refused otherwise, exit 3)"},
		dryRunJSONFlag(),    // dryrun_json.go
		progressEveryFlag(), // progress.go
		&cli.BoolFlag{Name: "progress", Usage: "where stderr is no terminal (a log), print a progress line at most every 5 s: percentage, sources done, elapsed and remaining time (also with -v; a terminal shows a bar)"},
	}
}

// executeDryRun is execute for --dry-run: it reads the graph on the CPU
// (no device is opened), checks the request as the run would (an unknown
// source, paths above --max-output: the same errors) and prints the plan
// on stdout.
func executeDryRun(e *env, c *cli.Context, opt pipeline.Options, out, format string) error {
	if err := checkOutputPaths(c, opt.Layout, out); err != nil {
		return err
	}
	g, err := readGraph(e, c, pipeline.LoadOptions{Engine: "cpu", Notice: opt.Notice})
	if err != nil {
		return err
	}
	defer g.Close()
	if err := readIndexFlag(c, g, &opt, nil); err != nil {
		return err
	}
	q, err := pipeline.Prepare(g, opt)
	if err != nil {
		return queryError(c, g, err)
	}
	engine, algo := q.Plan()
	est := q.Estimate()
	var dataset string // -o DIR/: its files (dataset_space.go)
	if isDatasetOutput(out) {
		if dataset, err = datasetDryRun(c, q.Options(), est, out); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		return printDryRunJSON(e.stdout, g, est, engine, algo, out, format, freeSpace) // dryrun_json.go
	}
	printDryRun(e.stdout, c, g, est, engine, algo, out, format, freeSpace)
	if dataset != "" {
		fmt.Fprintln(e.stdout, dataset)
	}
	return nil
}

// printDryRun writes the plan of a dry run, one "name: value" line each.
func printDryRun(w io.Writer, c *cli.Context, g *pipeline.Graph, est pipeline.Estimate, engine, algo, out, format string, free func(string) (int64, error)) {
	every := func(count int, given bool) string {
		if given {
			return fmt.Sprint(count)
		}
		return fmt.Sprintf("%d (every vertex)", count)
	}
	fmt.Fprintf(w, "pathctl: dry run: nothing computed, nothing written\n")
	fmt.Fprintf(w, "vertices:   %d (%d arcs)\n", est.Vertices, g.CSR.NumEdges())
	sources := every(est.Sources, c.String("sources") != "" || c.String("sources-file") != "" || c.IsSet("source") || c.IsSet("k"))
	if c.IsSet("k") && est.Sources < est.Vertices { // the betweenness sample
		sources = fmt.Sprintf("%d (sampled with --seed %d)", est.Sources, c.Uint64("seed"))
	}
	fmt.Fprintf(w, "sources:    %s\n", sources)
	fmt.Fprintf(w, "targets:    %s\n", every(est.Targets, c.String("targets") != "" || c.String("targets-file") != "" || c.IsSet("k-nearest")))
	rows := fmt.Sprintf("%d rows", est.Rows)
	if !est.Exact {
		rows = fmt.Sprintf("at most %d rows (every pair reachable: unreachable pairs are left out)", est.Rows)
	}
	values := "distances"
	if est.Layout.IsBetweenness() {
		values = "values"
	}
	fmt.Fprintf(w, "layout:     %s, %s, %s %s\n", est.Layout, rows, est.DistType, values)
	dest := out
	if out == "-" {
		dest = "stdout"
	}
	need := outputBytes(est, out, format)
	size := fmt.Sprintf("about %s to %s", gen.HumanBytes(need), dest)
	if need == est.CSVBytes && need != est.Bytes {
		size += " (CSV, each number at its widest; as Arrow IPC " + gen.HumanBytes(est.Bytes) + ")"
	}
	if dir := spaceDir(out); dir != "" {
		if avail, err := free(dir); err == nil {
			size += fmt.Sprintf("; %s free there", gen.HumanBytes(avail))
			if need > avail {
				size += ": the run would be refused (exit 3) without --force"
			}
		}
	}
	fmt.Fprintf(w, "output:     %s\n", size)
	fmt.Fprintf(w, "engine:     %s\n", engine)
	fmt.Fprintf(w, "algorithm:  %s\n", algo)
	fmt.Fprintf(w, "time:       no estimate (no past figure to scale from: BENCHMARKS.md gives measured rates)\n")
}
