package main

// pathctl bench: the benchmark suite as one command, for users (no Python)
// and for bench/bench_gpu.py (--json), which adds the peers (scipy,
// networkx, NetworKit).
//
// For every graph × engine × algorithm it times pipeline.Run over every
// source (or a seeded sample, extrapolated and flagged) in the stats layout,
// discarding the records but counting them, and checks the run against the
// serial oracle of internal/ref on a few sampled sources in two ways: the
// distances of a separate matrix-layout run of those sources, and the stats
// rows of the timed run itself (reachable, sum, eccentricity from the
// oracle's distances). A mismatch fails the command, so a fast wrong answer
// cannot reach the table. Beside the runs it measures what bounds them: the
// device-to-host bandwidth (gpu.Engine.MeasureDownload), which gives each
// graph's floor (n² distances copied to the host), and, for one graph, the
// speed of writing its matrix to an uncompressed Arrow IPC file against a
// plain sequential write of the same bytes in the same directory, both
// fsynced.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/pipeline"
)

// suiteGraph is a named graph of the benchmark suite: seeded, generated in
// process, run undirected. The parameters are those of bench/bench_gpu.py.
type suiteGraph struct {
	name, about string
	make        func(seed uint64) (*gen.EdgeList, error)
	// sample is the default source sample of the GPU rows (0: every
	// source), for graphs whose all-pairs run takes too long to time whole.
	sample int
}

// benchSuite lists the named graphs in the order the table shows them.
var benchSuite = []suiteGraph{
	{name: "rmat14", about: "R-MAT scale 14, edge factor 16 (Graph500 a=0.57 b=0.19 c=0.19)",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.RMAT(14, 16, seed) }},
	{name: "rmat16", about: "R-MAT scale 16, edge factor 16",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.RMAT(16, 16, seed) }},
	{name: "rmat20", about: "R-MAT scale 20, edge factor 16", sample: 8192,
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.RMAT(20, 16, seed) }},
	{name: "grid128", about: "weighted 2-D grid 128×128, 4 neighbours",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.Grid(128, 128, seed) }},
	{name: "grid256", about: "weighted 2-D grid 256×256, 4 neighbours",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.Grid(256, 256, seed) }},
	{name: "uniform65536d16", about: "uniform random, 65,536 vertices, 16 edges per vertex",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.Uniform(65536, 16, seed) }},
}

const (
	defaultBenchGraphs = "rmat14,rmat16,grid128,grid256,uniform65536d16"
	defaultBenchAlgos  = "auto,dijkstra,delta,edge,bfs,bfs-level,bellman-ford"
)

// Test hooks: the pipeline run (a test wraps it to make an engine wrong)
// and the bandwidth measurement (a test gives one without a GPU).
var (
	runPipeline      = pipeline.Run
	measureBandwidth = measureDeviceBandwidth
)

// benchParams are the flags of pathctl bench.
type benchParams struct {
	graphs            []string
	engines           []string // "gpu", "cpu" in row order
	engineFlag        string
	algos, cpuAlgos   []graph.Algorithm
	layout            arrowio.Layout
	sample, cpuSample int
	check             int
	seed              uint64
	undirected        bool
	saveDir           string
	diskGraph         string
	diskDir           string
	diskRounds        int
	threads           int
	mem               int64
	quiet             bool
}

// BenchMachine describes where the benchmark ran.
type BenchMachine struct {
	Date       string `json:"date"`
	Pathctl    string `json:"pathctl"`
	GoVersion  string `json:"go_version"`
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model,omitempty"`
	GPU        string `json:"gpu,omitempty"`
	GPUReason  string `json:"gpu_unavailable,omitempty"`
	CUDADriver string `json:"cuda_driver,omitempty"` // CUDA version the driver supports
	Driver     string `json:"driver,omitempty"`      // kernel module version
	Command    string `json:"command"`
}

// BenchGraph is one graph of the run.
type BenchGraph struct {
	Name       string `json:"name"`
	Path       string `json:"path,omitempty"` // the edge file, when read from or saved to one
	About      string `json:"about,omitempty"`
	Undirected bool   `json:"undirected"`
	Vertices   int    `json:"n"`
	Arcs       int64  `json:"arcs"`
	DistType   string `json:"dist_type"`
	// FloorSeconds is n² × distance bytes / device-to-host bandwidth; nil
	// without a GPU.
	FloorSeconds *float64 `json:"floor_seconds"`
	// LoadSeconds is the time to build the CSR, on BuiltOn ("cpu" or
	// "gpu"); on the GPU it includes opening the device, which the graph
	// then keeps for its GPU rows (as a notebook or pathctl serve keeps
	// it), so that their times do not include it.
	LoadSeconds float64 `json:"load_seconds"`
	BuiltOn     string  `json:"built_on"`
}

// BenchRow is one timed run.
type BenchRow struct {
	Graph     string `json:"graph"`
	Engine    string `json:"engine"`
	Algorithm string `json:"algorithm"`
	Chosen    string `json:"chosen"` // the kernel the engine ran (auto's choice)
	Layout    string `json:"layout"`
	Vertices  int    `json:"n"`
	Arcs      int64  `json:"arcs"`
	// Sources is how many sources ran; Seconds is for every source,
	// extrapolated (Seconds = MeasuredSeconds × n / Sources) when
	// Extrapolated.
	Sources         int     `json:"sources"`
	MeasuredSeconds float64 `json:"measured_seconds"`
	Seconds         float64 `json:"seconds"`
	Extrapolated    bool    `json:"extrapolated"`
	Rows            int64   `json:"rows"`
	// PairsPerSecond is n² / Seconds; RelaxationsPerSecond is arcs × n /
	// Seconds (every arc relaxed once per source, as Dijkstra does).
	PairsPerSecond       float64 `json:"pairs_per_second"`
	RelaxationsPerSecond float64 `json:"relaxations_per_second"`
	// Checked is the number of sources compared with the oracle (all
	// matched, or the command failed).
	Checked int `json:"checked_sources"`
}

