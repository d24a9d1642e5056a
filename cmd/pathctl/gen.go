package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
)

func genCommand(e *env) *cli.Command {
	common := []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "output file: .parquet, .arrow, .arrows, .csv, .tsv, or .gr (DIMACS, ids from 1)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed; the same seed gives the same file on any machine"},
		&cli.StringFlag{Name: "weights", Value: "1:100", Usage: "integer weights drawn uniformly from MIN:MAX"},
		&cli.BoolFlag{Name: "float-weights", Usage: "float64 weights drawn uniformly from the --weights range"},
		&cli.BoolFlag{Name: "unweighted", Usage: "no weight column"},
		&cli.StringFlag{Name: "format", Usage: "output format: parquet, arrow, arrows, csv, tsv or gr (default: from the extension)"},
	}
	sub := func(name, usage string, flags []cli.Flag, make func(c *cli.Context, opts []gen.Option) (*gen.EdgeList, error)) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, Flags: append(flags, common...),
			Action: func(c *cli.Context) error {
				opts, err := weightOptions(c)
				if err != nil {
					return err
				}
				if err := checkOutputDir("-o", c.String("output")); err != nil {
					return err
				}
				if _, err := arrowio.EdgeOutputFormat(c.String("output"), arrowio.WriteOptions{Format: c.String("format")}); err != nil {
					return usageError{err}
				}
				if c.Bool("float-weights") && isDIMACS(c.String("output"), c.String("format")) {
					return usagef("--float-weights: DIMACS (.gr) holds integer weights; write another format or leave the flag out")
				}
				if limit := genMemoryLimit(c.String("output"), c.String("format")); limit > 0 {
					opts = append(opts, gen.WithMemoryLimit(limit))
				}
				edges, err := make(c, opts)
				if errors.Is(err, gen.ErrTooLarge) {
					return inputError{fmt.Errorf("%w (of the %s available here); make the graph smaller", err, gen.HumanBytes(availableMemory()))}
				}
				if err != nil {
					return usageError{err}
				}
				return writeEdgeList(e, c, edges)
			},
		}
	}
	return &cli.Command{
		Name:  "gen",
		Usage: "write a seeded synthetic graph (R-MAT, 2-D grid, road-like grid, uniform random)",
		Subcommands: []*cli.Command{
			sub("rmat", "R-MAT with the Graph500 parameters (a=0.57, b=0.19, c=0.19): edge-factor·2^scale edges between 2^scale vertex ids (ids without an edge are not in the file)",
				[]cli.Flag{
					&cli.IntFlag{Name: "scale", Value: 14, Usage: "log2 of the vertex count"},
					&cli.IntFlag{Name: "edge-factor", Value: 16, Usage: "edges per vertex"},
					&cli.BoolFlag{Name: "undirected-pairs", Usage: "emit every edge in both directions"},
				},
				func(c *cli.Context, opts []gen.Option) (*gen.EdgeList, error) {
					if err := atLeast(c, 1, "scale", "edge-factor"); err != nil {
						return nil, err
					}
					if c.Bool("undirected-pairs") {
						opts = append(opts, gen.WithUndirectedPairs())
					}
					return gen.RMAT(c.Int("scale"), c.Int("edge-factor"), c.Uint64("seed"), opts...)
				}),
			sub("grid", "weighted 2-D grid, 4 neighbours, both directions with the same weight (road-like, high diameter)",
				[]cli.Flag{
					&cli.IntFlag{Name: "rows", Value: 128, Usage: "rows of the grid, >= 1"},
					&cli.IntFlag{Name: "cols", Value: 128, Usage: "columns of the grid, >= 1"},
				},
				func(c *cli.Context, opts []gen.Option) (*gen.EdgeList, error) {
					if err := atLeast(c, 1, "rows", "cols"); err != nil {
						return nil, err
					}
					return gen.Grid(c.Int("rows"), c.Int("cols"), c.Uint64("seed"), opts...)
				}),
			sub("road", "road-like grid: local streets, arterials every 8 blocks, highways every 32, weighted by travel time in tenths of a second (--float-weights: seconds), --oneway of the local street segments one-way; strongly connected",
				[]cli.Flag{
					&cli.IntFlag{Name: "rows", Value: 128, Usage: "rows of intersections, >= 1"},
					&cli.IntFlag{Name: "cols", Value: 128, Usage: "columns of intersections, >= 1"},
					&cli.Float64Flag{Name: "oneway", Usage: "`FRACTION` (0 to 1) of the local street segments that are one-way (default: 0, every street two-way)"},
				},
				func(c *cli.Context, opts []gen.Option) (*gen.EdgeList, error) {
					if err := atLeast(c, 1, "rows", "cols"); err != nil {
						return nil, err
					}
					if c.IsSet("weights") {
						return nil, usagef("--weights: gen road's weights are travel times; leave it out (or give --float-weights or --unweighted)")
					}
					if f := c.Float64("oneway"); !(f >= 0 && f <= 1) {
						return nil, usagef("--oneway %v: want a fraction from 0 to 1", f)
					}
					return gen.Road(c.Int("rows"), c.Int("cols"), c.Float64("oneway"), c.Uint64("seed"), opts...)
				}),
			sub("uniform", "uniform random arcs: vertices × degree arcs between uniformly drawn endpoints",
				[]cli.Flag{
					&cli.Int64Flag{Name: "vertices", Value: 16384, Usage: "vertex ids to draw endpoints from, >= 1"},
					&cli.IntFlag{Name: "degree", Value: 16, Usage: "average out-degree, >= 1"},
					&cli.BoolFlag{Name: "undirected-pairs", Usage: "emit every edge in both directions"},
				},
				func(c *cli.Context, opts []gen.Option) (*gen.EdgeList, error) {
					if err := atLeast(c, 1, "vertices", "degree"); err != nil {
						return nil, err
					}
					if c.Bool("undirected-pairs") {
						opts = append(opts, gen.WithUndirectedPairs())
					}
					return gen.Uniform(c.Int64("vertices"), c.Int("degree"), c.Uint64("seed"), opts...)
				}),
		},
	}
}

