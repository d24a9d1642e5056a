// The flag groups of run, sssp and bfs (inputFlags, computeFlags,
// outputFlags, --tune) and the checks that turn the compute flags into
// computeParams.

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
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

// tuneFlag is --tune, the GPU engine's tuning (pipeline.Resources.Tune).
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
		&cli.StringFlag{Name: "layout", Value: "pairs", Usage: "pairs (source, target, distance), matrix (one row of n distances per source), stats (centralities per source), betweenness (one row per vertex) or edge-betweenness (one row per edge)"},
		&cli.StringFlag{Name: "format", Usage: "arrow (IPC file), arrows (IPC stream), parquet or csv (default: from the output's extension)"},
		&cli.StringFlag{Name: "compression", Usage: "none, zstd or lz4 (default: none for Arrow IPC, zstd for Parquet)"},
		&cli.BoolFlag{Name: "with-predecessors", Usage: "add a predecessor column to the pairs layout"},
		&cli.StringFlag{Name: "matrix-type", Usage: "the matrix layout's value type: float (float32 where every distance is exact in it, else float64; unreachable +Inf), int32, int64, float32 or float64, refused where it cannot hold every distance exactly (default: the distance type, unreachable null for integers)"},
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
