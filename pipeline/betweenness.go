package pipeline

// The betweenness layout (arrowio.LayoutBetweenness): Brandes's
// betweenness centrality of every vertex, from every source, k sampled
// ones or the given ones, rescaled as networkx's betweenness_centrality
// rescales (networkx 3.6, algorithms/centrality/betweenness.py, _rescale).
// The GPU engine computes the vertices' betweenness where the run takes
// it (betweenness_gpu.go), the CPU engine (cpu/betweenness.go) everything
// else, edge betweenness included.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
)

// BetweennessOptions are the betweenness layout's options, with networkx's
// meaning. The zero value is networkx's default: normalized, without
// endpoints, from every source.
type BetweennessOptions struct {
	// Unnormalized leaves the values unnormalized (networkx's
	// normalized=False): undirected values are still halved, each
	// unordered pair counting once.
	Unnormalized bool
	// Endpoints counts the ends of every path as lying on it.
	Endpoints bool
	// Sample, when above 0, runs from Sample sources drawn by SampleSources
	// with Seed, and scales as networkx scales its k sampled sources. It
	// cannot be combined with Query.Sources, and is at most the number
	// of vertices (all of them: the exact betweenness).
	Sample int
	// Seed draws the sample.
	Seed uint64
}

// SampleSources is the sample of k of n vertices that seed draws, in
// ascending order: a partial Fisher-Yates shuffle of 0..n-1 driven by
// splitmix64 (Steele, Lea and Flood 2014), step i swapping place i with
// place i + r mod (n - i) for the next output r. Every surface draws with
// it (it is a dozen lines in any language), so one seed is one sample
// everywhere; networkx's own sample comes from Python's Mersenne Twister
// and is not reproduced.
func SampleSources(n, k int, seed uint64) []graph.VertexID {
	k = min(max(k, 0), n)
	perm := make([]graph.VertexID, n)
	for i := range perm {
		perm[i] = graph.VertexID(i)
	}
	state := seed
	for i := range k {
		state += 0x9E3779B97F4A7C15
		z := state
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		j := i + int(z%uint64(n-i))
		perm[i], perm[j] = perm[j], perm[i]
	}
	sample := perm[:k]
	slices.Sort(sample)
	return sample
}

// resolveBetweenness checks q's betweenness request (Query.Betweenness)
// and resolves its sources: every vertex, a sample, or the given ones.
// Refused (ErrInvalid): targets, a cutoff, reverse, an algorithm other
// than auto, dijkstra (weights), bfs or bfs-level (hops), a sample beside
// sources or larger than the graph, and zero weights; negative weights
// are refused wrapping ErrNegativeWeight.
func resolveBetweenness(q *Prepared) error {
	g, opt := q.g, q.opt
	hops, err := betweennessHops(g, opt, opt.Betweenness)
	if err != nil {
		return err
	}
	n := g.NumVertices()
	switch bopt := opt.Betweenness; {
	case bopt.Sample > 0 && bopt.Sample < n:
		q.sources = SampleSources(n, bopt.Sample, bopt.Seed)
		q.sampled = q.sources
	case opt.Sources != nil:
		if q.sources, err = g.resolveSources(opt.Sources); err != nil {
			return err
		}
		q.sampled = q.sources
	default:
		q.sources, _ = g.resolveSources(nil)
	}
	q.hops = hops
	return nil
}

