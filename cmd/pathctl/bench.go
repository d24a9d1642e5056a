package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/internal/benchsuite"
	"github.com/pathctl/pathctl/pipeline"
)

func benchCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "time the engines and algorithms on the benchmark suite, checked against a serial oracle",
		Description: "Named graphs (" + benchsuite.Names() + ") are generated with the seed;\n" +
			"any other entry of --graphs is an edge file. Every row is checked against the serial\n" +
			"oracle on --check sampled sources; a mismatch fails the command.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "graphs", Value: benchsuite.DefaultGraphs, Usage: "comma-separated suite names or edge files"},
			&cli.StringFlag{Name: "engine", Value: "auto", Usage: "auto (GPU rows where a GPU is usable, and CPU rows), gpu, cpu, or gpu,cpu"},
			&cli.StringFlag{Name: "algos", Value: benchsuite.DefaultAlgos, Usage: "algorithms of the GPU rows (without a GPU row a note says so; --cpu-algos chooses the CPU rows')"},
			&cli.StringFlag{Name: "cpu-algos", Value: "auto", Usage: "algorithms of the CPU rows"},
			&cli.StringFlag{Name: "layout", Value: "stats", Usage: "stats or matrix: the layout built (and discarded) by the timed runs"},
			&cli.IntFlag{Name: "sample", Usage: "run this many sampled sources and extrapolate (default: every source; rmat20's GPU rows 8192)"},
			&cli.IntFlag{Name: "cpu-sample", Value: 1024, Usage: "sources of the CPU rows, extrapolated (0: every source)"},
			&cli.IntFlag{Name: "check", Value: 4, Usage: "sources per row compared with the serial oracle"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the generated graphs and of the source samples"},
			&cli.BoolFlag{Name: "undirected", Usage: "read edge files as undirected (suite graphs always are)"},
			&cli.StringFlag{Name: "src-col", Value: "src", Usage: "source id column of edge files, as run's"},
			&cli.StringFlag{Name: "dst-col", Value: "dst", Usage: "target id column of edge files, as run's"},
			&cli.StringFlag{Name: "dist-type", Usage: "distance type of every graph, int32, int64, float32 or float64, as run's --dist-type (default: the narrowest that holds every distance)"},
			&cli.StringFlag{Name: "save-graphs", Usage: "write each generated graph to DIR/NAME.parquet (the peers of bench/bench_gpu.py read them)"},
			&cli.StringFlag{Name: "disk-graph", Usage: "graph whose matrix is written to an Arrow file for the disk ratio; none to skip (default: rmat16 where a GPU is usable and rmat16 is listed)"},
			&cli.IntFlag{Name: "disk-rounds", Value: 2, Usage: "rounds of the disk measurement, each an Arrow file then a plain write; the ratio compares the best of each"},
			&cli.StringFlag{Name: "disk-dir", Usage: "directory of the disk measurement (default: the directory of --out, else the temporary directory)"},
			&cli.IntFlag{Name: "threads", Usage: "CPU threads (default: every core)"},
			&cli.StringFlag{Name: "mem", Aliases: []string{"gpu-mem"}, Usage: "memory budget of the blocks in flight, in bytes or with a unit: 512MiB, 8GB (default as for run)"},
			&cli.StringFlag{Name: "devices", Value: "all", Usage: "GPUs of the GPU rows: all, or ordinals such as 0,1 (--mem applies to each)"},
			tuneFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON instead of the markdown table"},
			&cli.StringFlag{Name: "out", Usage: "also write the markdown table to this file"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines on stderr"},
		},
		Action: func(c *cli.Context) error {
			p, err := benchParams(c)
			if err != nil {
				return err
			}
			p.Notice = e.stderr
			if !c.Bool("quiet") {
				p.Log = e.stderr
			}
			rep, err := benchsuite.Run(e.ctx, p)
			if err != nil {
				return benchError(err)
			}
			text := benchsuite.Markdown(rep)
			if out := c.String("out"); out != "" {
				if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
					return fmt.Errorf("bench: --out: %w", err)
				}
			}
			if c.Bool("json") {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			_, err = io.WriteString(e.stdout, text)
			return err
		},
	}
}

// benchParams translates the flags of pathctl bench; benchsuite.Run checks
// the rest.
func benchParams(c *cli.Context) (benchsuite.Params, error) {
	p := benchsuite.Params{
		Graphs: benchsuite.SplitList(c.String("graphs")), Engines: benchsuite.SplitList(c.String("engine")),
		Sample: c.Int("sample"), CPUSample: c.Int("cpu-sample"), Check: c.Int("check"),
		Seed: c.Uint64("seed"), Undirected: c.Bool("undirected"), SaveDir: c.String("save-graphs"),
		SrcCol: c.String("src-col"), DstCol: c.String("dst-col"), AlgosGiven: c.IsSet("algos"),
		DiskGraph: c.String("disk-graph"), DiskDir: c.String("disk-dir"), DiskRounds: c.Int("disk-rounds"),
		Threads: c.Int("threads"),
		Version: version, Command: strings.Join(append([]string{"pathctl"}, os.Args[1:]...), " "),
	}
	if c.NArg() > 0 {
		return p, usagef("bench takes no arguments (name graphs with --graphs), got %q", c.Args().First())
	}
	var err error
	if p.MemBudget, err = sizeFlag(c, "mem"); err != nil {
		return p, err
	}
	if p.Devices, err = pipeline.ParseDevices(c.String("devices")); err != nil {
		return p, usagef("--devices %s: want all or device ordinals such as 0,1", c.String("devices"))
	}
	if p.Tune, err = readTune(c); err != nil {
		return p, err
	}
	if p.Algos, err = benchsuite.ParseAlgorithms(c.String("algos")); err != nil {
		return p, usagef("--algos: %v", err)
	}
	if c.IsSet("algos") && !slices.ContainsFunc(p.Engines, func(e string) bool { return e != "cpu" }) {
		return p, usagef("--algos chooses the algorithms of the GPU rows, and --engine %s runs none; use --cpu-algos", c.String("engine"))
	}
	if p.CPUAlgos, err = benchsuite.ParseAlgorithms(c.String("cpu-algos")); err != nil {
		return p, usagef("--cpu-algos: %v", err)
	}
	if p.Layout, err = arrowio.ParseLayout(c.String("layout")); err != nil {
		return p, usagef("--layout: %v", err)
	}
	if s := c.String("dist-type"); s != "" {
		if p.DistType, err = pipeline.ParseDistType(s); err != nil {
			return p, usagef("--dist-type: %v", err)
		}
	}
	if out := c.String("out"); out != "" {
		// An edge file of --graphs would be replaced by the table.
		for _, name := range p.Graphs {
			if _, err := os.Stat(name); err == nil && sameFile(name, out) {
				return p, usagef("--out %s is the edge file %s of --graphs; write the table elsewhere", out, name)
			}
		}
	}
	if p.DiskDir == "" && c.String("out") != "" {
		p.DiskDir = filepath.Dir(c.String("out"))
	}
	return p, nil
}

// benchError gives the suite's errors the exit status of their kind.
func benchError(err error) error {
	var pe *benchsuite.ParamsError
	var ie *benchsuite.InputError
	switch {
	case errors.As(err, &pe):
		return usageError{err}
	case errors.As(err, &ie):
		return inputError{err}
	}
	return err
}
