package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	Engine, Algorithm string
	Sources           []string // the sampled sources, as external ids
	Pairs             int64    // distances compared
	Mismatches        int64
	// First describes the first mismatch, empty when there is none.
	First string
}

// Verify runs q on samples of its sources drawn with seed (0: every
// source; more than the vertices: every vertex; a q with Query.Sources
// given runs those) and compares every distance with a serial oracle of
// internal/ref: BFS for hop counts, otherwise ref.Distances (Bellman-Ford
// where a weight is negative, Dijkstra otherwise). With
// Query.WithPredecessors it also checks the predecessors by property.
// With the stats layout it runs q through Run instead, as `pathctl run`
// does (the GPU reduces the stats on the device), and checks every
// source's stats row against the oracle's distances with a RowCheck:
// reachable, eccentricity, sum, closeness and harmonic. A mismatch is
// reported, not returned as an error; errors are failures to run. The
// report's Sources are the sources checked, repeats dropped. A negative
// samples is ErrInvalid.
func Verify(ctx context.Context, q *Prepared, samples int, seed uint64) (*VerifyReport, error) {
	if samples < 0 {
		return nil, fmt.Errorf("%w: %d samples: want 0 (every source) or more", ErrInvalid, samples)
	}
	g, opt := q.g, q.opt
	n := g.NumVertices()
	if opt.Sources == nil && samples > 0 {
		// The sample, in the order drawn, as a query of its own: the same
		// request from fewer sources, nothing resolved again.
		rng := rand.New(rand.NewPCG(seed, 0x70617468))
		drawn := make([]graph.VertexID, min(samples, n))
		for i, v := range rng.Perm(n)[:len(drawn)] {
			drawn[i] = graph.VertexID(v)
		}
		q = q.withSources(drawn)
		opt = q.opt
	}
	sources := q.sources
	// The sources checked, by name (every vertex where none were drawn),
	// so that the report counts what was checked.
	var names []string
	for _, s := range sources {
		names = append(names, g.vertexName(s))
	}
	// A negative self-loop a source reaches is refused as run refuses it:
	// no engine, and no oracle, sees the loop.
	if err := g.CSR.NegativeLoopCycle(opt.Algorithm, sources); err != nil {
		return nil, g.explain(err)
	}
	if opt.Layout == arrowio.LayoutStats {
		return verifyStats(ctx, q, names)
	}
	eng, release, err := runEngine(g, opt, len(sources))
	if err != nil {
		return nil, err
	}
	defer release()
	req := graph.Request{Algorithm: opt.Algorithm, WithPredecessors: opt.WithPredecessors, Delta: opt.Delta, Threads: opt.Threads}
	runner, err := prepare(ctx, g, eng, g.CSR, req, opt)
	if err != nil {
		return nil, g.explain(err)
	}
	defer runner.Close()
	rep := &VerifyReport{Engine: eng.Name(), Algorithm: describe(runner, opt.Algorithm), Sources: names}
	blk := graph.NewBlock(sources, n, runner.DistType(), opt.WithPredecessors)
	if err := runner.Run(ctx, blk); err != nil {
		return nil, g.explain(err)
	}
	hops := runner.DistType() == graph.DistInt32 && (opt.Algorithm.CountsHops() || !g.CSR.Weighted)
	switch blk.Type {
	case graph.DistInt32:
		err = verifyBlock[int32](g, blk, hops, rep)
	case graph.DistInt64:
		err = verifyBlock[int64](g, blk, hops, rep)
	case graph.DistFloat32:
		err = verifyBlock[float32](g, blk, hops, rep)
	case graph.DistFloat64:
		err = verifyBlock[float64](g, blk, hops, rep)
	}
	return rep, err
}

func verifyBlock[D graph.Number](g *Graph, blk *graph.Block, hops bool, rep *VerifyReport) error {
	n := blk.NumVertices
	for i, s := range blk.Sources {
		got := graph.Row[D](blk, i)
		var want []D
		var err error
		if hops && g.CSR.Weighted {
			var h []int32
			h, err = ref.BFS(g.CSR, s)
			want = make([]D, n)
			for v, x := range h {
				want[v] = D(x)
			}
		} else {
			want, err = ref.Distances[D](g.CSR, s)
		}
		if err != nil {
			return g.explain(err)
		}
		for v := range want {
			rep.Pairs++
			if got[v] != want[v] {
				rep.Mismatches++
				if rep.First == "" {
					rep.First = fmt.Sprintf("distance %s -> %s: engine %v, oracle %v",
						g.vertexName(s), g.vertexName(graph.VertexID(v)), show(got[v]), show(want[v]))
				}
			}
		}
		if blk.Pred != nil && !hops {
			pred := blk.Pred[i*n : (i+1)*n]
			if err := ref.CheckPredecessors(g.CSR, s, got, pred); err != nil {
				rep.Mismatches++
				if rep.First == "" {
					rep.First = fmt.Sprintf("predecessors from %s: %v", g.vertexName(s), err)
				}
			}
		}
	}
	return nil
}

func show[D graph.Number](d D) string {
	if d == graph.Infinity[D]() {
		return "unreachable"
	}
	return fmt.Sprint(d)
}

// verifyStats is Verify for the stats layout: one Run of q, whose
// sources are named names, whose rows a RowCheck compares with the oracle.
func verifyStats(ctx context.Context, q *Prepared, names []string) (*VerifyReport, error) {
	check, err := NewRowCheck(q, names)
	if err != nil {
		return nil, err
	}
	sum, err := q.Run(ctx, check.Observe)
	if err != nil {
		return nil, err
	}
	rep := check.Report()
	rep.Engine, rep.Algorithm, rep.Sources = sum.Engine, sum.Algorithm, names
	return rep, nil
}