// runBetweenness computes q's betweenness layout and calls emit with its
// records: one row per vertex, in vertex order, or for edge-betweenness
// one row per edge (betweennessEdges). Sources, when given,
// restrict the sum to their paths: normalized, it is scaled as networkx
// scales a sample of those sources (the fraction of the pairs they
// start); unnormalized, it is their raw contribution (halved on
// undirected graphs), so that the results of a partition of the vertices
// into source lists add up to the exact unnormalized betweenness.
func runBetweenness(ctx context.Context, q *Prepared, emit func(arrow.RecordBatch) error) (*Summary, error) {
	start := time.Now()
	g, opt, bopt := q.g, q.opt, q.opt.Betweenness
	n := g.NumVertices()
	directed, given := !g.CSR.Undirected, opt.Sources != nil
	// 1. The raw sums, on the GPU engine where the run takes it
	// (betweenness_gpu.go), else on the CPU's.
	raw, sum, onGPU, err := betweennessOnGPU(ctx, q)
	if err != nil {
		return nil, err
	}
	if !onGPU {
		if raw, sum, err = betweennessOnCPUEngine(ctx, q); err != nil {
			return nil, err
		}
	}
	count := func(r arrow.RecordBatch) error {
		sum.Rows += r.NumRows()
		return emit(r)
	}
	// 2. Rescale as networkx (the arcs folded into edges first), and emit.
	if opt.Layout == arrowio.LayoutEdgeBetweenness {
		src, dst, values := betweennessEdges(g.CSR, raw)
		edgeOpt := bopt
		edgeOpt.Endpoints = true // networkx's _rescale of edges counts every target
		rescaleBetweenness(values, n, directed, edgeOpt, q.sampled, given)
		if err := arrowio.EdgeBetweennessRecords(g.Table.Vertices, src, dst, values, opt.Allocator, count); err != nil {
			return nil, err
		}
	} else {
		rescaleBetweenness(raw, n, directed, bopt, q.sampled, given)
		if err := arrowio.BetweennessRecords(g.Table.Vertices, raw, opt.Allocator, count); err != nil {
			return nil, err
		}
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// betweennessOnCPUEngine is q's raw sums on the CPU engine: per vertex,
// or for edge-betweenness per arc, with the run's summary.
func betweennessOnCPUEngine(ctx context.Context, q *Prepared) ([]float64, *Summary, error) {
	g, opt, sources, hops := q.g, q.opt, q.sources, q.hops
	n := g.NumVertices()
	method := betweennessMethod(hops)
	fmt.Fprintf(opt.Log, "pathctl: engine cpu, betweenness (Brandes, %s per source), %d sources, %d vertices, %d arcs\n",
		method, len(sources), n, g.CSR.NumEdges())
	copt := cpu.BetweennessOptions{Endpoints: opt.Betweenness.Endpoints, Hops: hops}
	if opt.Progress != nil { // each block of sources as it is summed
		total := int64(len(sources))
		copt.Progress = func(done int) { opt.Progress(int64(done), total) }
	}
	engine := cpu.New(cpu.WithThreads(opt.Threads))
	sum := &Summary{Engine: "cpu", Algorithm: "betweenness (Brandes, " + method + ")", Sources: int64(len(sources)),
		Pairs: int64(len(sources)) * int64(n), Blocks: 1}
	if opt.Layout == arrowio.LayoutEdgeBetweenness {
		sum.Algorithm = "edge " + sum.Algorithm
		arcs, err := engine.EdgeBetweenness(ctx, g.CSR, sources, copt)
		return arcs, sum, err
	}
	raw, err := engine.Betweenness(ctx, g.CSR, sources, copt)
	return raw, sum, err
}

// betweennessMethod names the search per source.
func betweennessMethod(hops bool) string {
	if hops {
		return "BFS"
	}
	return "Dijkstra"
}

// betweennessHops checks a betweenness request and reports whether it
// counts hops (an unweighted graph, or the bfs algorithms) rather than
// weights.
func betweennessHops(g *Graph, opt Options, bopt BetweennessOptions) (bool, error) {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: betweenness: "+format, append([]any{ErrInvalid}, args...)...)
	}
	switch {
	case opt.Targets != nil:
		return false, invalid("targets are not an option: every vertex is a target")
	case opt.HasCutoff:
		return false, invalid("a cutoff is not an option: it counts every shortest path")
	case opt.Reverse:
		return false, invalid("reverse is not an option")
	case bopt.Sample < 0:
		return false, invalid("k %d: want 1 or more sampled sources", bopt.Sample)
	case bopt.Sample > 0 && opt.Sources != nil:
		return false, invalid("k samples the sources; give k or the sources, not both")
	case bopt.Sample > g.NumVertices():
		return false, invalid("k %d is more than the graph's %d vertices", bopt.Sample, g.NumVertices())
	case bopt.Endpoints && opt.Layout == arrowio.LayoutEdgeBetweenness:
		return false, invalid("endpoints is an option of the vertices' betweenness, not of edge-betweenness (networkx's edge betweenness has none)")
	}
	var hops bool
	switch opt.Algorithm {
	case graph.Auto, graph.Dijkstra:
		hops = !g.CSR.Weighted
	case graph.BFS, graph.BFSLevel:
		hops = true
	default:
		return false, invalid("algorithm %s: betweenness runs dijkstra (weights) or bfs (hops), auto choosing by the weights", opt.Algorithm)
	}
	if hops {
		return true, nil
	}
	if u, v, w, ok := nonPositiveEdge(g.CSR); ok {
		edge := fmt.Sprintf("%s -> %s", g.vertexName(u), g.vertexName(v))
		if w < 0 {
			return false, fmt.Errorf("%s: negative weight %v on edge %s: betweenness needs non-negative weights: %w", g.Table.Name, w, edge, ErrNegativeWeight)
		}
		return false, invalid("%s: edge %s weighs 0: zero weights are not supported (shortest paths then tie in ways that depend on the search order, networkx's included); give them a positive weight, or count hops with --unweighted", g.Table.Name, edge)
	}
	return false, nil
}

// nonPositiveEdge finds an arc of weight 0 or less, a negative one first:
// the negative self-loops the CSR keeps aside, then the rows.
func nonPositiveEdge(csr *graph.CSR) (u, v graph.VertexID, w float64, found bool) {
	if len(csr.NegativeLoops) > 0 {
		l := csr.NegativeLoops[0]
		return l.Vertex, l.Vertex, l.Weight, true
	}
	zero := false
	var zu, zv graph.VertexID
	for from := range csr.NumVertices {
		for k := csr.Offsets[from]; k < csr.Offsets[from+1]; k++ {
			x := csr.WeightAt(k)
			if x < 0 {
				return graph.VertexID(from), csr.Targets[k], x, true
			}
			if x == 0 && !zero {
				zero, zu, zv = true, graph.VertexID(from), csr.Targets[k]
			}
		}
	}
	return zu, zv, 0, zero
}

// rescaleBetweenness scales the raw sums b in place as networkx's _rescale
// does (n vertices, b one value per vertex, or per edge with Endpoints as
// networkx rescales edges; sampled nil: every vertex a source): with N the
// pairs' possible targets (n with endpoints, else n - 1) and K the sources (N
// when all), normalized values are divided by K·(N - 1), the ordered pairs
// a vertex may lie between, and unnormalized ones multiplied by N / K and
// halved on undirected graphs. Without endpoints, a sample's own vertices
// are counted over K - 1 sources (NaN for a sample of one, as networkx).
// Nothing is scaled when N < 2. Given sources (given) unnormalized are not
// extrapolated: their raw sums are kept, halved on undirected graphs.
func rescaleBetweenness(b []float64, n int, directed bool, bopt BetweennessOptions, sampled []graph.VertexID, given bool) {
	bigN := n - 1
	if bopt.Endpoints {
		bigN = n
	}
	if bigN < 2 {
		return
	}
	correction := 2.0
	if directed {
		correction = 1
	}
	scaleAll := func(s float64) {
		for v := range b {
			b[v] *= s
		}
	}
	if given && bopt.Unnormalized {
		scaleAll(1 / correction)
		return
	}
	k := float64(bigN)
	if sampled != nil {
		k = float64(len(sampled))
	}
	if sampled == nil || bopt.Endpoints {
		if !bopt.Unnormalized {
			scaleAll(1 / (k * float64(bigN-1)))
		} else {
			scaleAll(float64(bigN) / (k * correction))
		}
		return
	}
	var source, other float64
	if !bopt.Unnormalized {
		source, other = math.NaN(), 1/(k*float64(bigN-1))
		if k > 1 {
			source = 1 / ((k - 1) * float64(bigN-1))
		}
	} else {
		source, other = math.NaN(), float64(bigN)/(k*correction)
		if k > 1 {
			source = float64(bigN) / ((k - 1) * correction)
		}
	}
	isSource := make([]bool, len(b))
	for _, s := range sampled {
		isSource[s] = true
	}
	for v := range b {
		if isSource[v] {
			b[v] *= source
		} else {
			b[v] *= other
		}
	}
}
