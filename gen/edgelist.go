package gen

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pathctl/pathctl/graph"
)

// EdgeList is a generated directed graph as columns: arc i goes from Src[i]
// to Dst[i]. Vertex ids lie in [0, NumVertices). At most one of Weights and
// FloatWeights is set; both nil means an unweighted graph.
type EdgeList struct {
	Src, Dst     []int64
	Weights      []int64
	FloatWeights []float64
	NumVertices  int64
}

// Len is the number of arcs.
func (e *EdgeList) Len() int { return len(e.Src) }

// Weighted reports whether the list carries weights.
func (e *EdgeList) Weighted() bool { return e.Weights != nil || e.FloatWeights != nil }

// GraphEdges copies e into the dense form graph.Build takes. It fails when
// the vertex count does not fit graph's int32 ids.
func (e *EdgeList) GraphEdges() (*graph.Edges, error) {
	if e.NumVertices > graph.MaxVertices {
		return nil, fmt.Errorf("gen: %d vertices do not fit int32 vertex ids", e.NumVertices)
	}
	out := &graph.Edges{
		NumVertices: int(e.NumVertices),
		Src:         make([]graph.VertexID, len(e.Src)),
		Dst:         make([]graph.VertexID, len(e.Dst)),
	}
	for i := range e.Src {
		out.Src[i] = graph.VertexID(e.Src[i])
		out.Dst[i] = graph.VertexID(e.Dst[i])
	}
	if e.Weights != nil {
		out.IntWeights = append([]int64(nil), e.Weights...)
	}
	if e.FloatWeights != nil {
		out.Float64Weights = append([]float64(nil), e.FloatWeights...)
	}
	return out, nil
}

// Default weight ranges.
const (
	DefaultMinWeight = 1
	DefaultMaxWeight = 100
	// Float weights default to [0, 1), as in the Graph500 SSSP kernel.
	DefaultMinFloatWeight = 0.0
	DefaultMaxFloatWeight = 1.0
)

// Graph500 R-MAT initiator probabilities; D is 1 − A − B − C = 0.05.
const (
	Graph500A = 0.57
	Graph500B = 0.19
	Graph500C = 0.19
)

type weightKind uint8

const (
	intWeights weightKind = iota
	floatWeights
	noWeights
)

type config struct {
	weights         weightKind
	minW, maxW      int64
	minFW, maxFW    float64
	a, b, c         float64
	permute         bool
	undirectedPairs bool
	memLimit        int64 // bytes the columns may take; 0: no limit
}

func defaultConfig() config {
	return config{
		weights: intWeights,
		minW:    DefaultMinWeight, maxW: DefaultMaxWeight,
		minFW: DefaultMinFloatWeight, maxFW: DefaultMaxFloatWeight,
		a: Graph500A, b: Graph500B, c: Graph500C,
		permute: true,
	}
}

// Option tunes a generator.
type Option func(*config)

// WithWeights draws integer weights uniformly from [minWeight, maxWeight]
// (both included). This is the default, with 1..100.
func WithWeights(minWeight, maxWeight int64) Option {
	return func(c *config) { c.weights, c.minW, c.maxW = intWeights, minWeight, maxWeight }
}

// WithFloatWeights draws float64 weights uniformly from [minWeight,
// maxWeight); with minWeight == maxWeight every weight is that value. The
// default range, for WithFloatWeights(DefaultMinFloatWeight,
// DefaultMaxFloatWeight), is [0, 1).
func WithFloatWeights(minWeight, maxWeight float64) Option {
	return func(c *config) { c.weights, c.minFW, c.maxFW = floatWeights, minWeight, maxWeight }
}

// ErrTooLarge is wrapped by the error of a generator whose columns would
// take more memory than WithMemoryLimit allows.
var ErrTooLarge = errors.New("too large for memory")

// WithMemoryLimit makes a generator refuse, with an error wrapping
// ErrTooLarge that states the estimate, a graph whose columns would take
// more than limit bytes: 16 bytes per arc for the ids, 8 more for weights
// (ListBytes). It is checked before anything is allocated. Default: no
// limit (0).
func WithMemoryLimit(limit int64) Option { return func(c *config) { c.memLimit = limit } }

// ListBytes is the memory the columns of an edge list of arcs arcs take
// under opts: 16 bytes per arc for Src and Dst, 8 more when weighted. It
// saturates at math.MaxInt64.
func ListBytes(arcs int64, opts ...Option) int64 {
	cfg, _ := newConfig(opts)
	return cfg.listBytes(arcs)
}

func (c *config) listBytes(arcs int64) int64 {
	perArc := int64(16)
	if c.weights != noWeights {
		perArc += 8
	}
	if arcs > math.MaxInt64/perArc {
		return math.MaxInt64
	}
	return arcs * perArc
}

// checkMemory refuses arcs arcs of what (a phrase naming the graph) when
// their columns would pass the memory limit.
func (c *config) checkMemory(what string, arcs int64) error {
	if need := c.listBytes(arcs); c.memLimit > 0 && need > c.memLimit {
		return fmt.Errorf("gen: %s: %w: %d arcs need about %s, more than the %s allowed",
			what, ErrTooLarge, arcs, HumanBytes(need), HumanBytes(c.memLimit))
	}
	return nil
}

