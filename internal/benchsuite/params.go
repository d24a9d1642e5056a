package benchsuite

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// Defaults of `pathctl bench`.
const (
	DefaultGraphs = "rmat14,rmat16,grid128,grid256,uniform65536d16"
	DefaultAlgos  = "auto,dijkstra,delta,edge,bfs,bfs-level,bellman-ford"
)

// Params are what one Run measures. The zero value of a field is its
// default where one is named.
type Params struct {
	// Graphs are suite names (Names) or edge files, in the table's order.
	Graphs []string
	// Engines are "auto" (GPU rows where a GPU is usable, and CPU rows),
	// "gpu" (fails without a usable GPU) or "cpu", in row order.
	Engines []string
	// Algos are the algorithms of the GPU rows, CPUAlgos those of the CPU
	// rows. AlgosGiven says that Algos were chosen (--algos), not the
	// default: Run then notes when no GPU row runs to take them.
	Algos, CPUAlgos []graph.Algorithm
	AlgosGiven      bool
	// Layout is what the timed runs build (and discard): stats (default)
	// or matrix.
	Layout arrowio.Layout
	// Sample runs that many seeded sources and extrapolates (0: every
	// source, or the suite graph's own sample on the GPU); CPUSample is
	// the same for the CPU rows.
	Sample, CPUSample int
	// Check is the number of sources per row compared with the oracle.
	Check int
	// Seed draws the generated graphs and the source samples.
	Seed uint64
	// Undirected reads edge files as undirected (suite graphs always are).
	Undirected bool
	// SrcCol and DstCol name the id columns of edge files ("": "src" and
	// "dst", arrowio.ReadOptions).
	SrcCol, DstCol string
	// DistType is every graph's distance type (0: the one its weights
	// give, pipeline.LoadOptions.DistType), for example float64 for float32
	// weights.
	DistType pipeline.DistType
	// SaveDir, when set, receives every generated graph as NAME.parquet.
	SaveDir string
	// DiskGraph is the graph whose matrix the disk test writes: "" for
	// rmat16 where a GPU is usable and rmat16 is listed, "none" to skip.
	DiskGraph string
	// DiskDir is where the disk test writes (default: os.TempDir()).
	DiskDir string
	// DiskRounds is the number of rounds of the disk test (default 1).
	DiskRounds int
	// Threads bounds CPU parallelism (0: every core); MemBudget bounds the
	// blocks in flight (0: the pipeline's default).
	Threads   int
	MemBudget int64
	// Devices are the GPUs of the GPU rows (pipeline.Resources.Devices; nil:
	// every device).
	Devices []int
	// Tune is the GPU engine's tuning of every row (pipeline.Resources.Tune;
	// "": the defaults).
	Tune string
	// Version and Command describe the run in the report.
	Version, Command string
	// Log receives progress lines; nil discards them. Notice receives the
	// notes a user should see even without progress lines (nil: Log).
	Log, Notice io.Writer

	// Run is the kernel timed (nil: the Prepared query's Run), Verify the
	// verifier of the check sources (nil: pipeline.Verify) and
	// MeasureDownload the bandwidth probe (nil: pipeline.MeasureDownload).
	// Tests replace them.
	Run             func(context.Context, *pipeline.Prepared, func(arrow.RecordBatch) error) (*pipeline.Summary, error)
	Verify          func(ctx context.Context, q *pipeline.Prepared, samples int, seed uint64) (*pipeline.VerifyReport, error)
	MeasureDownload func() (pipeline.Download, error)
}

// ParamsError is an error in Params (or in the flags they came from).
type ParamsError struct{ Err error }

func (e *ParamsError) Error() string { return e.Err.Error() }
func (e *ParamsError) Unwrap() error { return e.Err }

func paramsErrorf(format string, args ...any) error {
	return &ParamsError{fmt.Errorf("bench: "+format, args...)}
}

// InputError is an error in an edge file of Params.Graphs: unreadable,
// or not a valid graph.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// ParseAlgorithms parses a comma-separated list of algorithm names; an
// unknown name is a *ParamsError.
func ParseAlgorithms(list string) ([]graph.Algorithm, error) {
	var out []graph.Algorithm
	for _, x := range SplitList(list) {
		a, err := graph.ParseAlgorithm(x)
		if err != nil {
			return nil, &ParamsError{err}
		}
		out = append(out, a)
	}
	return out, nil
}

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// withDefaults checks p and fills its defaults.
func (p Params) withDefaults() (Params, error) {
	if len(p.Graphs) == 0 {
		return p, paramsErrorf("no graph named")
	}
	if len(p.Engines) == 0 {
		return p, paramsErrorf("no engine named")
	}
	for _, e := range p.Engines {
		if e != "auto" && e != "gpu" && e != "cpu" {
			return p, paramsErrorf("engine %q: want auto, gpu or cpu", e)
		}
	}
	if p.Layout == "" {
		p.Layout = arrowio.LayoutStats
	}
	if p.Layout != arrowio.LayoutStats && p.Layout != arrowio.LayoutMatrix {
		return p, paramsErrorf("layout %q: want stats or matrix", p.Layout)
	}
	if p.Sample < 0 || p.CPUSample < 0 || p.Check < 0 {
		return p, paramsErrorf("sample sizes and check counts must not be negative")
	}
	if p.DiskDir == "" {
		p.DiskDir = os.TempDir()
	}
	p.DiskRounds = max(p.DiskRounds, 1)
	if p.Log == nil {
		p.Log = io.Discard
	}
	if p.Notice == nil {
		p.Notice = p.Log
	}
	if p.Run == nil {
		p.Run = func(ctx context.Context, q *pipeline.Prepared, emit func(arrow.RecordBatch) error) (*pipeline.Summary, error) {
			return q.Run(ctx, emit)
		}
	}
	if p.Verify == nil {
		p.Verify = pipeline.Verify
	}
	if p.MeasureDownload == nil {
		p.MeasureDownload = pipeline.MeasureDownload
	}
	return p, nil
}