// atLeast refuses a size flag below lo.
func atLeast(c *cli.Context, lo int64, names ...string) error {
	for _, name := range names {
		if v := c.Int64(name); v < lo {
			return usagef("--%s %d: want %d or more", name, v, lo)
		}
	}
	return nil
}

// genMemoryLimit is the memory the generated columns may take: half of the
// available memory, the writer's buffers and the Go heap's headroom taking
// the rest (a third for .gr output, whose writer copies the ids). 0 when
// the available memory is unknown.
func genMemoryLimit(out, format string) int64 {
	avail := availableMemory()
	if strings.EqualFold(format, "gr") || strings.EqualFold(format, "dimacs") || strings.HasSuffix(strings.ToLower(out), ".gr") {
		return avail / 3
	}
	return avail / 2
}

// availableMemory is the memory this process may still take, in bytes:
// MemAvailable of /proc/meminfo, lowered to the room left under a cgroup
// v2 memory limit; 0 where neither is known.
func availableMemory() int64 {
	var avail int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err == nil {
					avail = kb << 10
				}
			}
		}
	}
	limit, err1 := readCgroupBytes("/sys/fs/cgroup/memory.max")
	used, err2 := readCgroupBytes("/sys/fs/cgroup/memory.current")
	if err1 == nil && err2 == nil && limit > used && (avail == 0 || limit-used < avail) {
		avail = limit - used
	}
	return avail
}