// HumanBytes writes a byte count in binary units (KiB, MiB, GiB, TiB).
func HumanBytes(b int64) string {
	x := float64(b)
	for _, unit := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if x < 1024 || unit == "TiB" {
			if unit == "B" {
				return fmt.Sprintf("%d B", b)
			}
			return fmt.Sprintf("%.1f %s", x, unit)
		}
		x /= 1024
	}
	return ""
}

// Unweighted leaves both weight columns nil.
func Unweighted() Option { return func(c *config) { c.weights = noWeights } }

// WithRMATParams sets the R-MAT initiator probabilities a, b, c (d is
// 1 − a − b − c). Default: Graph500A, Graph500B, Graph500C. Ignored by
// Grid and Uniform.
func WithRMATParams(a, b, c float64) Option {
	return func(cfg *config) { cfg.a, cfg.b, cfg.c = a, b, c }
}

// WithVertexPermutation chooses whether RMAT relabels its vertices by a
// seeded random permutation (default true, as Graph500 does, so that the
// heavy vertices are not the low ids). Ignored by Grid and Uniform.
func WithVertexPermutation(permute bool) Option {
	return func(c *config) { c.permute = permute }
}

// WithUndirectedPairs makes RMAT and Uniform emit every generated edge in
// both directions with the same weight, one arc after the other, so that
// the list describes an undirected graph (and has twice the arcs). Grid
// always does so.
func WithUndirectedPairs() Option { return func(c *config) { c.undirectedPairs = true } }

func newConfig(opts []Option) (config, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	switch cfg.weights {
	case intWeights:
		if cfg.minW > cfg.maxW {
			return cfg, fmt.Errorf("gen: weight range %d:%d is empty", cfg.minW, cfg.maxW)
		}
	case floatWeights:
		if math.IsNaN(cfg.minFW) || math.IsNaN(cfg.maxFW) || math.IsInf(cfg.minFW, 0) || math.IsInf(cfg.maxFW, 0) {
			return cfg, errors.New("gen: float weight range must be finite")
		}
		if cfg.minFW > cfg.maxFW {
			return cfg, fmt.Errorf("gen: float weight range %g:%g is empty", cfg.minFW, cfg.maxFW)
		}
	}
	return cfg, nil
}

// chunkSize is the number of items (edges) one random stream covers. It is
// fixed, never derived from the number of threads, so that output does not
// depend on GOMAXPROCS.
const chunkSize = 1 << 16

// forChunks calls fn for each chunk of [0, total) on GOMAXPROCS goroutines.
// fn receives the chunk index and its half-open range.
func forChunks(total int64, fn func(chunk, lo, hi int64)) {
	chunks := (total + chunkSize - 1) / chunkSize
	workers := int64(runtime.GOMAXPROCS(0))
	workers = min(workers, chunks)
	var nextChunk atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				c := nextChunk.Add(1) - 1
				if c >= chunks {
					return
				}
				fn(c, c*chunkSize, min(total, (c+1)*chunkSize))
			}
		})
	}
	wg.Wait()
}

// arcsPerEdge is 2 with WithUndirectedPairs, else 1.
func (c *config) arcsPerEdge() int64 {
	if c.undirectedPairs {
		return 2
	}
	return 1
}

// newEdgeList allocates the columns of m drawn edges over n vertices: one
// arc each, or two (both directions) with WithUndirectedPairs; stride is
// the arcs per edge.
func (c *config) newEdgeList(n, m int64) (e *EdgeList, stride int64) {
	stride = 1
	if c.undirectedPairs {
		stride = 2
	}
	e = &EdgeList{Src: make([]int64, m*stride), Dst: make([]int64, m*stride), NumVertices: n}
	c.allocWeights(e, m*stride)
	return e, stride
}

// allocWeights makes the weight column of e for n arcs.
func (c *config) allocWeights(e *EdgeList, n int64) {
	switch c.weights {
	case intWeights:
		e.Weights = make([]int64, n)
	case floatWeights:
		e.FloatWeights = make([]float64, n)
	}
}

// fillWeights draws the weights of edges [lo, hi) of a chunk and writes
// weight k to arcs k*stride .. k*stride+stride-1, so that the two arcs of an
// undirected pair share one weight.
func (c *config) fillWeights(e *EdgeList, seed uint64, chunk, lo, hi int64, stride int64) {
	r := newStream(seed, purposeWeights, uint64(chunk))
	switch c.weights {
	case intWeights:
		span := uint64(c.maxW-c.minW) + 1 // 0 stands for the full 2^64 range
		for k := lo; k < hi; k++ {
			w := c.minW + int64(r.below(span))
			for j := range stride {
				e.Weights[k*stride+j] = w
			}
		}
	case floatWeights:
		width := c.maxFW - c.minFW
		for k := lo; k < hi; k++ {
			w := c.minFW + width*r.float()
			if w >= c.maxFW && width > 0 {
				w = math.Nextafter(c.maxFW, math.Inf(-1))
			}
			for j := range stride {
				e.FloatWeights[k*stride+j] = w
			}
		}
	}
}
