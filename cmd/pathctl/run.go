package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// inputFlags read and shape the edge table.
func inputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "input-format", Usage: "input format: parquet, arrow, arrows, csv, tsv or gr (default: from the file extension; required for -)"},
		&cli.StringFlag{Name: "src-col", Value: "src", Usage: "source id column"},
		&cli.StringFlag{Name: "dst-col", Value: "dst", Usage: "target id column"},
		&cli.StringFlag{Name: "weight-col", Usage: "weight column (default: weight, if present; none means hop counts)"},
		&cli.BoolFlag{Name: "unweighted", Usage: "ignore any weight column: distances count edges"},
		&cli.BoolFlag{Name: "undirected", Usage: "treat every row as an edge in both directions"},
		&cli.StringFlag{Name: "dist-type", Usage: "distance type int32, int64, float32 or float64 (default: the narrowest that holds every distance)"},
	}
}

// computeFlags choose what to compute and where.
func computeFlags(defaultAlgo graph.Algorithm) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "algo", Value: string(defaultAlgo), Usage: "algorithm: dijkstra, delta, edge, bfs, bfs-level, bellman-ford or auto"},
		&cli.StringFlag{Name: "engine", Value: "auto", Usage: "engine: auto (GPU where usable, else CPU), cpu or gpu"},
		&cli.Float64Flag{Name: "delta", Usage: "bucket width of --algo delta (default: chosen from the weights)"},
		&cli.IntFlag{Name: "threads", Usage: "CPU threads (default: every core)"},
		&cli.Int64Flag{Name: "mem", Aliases: []string{"gpu-mem"}, Usage: "memory budget in bytes for the source blocks in flight (default: 1 GiB on the CPU, 80% of the GPU's free memory, at most 8 GiB, on a GPU)"},
		&cli.IntFlag{Name: "max-block", Usage: "sources per block at most (default: a sixteenth of the sources, or as many as the memory budget holds for the stats layout on a GPU)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print the engine, algorithm and block plan chosen"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"},
	}
}

// outputFlags choose the result layout and file.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "output file; - writes an Arrow IPC stream to stdout"},
		&cli.StringFlag{Name: "layout", Value: "pairs", Usage: "pairs (source, target, distance), matrix (one row of n distances per source) or stats (centralities per source)"},
		&cli.StringFlag{Name: "format", Usage: "arrow (IPC file), arrows (IPC stream), parquet or csv (default: from the output's extension)"},
		&cli.StringFlag{Name: "compression", Usage: "none, zstd or lz4 (default: none for Arrow IPC, zstd for Parquet)"},
		&cli.BoolFlag{Name: "with-predecessors", Usage: "add a predecessor column to the pairs layout"},
		&cli.StringFlag{Name: "vertices-out", Usage: "where the matrix layout writes its vertex order (default: <output>.vertices.<ext>)"},
	}
}

func runCommand(e *env) *cli.Command {
	flags := append(inputFlags(), computeFlags(graph.Auto)...)
	flags = append(flags, outputFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "sources", Usage: "comma-separated source ids (default: every vertex)"},
		&cli.StringFlag{Name: "sources-file", Usage: "file of source ids, one per line"},
	)
	flags = append(flags, queryFlags()...)
	return &cli.Command{
		Name:      "run",
		Usage:     "shortest paths from every source (or --sources) to every vertex",
		ArgsUsage: "EDGES",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			sources, err := parseSources(c.String("sources"), c.String("sources-file"))
			if err != nil {
				return err
			}
			return execute(e, c, sources)
		},
	}
}

func ssspCommand(e *env, name, usage string, algo graph.Algorithm) *cli.Command {
	flags := append(inputFlags(), computeFlags(algo)...)
	flags = append(flags, outputFlags()...)
	flags = append(flags, &cli.StringFlag{Name: "source", Aliases: []string{"s"}, Required: true, Usage: "the source vertex id"})
	flags = append(flags, queryFlags()...)
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

func parseSources(list, file string) ([]string, error) {
	return parseIDs("sources", list, file)
}

// parseIDs reads the ids of --NAME (comma-separated) and --NAME-file (one
// per line).
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
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); s != "" {
				ids = append(ids, s)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, usagef("--%s-file %s: %v", name, file, err)
		}
		if ids == nil {
			return nil, usagef("--%s-file %s names no id", name, file)
		}
	}
	return ids, nil
}