// readCgroupBytes reads a cgroup byte count; "max" (no limit) is an error.
func readCgroupBytes(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

func weightOptions(c *cli.Context) ([]gen.Option, error) {
	if c.Bool("unweighted") {
		return []gen.Option{gen.Unweighted()}, nil
	}
	lo, hi, ok := strings.Cut(c.String("weights"), ":")
	if !ok {
		return nil, usagef("--weights %q: want MIN:MAX", c.String("weights"))
	}
	if c.Bool("float-weights") {
		a, err1 := strconv.ParseFloat(lo, 64)
		b, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil || a > b {
			return nil, usagef("--weights %q: want MIN:MAX with MIN <= MAX", c.String("weights"))
		}
		return []gen.Option{gen.WithFloatWeights(a, b)}, nil
	}
	a, err1 := strconv.ParseInt(lo, 10, 64)
	b, err2 := strconv.ParseInt(hi, 10, 64)
	if err1 != nil || err2 != nil || a > b {
		return nil, usagef("--weights %q: want integers MIN:MAX with MIN <= MAX", c.String("weights"))
	}
	return []gen.Option{gen.WithWeights(a, b)}, nil
}

// writeEdgeList writes the generated columns src, dst [, weight]; DIMACS
// files number the vertices from 1, so their ids are one above the
// generated ones.
func writeEdgeList(e *env, c *cli.Context, edges *gen.EdgeList) error {
	dimacs := isDIMACS(c.String("output"), c.String("format"))
	used := usedVertices(edges, dimacs)
	if dimacs {
		for _, ids := range [][]int64{edges.Src, edges.Dst} {
			for i := range ids {
				ids[i]++
			}
		}
	}
	mem := memory.DefaultAllocator
	src := array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(edges.Src),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(edges.Src))}, nil, 0, 0))
	defer src.Release()
	dst := array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(edges.Dst),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(edges.Dst))}, nil, 0, 0))
	defer dst.Release()
	var weight arrow.Array
	switch {
	case edges.Weights != nil:
		weight = array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(edges.Weights),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(edges.Weights))}, nil, 0, 0))
	case edges.FloatWeights != nil:
		weight = array.NewFloat64Data(array.NewData(arrow.PrimitiveTypes.Float64, len(edges.FloatWeights),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(edges.FloatWeights))}, nil, 0, 0))
	}
	if weight != nil {
		defer weight.Release()
	}
	out := c.String("output")
	e.outputs.add(out) // a SIGQUIT removes its temporary file (signals.go)
	if err := arrowio.WriteEdges(out, src, dst, weight, arrowio.WriteOptions{Format: c.String("format"), Allocator: mem, Stdout: e.stdout}); err != nil {
		return err
	}
	if dimacs {
		// Every id from 1 to the largest is a vertex of a DIMACS graph.
		fmt.Fprintf(e.stderr, "pathctl: wrote %d vertices, %d edges to %s (DIMACS: ids 1 to %d, one above each generated id)\n", used, edges.Len(), out, used)
		return nil
	}
	fmt.Fprintf(e.stderr, "pathctl: wrote %d vertices, %d edges to %s", used, edges.Len(), out)
	if missing := edges.NumVertices - used; missing > 0 {
		fmt.Fprintf(e.stderr, " (%d of the %d generated ids have no edge, so the file does not hold them)", missing, edges.NumVertices)
	}
	fmt.Fprintln(e.stderr)
	return nil
}

// usedVertices counts the ids that appear in the edges (ids are 0 to
// n-1), and, for DIMACS, the largest id plus one.
func usedVertices(edges *gen.EdgeList, dimacs bool) int64 {
	if dimacs {
		var top int64 = -1
		for i := range edges.Src {
			top = max(top, edges.Src[i], edges.Dst[i])
		}
		return top + 1
	}
	seen := make([]bool, edges.NumVertices)
	var n int64
	for _, ids := range [][]int64{edges.Src, edges.Dst} {
		for _, v := range ids {
			if !seen[v] {
				seen[v] = true
				n++
			}
		}
	}
	return n
}

// isDIMACS reports whether gen writes out as DIMACS.
func isDIMACS(out, format string) bool {
	f, err := arrowio.EdgeOutputFormat(out, arrowio.WriteOptions{Format: format})
	return err == nil && f == arrowio.FormatDIMACS
}