// BenchDisk is the disk measurement.
type BenchDisk struct {
	Graph string `json:"graph"`
	Dir   string `json:"dir"`
	Bytes int64  `json:"bytes"`
	// ComputeSeconds is the same matrix run with its records discarded.
	ComputeSeconds float64 `json:"compute_seconds"`
	ArrowSeconds   float64 `json:"arrow_seconds"` // the best of ArrowRuns
	PlainSeconds   float64 `json:"plain_seconds"` // the best of PlainRuns
	// ArrowRuns are the seconds of each pipeline.Run into the Arrow file
	// (fsync and rename included), PlainRuns of each sequential write of
	// Bytes (fsync included), taken alternately: Arrow, plain, Arrow, ...
	ArrowRuns []float64 `json:"arrow_runs"`
	PlainRuns []float64 `json:"plain_runs"`
	ArrowRate float64   `json:"arrow_bytes_per_second"`
	PlainRate float64   `json:"plain_bytes_per_second"`
	Ratio     float64   `json:"ratio"` // ArrowRate / PlainRate
	Engine    string    `json:"engine"`
	Algorithm string    `json:"algorithm"`
}

// BenchReport is what --json prints.
type BenchReport struct {
	Machine BenchMachine `json:"machine"`
	// Bandwidth is the device-to-host rate from pinned memory, bytes/s; nil
	// without a GPU.
	Bandwidth   *float64     `json:"d2h_bytes_per_second"`
	Graphs      []BenchGraph `json:"graphs"`
	Rows        []BenchRow   `json:"rows"`
	Disk        *BenchDisk   `json:"disk"`
	DiskSkipped string       `json:"disk_skipped,omitempty"`
}

func benchCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "time the engines and algorithms on the benchmark suite, checked against a serial oracle",
		Description: "Named graphs (" + suiteNames() + ") are generated with the seed;\n" +
			"any other entry of --graphs is an edge file. Every row is checked against the serial\n" +
			"oracle on --check sampled sources; a mismatch fails the command.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "graphs", Value: defaultBenchGraphs, Usage: "comma-separated suite names or edge files"},
			&cli.StringFlag{Name: "engine", Value: "auto", Usage: "auto (GPU rows where a GPU is usable, and CPU rows), gpu, cpu, or gpu,cpu"},
			&cli.StringFlag{Name: "algos", Value: defaultBenchAlgos, Usage: "algorithms of the GPU rows"},
			&cli.StringFlag{Name: "cpu-algos", Value: "auto", Usage: "algorithms of the CPU rows"},
			&cli.StringFlag{Name: "layout", Value: "stats", Usage: "stats or matrix: the layout built (and discarded) by the timed runs"},
			&cli.IntFlag{Name: "sample", Usage: "run this many sampled sources and extrapolate (default: every source; rmat20's GPU rows 8192)"},
			&cli.IntFlag{Name: "cpu-sample", Value: 1024, Usage: "sources of the CPU rows, extrapolated (0: every source)"},
			&cli.IntFlag{Name: "check", Value: 4, Usage: "sources per row compared with the serial oracle"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the generated graphs and of the source samples"},
			&cli.BoolFlag{Name: "undirected", Usage: "read edge files as undirected (suite graphs always are)"},
			&cli.StringFlag{Name: "save-graphs", Usage: "write each generated graph to DIR/NAME.parquet (the peers of bench/bench_gpu.py read them)"},
			&cli.StringFlag{Name: "disk-graph", Usage: "graph whose matrix is written to an Arrow file for the disk ratio; none to skip (default: rmat16 where a GPU is usable and rmat16 is listed)"},
			&cli.IntFlag{Name: "disk-rounds", Value: 2, Usage: "rounds of the disk measurement, each an Arrow file then a plain write; the ratio compares the best of each"},
			&cli.StringFlag{Name: "disk-dir", Usage: "directory of the disk measurement (default: the directory of --out, else the temporary directory)"},
			&cli.IntFlag{Name: "threads", Usage: "CPU threads (default: every core)"},
			&cli.Int64Flag{Name: "mem", Aliases: []string{"gpu-mem"}, Usage: "memory budget in bytes of the blocks in flight (default as for run)"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON instead of the markdown table"},
			&cli.StringFlag{Name: "out", Usage: "also write the markdown table to this file"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines on stderr"},
		},
		Action: func(c *cli.Context) error {
			p, err := parseBenchParams(c)
			if err != nil {
				return err
			}
			rep, err := runBench(e.ctx, p, e.stderr, strings.Join(append([]string{"pathctl"}, os.Args[1:]...), " "))
			if err != nil {
				return err
			}
			text := benchMarkdown(rep)
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

func suiteNames() string {
	names := make([]string, len(benchSuite))
	for i, s := range benchSuite {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

func findSuite(name string) (suiteGraph, bool) {
	for _, s := range benchSuite {
		if s.name == name {
			return s, true
		}
	}
	return suiteGraph{}, false
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func parseAlgos(flag, s string) ([]graph.Algorithm, error) {
	var out []graph.Algorithm
	for _, x := range splitList(s) {
		a, err := graph.ParseAlgorithm(x)
		if err != nil {
			return nil, usagef("--%s: %v", flag, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func parseBenchParams(c *cli.Context) (*benchParams, error) {
	if c.NArg() > 0 {
		return nil, usagef("bench takes no arguments (name graphs with --graphs), got %q", c.Args().First())
	}
	p := &benchParams{
		graphs: splitList(c.String("graphs")), engineFlag: c.String("engine"),
		sample: c.Int("sample"), cpuSample: c.Int("cpu-sample"), check: c.Int("check"),
		seed: c.Uint64("seed"), undirected: c.Bool("undirected"), saveDir: c.String("save-graphs"),
		diskGraph: c.String("disk-graph"), diskDir: c.String("disk-dir"), diskRounds: c.Int("disk-rounds"),
		threads: c.Int("threads"), mem: c.Int64("mem"), quiet: c.Bool("quiet"),
	}
	if len(p.graphs) == 0 {
		return nil, usagef("--graphs names no graph")
	}
	var err error
	if p.algos, err = parseAlgos("algos", c.String("algos")); err != nil {
		return nil, err
	}
	if p.cpuAlgos, err = parseAlgos("cpu-algos", c.String("cpu-algos")); err != nil {
		return nil, err
	}
	if p.layout, err = arrowio.ParseLayout(c.String("layout")); err != nil || p.layout == arrowio.LayoutPairs {
		return nil, usagef("--layout %q: want stats or matrix", c.String("layout"))
	}
	if p.sample < 0 || p.cpuSample < 0 || p.check < 0 {
		return nil, usagef("--sample, --cpu-sample and --check must not be negative")
	}
	for _, x := range splitList(p.engineFlag) {
		switch x {
		case "auto":
			p.engines = append(p.engines, "gpu?", "cpu")
		case "gpu", "cpu":
			p.engines = append(p.engines, x)
		default:
			return nil, usagef("--engine %q: want auto, gpu, cpu or gpu,cpu", x)
		}
	}
	if len(p.engines) == 0 {
		return nil, usagef("--engine names no engine")
	}
	if p.diskDir == "" {
		if out := c.String("out"); out != "" {
			p.diskDir = filepath.Dir(out)
		} else {
			p.diskDir = os.TempDir()
		}
	}
	return p, nil
}

// runBench runs everything p asks for and returns the report; progress goes
// to log unless p.quiet.
func runBench(ctx context.Context, p *benchParams, log io.Writer, command string) (*BenchReport, error) {
	if p.quiet {
		log = io.Discard
	}
	rep := &BenchReport{Machine: machineInfo(command)}

	// Which engines run: "gpu?" (from auto) only where a GPU is usable.
	wantGPU := slices.Contains(p.engines, "gpu") || slices.Contains(p.engines, "gpu?")
	gpuOK := false
	if wantGPU {
		bw, info, err := measureBandwidth()
		switch {
		case err != nil && slices.Contains(p.engines, "gpu"):
			return nil, fmt.Errorf("%w: --engine gpu: %v", pipeline.ErrUnavailable, err)
		case err != nil:
			rep.Machine.GPUReason = err.Error()
			fmt.Fprintf(log, "pathctl bench: GPU engine unavailable (%v); CPU rows only\n", err)
		default:
			gpuOK = true
			rep.Bandwidth = &bw
			if info != nil {
				rep.Machine.GPU = info.Name
				rep.Machine.CUDADriver = fmt.Sprintf("%d.%d", info.DriverVersion/1000, (info.DriverVersion%1000)/10)
			}
			fmt.Fprintf(log, "pathctl bench: device-to-host %.1f GB/s (pinned)\n", bw/1e9)
		}
	}
	var engines []string
	for _, name := range p.engines {
		if name == "gpu?" {
			if !gpuOK {
				continue
			}
			name = "gpu"
		}
		if !slices.Contains(engines, name) {
			engines = append(engines, name)
		}
	}

	diskGraph := p.diskGraph
	if diskGraph == "" {
		switch {
		case !slices.Contains(p.graphs, "rmat16"):
			rep.DiskSkipped = "rmat16 is not among --graphs; --disk-graph NAME measures another"
		case !gpuOK:
			rep.DiskSkipped = "no GPU; --disk-graph rmat16 measures it on the CPU engine"
		default:
			diskGraph = "rmat16"
		}
	} else if diskGraph == "none" {
		rep.DiskSkipped = "--disk-graph none"
		diskGraph = ""
	}
	if diskGraph != "" && !slices.Contains(p.graphs, diskGraph) && !slices.ContainsFunc(p.graphs, func(s string) bool { return graphName(s) == diskGraph }) {
		return nil, usagef("--disk-graph %s is not among --graphs", diskGraph)
	}

	seen := map[string]bool{}
	for _, entry := range p.graphs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g, bg, suite, err := loadBenchGraph(entry, p, gpuOK && slices.Contains(engines, "gpu"))
		if err != nil {
			return nil, err
		}
		if seen[bg.Name] {
			closeGraph(g)
			return nil, usagef("--graphs: %s appears twice", bg.Name)
		}
		seen[bg.Name] = true
		if rep.Bandwidth != nil {
			floor := float64(bg.Vertices) * float64(bg.Vertices) * float64(g.CSR.Type.Size()) / *rep.Bandwidth
			bg.FloorSeconds = &floor
		}
		rep.Graphs = append(rep.Graphs, *bg)
		fmt.Fprintf(log, "pathctl bench: %s: %d vertices, %d arcs, CSR built on the %s in %.3f s\n", bg.Name, bg.Vertices, bg.Arcs, bg.BuiltOn, bg.LoadSeconds)
		err = func() error {
			defer closeGraph(g)
			for _, eng := range engines {
				algos, sample := p.algos, p.sample
				if eng == "cpu" {
					algos, sample = p.cpuAlgos, p.cpuSample
				} else if sample == 0 {
					sample = suite.sample
				}
				for _, algo := range algos {
					row, err := benchRun(ctx, g, bg, p, eng, algo, sample)
					if err != nil {
						return err
					}
					rep.Rows = append(rep.Rows, *row)
					what := "every source"
					if row.Extrapolated {
						what = fmt.Sprintf("%d sources, extrapolated", row.Sources)
					}
					fmt.Fprintf(log, "pathctl bench:   %s %s: %.3f s (%s; %s); %d sources match the oracle\n",
						eng, algo, row.Seconds, what, row.Chosen, row.Checked)
				}
			}
			if bg.Name == diskGraph {
				eng := "cpu"
				if gpuOK {
					eng = "gpu"
				}
				d, err := benchDisk(ctx, g, bg, p, eng)
				if err != nil {
					return err
				}
				rep.Disk = d
				fmt.Fprintf(log, "pathctl bench: disk: %s matrix, %s: Arrow %.1f MB/s, plain %.1f MB/s, %.0f %%\n",
					bg.Name, humanBytes(d.Bytes), d.ArrowRate/1e6, d.PlainRate/1e6, 100*d.Ratio)
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// closeGraph closes a graph that holds a device (pipeline.Graph gains a
// Close where LoadGraph may build on the GPU).
func closeGraph(g *pipeline.Graph) {
	if c, ok := any(g).(interface{ Close() error }); ok {
		c.Close()
	}
}

// graphName is the table name of a --graphs entry: a suite name, or the
// file's base name without extensions.
func graphName(entry string) string {
	if _, ok := findSuite(entry); ok {
		return entry
	}
	base := filepath.Base(entry)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

// loadBenchGraph generates a suite graph or reads an edge file.
//
// With onGPU the CSR is built on the GPU, whose device the graph keeps for
// every GPU row: the rows time the runs of an open engine.
func loadBenchGraph(entry string, p *benchParams, onGPU bool) (*pipeline.Graph, *BenchGraph, suiteGraph, error) {
	bg := &BenchGraph{Name: graphName(entry)}
	var tbl *arrowio.EdgeTable
	suite, isSuite := findSuite(entry)
	if isSuite {
		edges, err := suite.make(p.seed)
		if err != nil {
			return nil, nil, suite, err
		}
		if p.saveDir != "" {
			if err := os.MkdirAll(p.saveDir, 0o755); err != nil {
				return nil, nil, suite, fmt.Errorf("bench: --save-graphs: %w", err)
			}
			bg.Path = filepath.Join(p.saveDir, entry+".parquet")
			if err := saveEdgeList(bg.Path, edges); err != nil {
				return nil, nil, suite, err
			}
		}
		if tbl, err = suiteTable(entry, edges); err != nil {
			return nil, nil, suite, err
		}
		bg.About, bg.Undirected = suite.about, true
	} else {
		if _, err := os.Stat(entry); err != nil {
			return nil, nil, suite, usagef("--graphs: %q is neither a suite graph (%s) nor a readable file: %v", entry, suiteNames(), err)
		}
		var err error
		if tbl, err = arrowio.ReadEdges(entry, arrowio.ReadOptions{}); err != nil {
			return nil, nil, suite, inputError{err}
		}
		bg.Path, bg.Undirected = entry, p.undirected
	}
	lopt := pipeline.LoadOptions{Undirected: bg.Undirected}
	if onGPU {
		lopt.Engine = "gpu"
	}
	start := time.Now()
	g, err := pipeline.LoadGraph(tbl, lopt)
	if onGPU && errors.Is(err, pipeline.ErrUnavailable) {
		// The GPU rows then open the device themselves, and say why
		// they cannot.
		start = time.Now()
		g, err = pipeline.LoadGraph(tbl, pipeline.LoadOptions{Undirected: bg.Undirected})
	}
	if err != nil {
		return nil, nil, suite, inputError{err}
	}
	bg.LoadSeconds, bg.BuiltOn = time.Since(start).Seconds(), g.BuiltOn()
	bg.Vertices, bg.Arcs, bg.DistType = g.NumVertices(), g.CSR.NumEdges(), g.CSR.Type.String()
	return g, bg, suite, nil
}

// suiteTable turns a generated edge list into the table a reader of its
// saved file would return: the ids that occur in an edge (self-loops
// included), in ascending order, as dense ids.
func suiteTable(name string, e *gen.EdgeList) (*arrowio.EdgeTable, error) {
	used := make([]bool, e.NumVertices)
	for i := range e.Src {
		used[e.Src[i]], used[e.Dst[i]] = true, true
	}
	dense := make([]graph.VertexID, e.NumVertices)
	var ids []int64
	for v, ok := range used {
		if ok {
			if len(ids) >= graph.MaxVertices {
				return nil, fmt.Errorf("bench: %s has more vertices than int32 ids hold", name)
			}
			dense[v] = graph.VertexID(len(ids))
			ids = append(ids, int64(v))
		}
	}
	t := &arrowio.EdgeTable{
		Edges: graph.Edges{
			NumVertices: len(ids),
			Src:         make([]graph.VertexID, len(e.Src)),
			Dst:         make([]graph.VertexID, len(e.Dst)),
			IntWeights:  e.Weights, Float64Weights: e.FloatWeights,
		},
		Vertices: &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ids},
		Name:     name,
	}
	for i := range e.Src {
		t.Edges.Src[i], t.Edges.Dst[i] = dense[e.Src[i]], dense[e.Dst[i]]
	}
	switch {
	case e.Weights != nil:
		t.WeightType = arrow.PrimitiveTypes.Int64
	case e.FloatWeights != nil:
		t.WeightType = arrow.PrimitiveTypes.Float64
	}
	return t, nil
}

// saveEdgeList writes e as pathctl gen does: columns src, dst [, weight].
func saveEdgeList(path string, e *gen.EdgeList) error {
	int64Array := func(xs []int64) arrow.Array {
		return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(xs),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(xs))}, nil, 0, 0))
	}
	src, dst := int64Array(e.Src), int64Array(e.Dst)
	defer src.Release()
	defer dst.Release()
	var weight arrow.Array
	switch {
	case e.Weights != nil:
		weight = int64Array(e.Weights)
	case e.FloatWeights != nil:
		weight = array.NewFloat64Data(array.NewData(arrow.PrimitiveTypes.Float64, len(e.FloatWeights),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(e.FloatWeights))}, nil, 0, 0))
	}
	if weight != nil {
		defer weight.Release()
	}
	return arrowio.WriteEdges(path, src, dst, weight, arrowio.WriteOptions{})
}

// sampleSources draws k distinct vertices of n with seed, or returns nil
// (every source) when k is 0 or not below n.
func sampleSources(n, k int, seed uint64) []graph.VertexID {
	if k <= 0 || k >= n {
		return nil
	}
	return pickSources(n, k, seed)
}

// pickSources draws min(k, n) distinct vertices of n with seed.
func pickSources(n, k int, seed uint64) []graph.VertexID {
	rng := rand.New(rand.NewPCG(seed, 0x62656e6368))
	perm := rng.Perm(n)[:max(0, min(k, n))]
	out := make([]graph.VertexID, len(perm))
	for i, v := range perm {
		out[i] = graph.VertexID(v)
	}
	return out
}

func externalIDs(g *pipeline.Graph, vs []graph.VertexID) []string {
	if vs == nil {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = g.Table.Vertices.Format(v)
	}
	return out
}

// benchRun times one row and checks it against the oracle.
func benchRun(ctx context.Context, g *pipeline.Graph, bg *BenchGraph, p *benchParams, eng string, algo graph.Algorithm, sample int) (*BenchRow, error) {
	n := g.NumVertices()
	sources := sampleSources(n, sample, p.seed)
	// The check sources: the first of the sample, or drawn from every vertex.
	var check []graph.VertexID
	if sources != nil {
		check = sources[:min(p.check, len(sources))]
	} else {
		check = pickSources(n, p.check, p.seed+1)
	}
	position := map[int]int{} // row index of a check source in the timed run -> index in check
	for i, v := range check {
		if sources != nil {
			position[i] = i
		} else {
			position[int(v)] = i
		}
	}
	opt := pipeline.Options{Algorithm: algo, Engine: eng, Layout: p.layout, Sources: externalIDs(g, sources),
		Threads: p.threads, MemBudget: p.mem}
	oracle, err := oracleRows(g, algo, check)
	if err != nil {
		return nil, err
	}
	observed := make([]observedRow, len(check))
	var rowIndex int64
	collect := func(rec arrow.Record) error {
		err := observeRecord(rec, p.layout, rowIndex, position, observed)
		rowIndex += rec.NumRows()
		return err
	}
	sum, err := runPipeline(ctx, g, opt, collect)
	if err != nil {
		return nil, fmt.Errorf("bench: %s, engine %s, algorithm %s: %w", bg.Name, eng, algo, err)
	}
	desc := fmt.Sprintf("%s, engine %s, algorithm %s", bg.Name, eng, algo)
	for i, s := range check {
		if err := compareObserved(g, desc+" (timed run)", s, p.layout, observed[i], oracle[i]); err != nil {
			return nil, err
		}
	}
	if err := checkDistances(ctx, g, desc, eng, algo, p, check, oracle); err != nil {
		return nil, err
	}
	k := int(sum.Sources)
	row := &BenchRow{
		Graph: bg.Name, Engine: eng, Algorithm: string(algo), Chosen: sum.Algorithm, Layout: string(p.layout),
		Vertices: n, Arcs: bg.Arcs, Sources: k, MeasuredSeconds: sum.Elapsed.Seconds(), Rows: sum.Rows,
		Extrapolated: k < n, Checked: len(check),
	}
	row.Seconds = row.MeasuredSeconds
	if row.Extrapolated && k > 0 {
		row.Seconds = row.MeasuredSeconds * float64(n) / float64(k)
	}
	if row.Seconds > 0 {
		row.PairsPerSecond = float64(n) * float64(n) / row.Seconds
		row.RelaxationsPerSecond = float64(bg.Arcs) * float64(n) / row.Seconds
	}
	return row, nil
}

// oracleRow is the serial oracle's answer for one source: distances (+Inf
// where unreachable) and the stats derived from them.
type oracleRow struct {
	dist         []float64
	reachable    int64
	sum          float64
	eccentricity float64 // NaN when nothing is reachable
}

// hopCounts reports whether algo on g yields hop counts.
func hopCounts(g *pipeline.Graph, algo graph.Algorithm) bool {
	return algo.CountsHops() || !g.CSR.Weighted
}

// oracleRows runs internal/ref on every source: BFS for hop counts,
// Bellman-Ford where a weight is negative, Dijkstra otherwise, in the
// graph's distance type.
func oracleRows(g *pipeline.Graph, algo graph.Algorithm, sources []graph.VertexID) ([]oracleRow, error) {
	out := make([]oracleRow, len(sources))
	for i, s := range sources {
		var dist []float64
		var err error
		switch {
		case hopCounts(g, algo):
			dist, err = oracleAs(g.CSR, s, ref.BFS)
		case g.CSR.Type == graph.DistInt32:
			dist, err = oracleTyped[int32](g.CSR, s)
		case g.CSR.Type == graph.DistInt64:
			dist, err = oracleTyped[int64](g.CSR, s)
		case g.CSR.Type == graph.DistFloat32:
			dist, err = oracleTyped[float32](g.CSR, s)
		default:
			dist, err = oracleTyped[float64](g.CSR, s)
		}
		if err != nil {
			return nil, fmt.Errorf("bench: oracle: %w", err)
		}
		r := oracleRow{dist: dist, eccentricity: math.NaN()}
		for v, d := range dist {
			if v == int(s) || math.IsInf(d, 1) {
				continue
			}
			r.reachable++
			r.sum += d
			if math.IsNaN(r.eccentricity) || d > r.eccentricity {
				r.eccentricity = d
			}
		}
		out[i] = r
	}
	return out, nil
}

func oracleTyped[D graph.Number](g *graph.CSR, s graph.VertexID) ([]float64, error) {
	if g.HasNegative() {
		return oracleAs(g, s, ref.BellmanFord[D])
	}
	return oracleAs(g, s, ref.Dijkstra[D])
}

// oracleAs runs fn and widens its distances to float64, +Inf where
// unreachable (exact: distances are below 2^53).
func oracleAs[D graph.Number](g *graph.CSR, s graph.VertexID, fn func(*graph.CSR, graph.VertexID) ([]D, error)) ([]float64, error) {
	d, err := fn(g, s)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(d))
	inf := graph.Infinity[D]()
	for v, x := range d {
		if x == inf {
			out[v] = math.Inf(1)
		} else {
			out[v] = float64(x)
		}
	}
	return out, nil
}

// observedRow is what a run emitted for one check source: the matrix row
// (matrix layout) or the stats (stats layout).
type observedRow struct {
	seen         bool
	dist         []float64
	reachable    int64
	sum          float64
	eccentricity float64 // NaN for null
}

// observeRecord copies the rows of rec at the positions asked for.
func observeRecord(rec arrow.Record, layout arrowio.Layout, first int64, position map[int]int, out []observedRow) error {
	schema := rec.Schema()
	col := func(name string) (arrow.Array, error) {
		idx := schema.FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("bench: result has no column %q", name)
		}
		return rec.Column(idx[0]), nil
	}
	for r := range int(rec.NumRows()) {
		i, ok := position[int(first)+r]
		if !ok {
			continue
		}
		o := observedRow{seen: true, eccentricity: math.NaN()}
		if layout == arrowio.LayoutMatrix {
			c, err := col(arrowio.ColDistance)
			if err != nil {
				return err
			}
			if o.dist, err = matrixRow(c, r); err != nil {
				return err
			}
		} else {
			reach, err := col(arrowio.ColReachable)
			if err != nil {
				return err
			}
			sum, err := col(arrowio.ColSum)
			if err != nil {
				return err
			}
			ecc, err := col(arrowio.ColEccentricity)
			if err != nil {
				return err
			}
			if o.reachable, err = int64At(reach, r); err != nil {
				return err
			}
			if o.sum, err = numberAt(sum, r); err != nil {
				return err
			}
			if o.eccentricity, err = numberAt(ecc, r); err != nil {
				return err
			}
		}
		out[i] = o
	}
	return nil
}

func int64At(a arrow.Array, i int) (int64, error) {
	x, ok := a.(*array.Int64)
	if !ok {
		return 0, fmt.Errorf("bench: column of %s, want int64", a.DataType())
	}
	return x.Value(i), nil
}

// numberAt reads a numeric cell as float64: NaN for null.
func numberAt(a arrow.Array, i int) (float64, error) {
	if a.IsNull(i) {
		return math.NaN(), nil
	}
	switch x := a.(type) {
	case *array.Int32:
		return float64(x.Value(i)), nil
	case *array.Int64:
		return float64(x.Value(i)), nil
	case *array.Float32:
		return float64(x.Value(i)), nil
	case *array.Float64:
		return x.Value(i), nil
	}
	return 0, fmt.Errorf("bench: column of %s, want a number", a.DataType())
}

// matrixRow reads row r of a matrix distance column: +Inf for null or
// infinite entries.
func matrixRow(a arrow.Array, r int) ([]float64, error) {
	list, ok := a.(*array.FixedSizeList)
	if !ok {
		return nil, fmt.Errorf("bench: distance column of %s, want fixed_size_list", a.DataType())
	}
	lo, hi := list.ValueOffsets(r)
	values := list.ListValues()
	out := make([]float64, hi-lo)
	for j := range out {
		x, err := numberAt(values, int(lo)+j)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(x) {
			x = math.Inf(1)
		}
		out[j] = x
	}
	return out, nil
}

// sameDistance compares a distance with the oracle's: exactly for integer
// types, to a relative 1e-6 for floats (sums in another order may round
// differently).
func sameDistance(got, want float64, float bool) bool {
	if got == want || (math.IsNaN(got) && math.IsNaN(want)) {
		return true
	}
	if !float || math.IsInf(got, 0) || math.IsInf(want, 0) || math.IsNaN(got) || math.IsNaN(want) {
		return false
	}
	return math.Abs(got-want) <= 1e-6*max(1, math.Abs(want))
}

// compareObserved fails on the first difference between what a run
// emitted for source s and the oracle.
func compareObserved(g *pipeline.Graph, desc string, s graph.VertexID, layout arrowio.Layout, got observedRow, want oracleRow) error {
	name := g.Table.Vertices.Format(s)
	if !got.seen {
		return fmt.Errorf("bench: %s: no result row for source %s", desc, name)
	}
	float := g.CSR.Type.IsFloat()
	if layout == arrowio.LayoutMatrix {
		if len(got.dist) != len(want.dist) {
			return fmt.Errorf("bench: %s: source %s: %d distances, want %d", desc, name, len(got.dist), len(want.dist))
		}
		for v := range want.dist {
			if !sameDistance(got.dist[v], want.dist[v], float) {
				return fmt.Errorf("bench: %s: wrong answer: distance %s -> %s is %s, the serial oracle says %s",
					desc, name, g.Table.Vertices.Format(graph.VertexID(v)), showDistance(got.dist[v]), showDistance(want.dist[v]))
			}
		}
		return nil
	}
	switch {
	case got.reachable != want.reachable:
		return fmt.Errorf("bench: %s: wrong answer: source %s reaches %d vertices, the serial oracle says %d", desc, name, got.reachable, want.reachable)
	case !sameDistance(got.sum, want.sum, float):
		return fmt.Errorf("bench: %s: wrong answer: source %s has distance sum %v, the serial oracle says %v", desc, name, got.sum, want.sum)
	case !sameDistance(got.eccentricity, want.eccentricity, float):
		return fmt.Errorf("bench: %s: wrong answer: source %s has eccentricity %v, the serial oracle says %v", desc, name, got.eccentricity, want.eccentricity)
	}
	return nil
}

func showDistance(d float64) string {
	if math.IsInf(d, 1) {
		return "unreachable"
	}
	return fmt.Sprint(d)
}

// checkDistances runs the check sources alone in the matrix layout on the
// row's engine and algorithm and compares every distance with the oracle.
func checkDistances(ctx context.Context, g *pipeline.Graph, desc, eng string, algo graph.Algorithm, p *benchParams, check []graph.VertexID, oracle []oracleRow) error {
	if len(check) == 0 {
		return nil
	}
	position := map[int]int{}
	for i := range check {
		position[i] = i
	}
	observed := make([]observedRow, len(check))
	var rowIndex int64
	opt := pipeline.Options{Algorithm: algo, Engine: eng, Layout: arrowio.LayoutMatrix, Sources: externalIDs(g, check),
		Threads: p.threads, MemBudget: p.mem}
	_, err := runPipeline(ctx, g, opt, func(rec arrow.Record) error {
		err := observeRecord(rec, arrowio.LayoutMatrix, rowIndex, position, observed)
		rowIndex += rec.NumRows()
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: %s: check run: %w", desc, err)
	}
	for i, s := range check {
		if err := compareObserved(g, desc, s, arrowio.LayoutMatrix, observed[i], oracle[i]); err != nil {
			return err
		}
	}
	return nil
}

// benchDisk runs g's matrix (every source, algorithm auto) once into no
// file, then p.diskRounds times into an uncompressed Arrow IPC file in
// p.diskDir as `pathctl run` does, each followed by plain sequential
// writes of the same number of bytes; every file is fsynced and removed.
// The disk's speed drifts between writes (its cache, the previous file's
// release), so the two take turns and the best of each is compared.
func benchDisk(ctx context.Context, g *pipeline.Graph, bg *BenchGraph, p *benchParams, eng string) (*BenchDisk, error) {
	if err := os.MkdirAll(p.diskDir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: --disk-dir: %w", err)
	}
	opt := pipeline.Options{Algorithm: graph.Auto, Engine: eng, Layout: arrowio.LayoutMatrix, Threads: p.threads, MemBudget: p.mem}
	// The same run into no file: what the pipeline alone takes.
	computeStart := time.Now()
	if _, err := runPipeline(ctx, g, opt, func(arrow.Record) error { return nil }); err != nil {
		return nil, fmt.Errorf("bench: disk: %s matrix: %w", bg.Name, err)
	}
	d := &BenchDisk{Graph: bg.Name, Dir: p.diskDir, ComputeSeconds: time.Since(computeStart).Seconds()}
	schema, err := pipeline.Schema(g, opt)
	if err != nil {
		return nil, err
	}
	for range max(p.diskRounds, 1) {
		seconds, err := arrowWrite(ctx, g, bg, p.diskDir, opt, schema, d)
		if err != nil {
			return nil, err
		}
		d.ArrowRuns = append(d.ArrowRuns, seconds)
		if seconds, err = plainWrite(p.diskDir, d.Bytes); err != nil {
			return nil, err
		}
		d.PlainRuns = append(d.PlainRuns, seconds)
	}
	d.ArrowSeconds, d.PlainSeconds = slices.Min(d.ArrowRuns), slices.Min(d.PlainRuns)
	if d.ArrowSeconds > 0 && d.PlainSeconds > 0 {
		d.ArrowRate, d.PlainRate = float64(d.Bytes)/d.ArrowSeconds, float64(d.Bytes)/d.PlainSeconds
		d.Ratio = d.ArrowRate / d.PlainRate
	}
	return d, nil
}

// arrowWrite runs g's matrix (of schema) into an uncompressed Arrow IPC
// file in dir as `pathctl run` does, records the file's size, engine and algorithm in d,
// removes the file and returns the seconds from create to the end of the
// close (fsync and rename included).
func arrowWrite(ctx context.Context, g *pipeline.Graph, bg *BenchGraph, dir string, opt pipeline.Options, schema *arrow.Schema, d *BenchDisk) (float64, error) {
	path := filepath.Join(dir, fmt.Sprintf("pathctl-bench-%s-%d.arrow", bg.Name, os.Getpid()))
	start := time.Now()
	w, err := arrowio.CreateResult(path, schema, arrowio.WriteOptions{Format: "arrow", Compression: arrowio.CompressionNone})
	if err != nil {
		return 0, fmt.Errorf("bench: disk: %w", err)
	}
	sum, err := runPipeline(ctx, g, opt, w.Write)
	if err != nil {
		w.Abort()
		return 0, fmt.Errorf("bench: disk: %s matrix: %w", bg.Name, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("bench: disk: %w", err)
	}
	seconds := time.Since(start).Seconds()
	d.Bytes, d.Engine, d.Algorithm = w.BytesWritten(), sum.Engine, sum.Algorithm
	if err := os.Remove(path); err != nil {
		return 0, fmt.Errorf("bench: disk: %w", err)
	}
	return seconds, nil
}

// plainWrite writes size bytes of pseudo-random data to a new file in dir
// in 8 MiB writes, starting the disk's writeback every 32 MiB as result
// files do (arrowio.WriteBehind), fsyncs, closes and removes it, and
// returns the seconds from create to the end of the fsync.
func plainWrite(dir string, size int64) (float64, error) {
	buf := make([]byte, 8<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(buf); i += 8 {
		x := rng.Uint64()
		for j := range 8 {
			buf[i+j] = byte(x >> (8 * j))
		}
	}
	start := time.Now()
	f, err := os.CreateTemp(dir, "pathctl-bench-plain-*")
	if err != nil {
		return 0, fmt.Errorf("bench: disk: %w", err)
	}
	defer os.Remove(f.Name())
	out := arrowio.WriteBehind(f)
	for left := size; left > 0; {
		chunk := buf[:min(int64(len(buf)), left)]
		if _, err := out.Write(chunk); err != nil {
			f.Close()
			return 0, fmt.Errorf("bench: disk: plain write: %w", err)
		}
		left -= int64(len(chunk))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, fmt.Errorf("bench: disk: plain write: %w", err)
	}
	seconds := time.Since(start).Seconds()
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("bench: disk: plain write: %w", err)
	}
	return seconds, nil
}

// measureDeviceBandwidth opens the GPU engine, measures the device-to-host
// rate with up to 256 MiB (a quarter of the free memory at most) and closes
// the engine.
func measureDeviceBandwidth() (float64, *gpu.DeviceInfo, error) {
	e, err := gpu.New()
	if err != nil {
		return 0, nil, err
	}
	info := e.Info()
	free, err := e.FreeMemory()
	if err != nil {
		return 0, nil, errors.Join(err, e.Close())
	}
	size := min(int64(256<<20), free/4) &^ 3
	if size <= 0 {
		return 0, nil, errors.Join(fmt.Errorf("gpu: only %d bytes free", free), e.Close())
	}
	bw, err := e.MeasureDownload(size)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, nil, err
	}
	return bw, &info, nil
}

// machineInfo describes this machine: CPUs and their model, the NVIDIA
// kernel driver where /proc says, the date.
func machineInfo(command string) BenchMachine {
	m := BenchMachine{
		Date: time.Now().UTC().Format(time.RFC3339), Pathctl: version, GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), Command: command,
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		m.Driver = nvidiaDriverVersion(strings.SplitN(string(b), "\n", 2)[0])
	}
	return m
}

// nvidiaDriverVersion finds the driver's version in the first line of
// /proc/driver/nvidia/version: the first field after "Module" made of digits
// and dots, as in "NVRM version: NVIDIA UNIX x86_64 Kernel Module
// 580.159.04  Thu ..." and in the open module's "NVRM version: NVIDIA UNIX
// Open Kernel Module for x86_64  580.159.04  Release Build ...". Empty if
// there is none.
func nvidiaDriverVersion(line string) string {
	f := strings.Fields(line)
	i := slices.Index(f, "Module")
	if i < 0 {
		return ""
	}
	for _, w := range f[i+1:] {
		if strings.Contains(w, ".") && strings.Trim(w, "0123456789.") == "" {
			return w
		}
	}
	return ""
}

// benchMarkdown renders the report as BENCHMARKS.md-ready markdown.
func benchMarkdown(rep *BenchReport) string {
	var b strings.Builder
	m := rep.Machine
	gpuText := "no GPU"
	if m.GPU != "" {
		gpuText = m.GPU
		if m.Driver != "" {
			gpuText += ", driver " + m.Driver
		}
		if m.CUDADriver != "" {
			gpuText += " (CUDA " + m.CUDADriver + ")"
		}
	} else if m.GPUReason != "" {
		gpuText = "no GPU (" + m.GPUReason + ")"
	}
	cpu := fmt.Sprintf("%d CPUs", m.CPUs)
	if m.CPUModel != "" {
		cpu += " (" + m.CPUModel + ")"
	}
	fmt.Fprintf(&b, "Machine: %s; %s. Date: %s. pathctl %s (%s).\n\n", gpuText, cpu, m.Date, m.Pathctl, m.GoVersion)
	fmt.Fprintf(&b, "Command: `%s`\n\n", m.Command)
	if rep.Bandwidth != nil {
		fmt.Fprintf(&b, "Device-to-host bandwidth, pinned memory, measured in this run: %.1f GB/s. ", *rep.Bandwidth/1e9)
		b.WriteString("Floor = n² × distance bytes / that bandwidth: the copy of the whole distance matrix to the host.\n\n")
	}
	b.WriteString("| graph | n | arcs | run | sources | seconds | pairs/s | relaxations/s | vs cpu auto | floor (s) | checked | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	floors := map[string]*float64{}
	for _, g := range rep.Graphs {
		floors[g.Name] = g.FloorSeconds
	}
	cpuSeconds := map[string]float64{}
	for _, r := range rep.Rows {
		if r.Engine == "cpu" && r.Algorithm == string(graph.Auto) {
			cpuSeconds[r.Graph] = r.Seconds
		}
	}
	for _, r := range rep.Rows {
		vs := "—"
		if c, ok := cpuSeconds[r.Graph]; ok && r.Seconds > 0 {
			vs = fmt.Sprintf("%.2f×", c/r.Seconds)
		}
		floor := "—"
		if f := floors[r.Graph]; f != nil {
			floor = fmt.Sprintf("%.3g", *f)
		}
		note := "all sources"
		if r.Extrapolated {
			note = fmt.Sprintf("extrapolated from %d sources", r.Sources)
		}
		if r.Chosen != "" && r.Chosen != r.Algorithm {
			note += "; " + r.Chosen
		}
		if r.Layout != string(arrowio.LayoutStats) {
			note += "; " + r.Layout + " layout"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | pathctl %s %s | %d | %.3g | %.3g | %.3g | %s | %s | %d ok | %s |\n",
			r.Graph, r.Vertices, r.Arcs, r.Engine, r.Algorithm, r.Sources, r.Seconds, r.PairsPerSecond, r.RelaxationsPerSecond,
			vs, floor, r.Checked, note)
	}
	b.WriteString("\nseconds: pipeline time for every source (extrapolated as seconds × n / sources where sampled), " +
		"stats layout unless noted; pairs/s = n² / seconds; relaxations/s = arcs × n / seconds (every arc once per source); " +
		"checked: sources whose distances and stats matched the serial oracle (internal/ref).\n")
	for _, g := range rep.Graphs {
		fmt.Fprintf(&b, "\n%s: CSR built on the %s in %.3f s", g.Name, g.BuiltOn, g.LoadSeconds)
		if g.BuiltOn == "gpu" {
			b.WriteString(", opening the device included; the GPU rows ran on that open device and their seconds exclude it")
		}
		b.WriteString(".")
	}
	b.WriteString("\n")
	if d := rep.Disk; d != nil {
		fmt.Fprintf(&b, "\nDisk (%s): the %s matrix (%s, %s, every source) written to an uncompressed Arrow IPC file with fsync in %.2f s, %.1f MB/s including compute (%.2f s without the file); "+
			"a plain sequential write of the same %d bytes (writeback started every 32 MiB, as the result file's) with fsync in %.2f s, %.1f MB/s: **%.0f %%** of the disk's sequential speed (target ≥ 80 %%). "+
			"Best of %d alternating rounds; Arrow file %s s, plain write %s s.\n",
			d.Dir, d.Graph, d.Engine, d.Algorithm, d.ArrowSeconds, d.ArrowRate/1e6, d.ComputeSeconds, d.Bytes, d.PlainSeconds, d.PlainRate/1e6, 100*d.Ratio,
			len(d.ArrowRuns), joinSeconds(d.ArrowRuns), joinSeconds(d.PlainRuns))
	} else if rep.DiskSkipped != "" {
		fmt.Fprintf(&b, "\nDisk: not measured (%s).\n", rep.DiskSkipped)
	}
	return b.String()
}

// joinSeconds lists seconds with two decimals, comma-separated.
func joinSeconds(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(parts, ", ")
}