// loadGraph reads EDGES and builds its CSR on the CPU as the input flags
// say.
func loadGraph(e *env, c *cli.Context) (*pipeline.Graph, error) {
	return readGraph(e, c, pipeline.LoadOptions{})
}

// readGraph reads EDGES and builds its CSR as the input flags and build
// say (where it is built, what to log). Close the graph when done.
func readGraph(e *env, c *cli.Context, build pipeline.LoadOptions) (*pipeline.Graph, error) {
	if c.NArg() != 1 {
		return nil, usagef("%s needs exactly one EDGES file (or - for stdin), got %d arguments", c.Command.Name, c.NArg())
	}
	path := c.Args().First()
	ropt := arrowio.ReadOptions{
		Format: c.String("input-format"), SrcCol: c.String("src-col"), DstCol: c.String("dst-col"),
		WeightCol: c.String("weight-col"), Unweighted: c.Bool("unweighted"),
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
	var dt graph.DistType
	if s := c.String("dist-type"); s != "" {
		if dt, err = graph.ParseDistType(s); err != nil {
			return nil, usagef("--dist-type: %v", err)
		}
	}
	build.Undirected, build.DistType = c.Bool("undirected"), dt
	g, err := pipeline.LoadGraph(tbl, build)
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

// execute runs one request from the flags of run, sssp or bfs and writes
// the result atomically.
func execute(e *env, c *cli.Context, sources []string) error {
	algo, err := graph.ParseAlgorithm(c.String("algo"))
	if err != nil {
		return usagef("--algo: %v", err)
	}
	layout, err := arrowio.ParseLayout(c.String("layout"))
	if err != nil {
		return usagef("--layout: %v", err)
	}
	out := c.String("output")
	format := c.String("format")
	if out == "-" && e.stdoutIsTTY && format != "csv" {
		return usagef("refusing to write Arrow binary to a terminal: give -o FILE (.arrow, .parquet, .csv) or --format csv")
	}
	quiet := c.Bool("quiet")
	opt := pipeline.Options{
		Algorithm: algo, Engine: c.String("engine"), Layout: layout, Sources: sources,
		WithPredecessors: c.Bool("with-predecessors"), Delta: c.Float64("delta"),
		Threads: c.Int("threads"), MemBudget: c.Int64("mem"), MaxBlock: c.Int("max-block"),
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
	// The CSR is built where the run will be: on the GPU for --engine gpu,
	// and for auto where a GPU is usable and the sources are many enough.
	g, err := readGraph(e, c, pipeline.LoadOptions{Engine: opt.Engine, Sources: len(sources), Log: opt.Log, Notice: opt.Notice})
	if err != nil {
		return err
	}
	defer g.Close() // on the error paths; closed below otherwise
	schema, err := pipeline.Schema(g, opt)
	if err != nil {
		return queryError(err)
	}
	columns, err := pipeline.Columns(g, opt)
	if err != nil {
		return queryError(err)
	}
	wopt := arrowio.WriteOptions{Format: format, Compression: c.String("compression"), Stdout: e.stdout, Vertices: columns}

	// The matrix layout names its vertex order in a file beside it.
	var verticesOut string
	if layout == arrowio.LayoutMatrix {
		verticesOut = c.String("vertices-out")
		if verticesOut == "" && out != "-" {
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
	w, err := arrowio.CreateResult(out, schema, wopt)
	if err != nil {
		return usageError{err}
	}
	bar := newProgress(e, quiet, g.NumVertices())
	opt.Progress = bar.update
	sum, err := pipeline.Run(e.ctx, g, opt, w.Write)
	bar.finish()
	if err == nil {
		err = g.Close() // the device is not needed past the run
	}
	if err != nil {
		w.Abort()
		return err
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
	if !quiet {
		printSummary(e, sum, g, out, w.BytesWritten())
	}
	return nil
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
		s.Engine, s.Algorithm, s.Rows, humanBytes(bytes), dest)
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

func humanBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
