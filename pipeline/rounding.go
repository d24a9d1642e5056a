package pipeline

// Float32 weights (design.md, "Distance types"): their distances are
// computed in float64 and rounded once to float32 as the results leave
// the engine. Every path sum of float32 weights that share one power of
// two is exact in float64, so the float32 result is the exact distance
// rounded to nearest, equal to scipy's float64 distances cast to float32;
// sums rounded in float32 at every step would drift from it, and they
// keep the GPU from deriving rows from others (gpu's derivesExactly),
// which is what makes its integer runs fast.
//
// The contract, where a step sees both the float64 distance and its
// rounding:
//   - a cutoff compares the float64 distance (the engine clips its float64
//     rows, then they are rounded);
//   - the k nearest are chosen on the rounded values, ties by vertex order
//     (rows are rounded before the selection);
//   - the stats layout's sum and harmonic are accumulated in float64 over
//     the float64 distances; its eccentricity is the largest distance
//     rounded to float32, the largest of the rounded row;
//   - the nearest layout picks each vertex's nearest source on the float64
//     distance, ties by the smaller source, and rounds the distance;
//   - a matrix asked for float64 values (--matrix-type float64) carries
//     the float64 distances themselves.
//
// An explicit --dist-type float64 keeps float64 results; --dist-type
// float32, or none, rounds.

import (
	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// computeInFloat64 makes bopt build float64 arcs for float32 weights
// asked for as float32 distances (no --dist-type, or float32) and reports
// whether it did: the graph's results are then rounded to float32. Call
// it after checkDistanceRange, which judges float32's range.
func computeInFloat64(t *arrowio.EdgeTable, bopt *graph.BuildOptions) bool {
	if t.Edges.Float32Weights == nil || (bopt.DistType != 0 && bopt.DistType != graph.DistFloat32) {
		return false
	}
	bopt.DistType = graph.DistFloat64
	return true
}

// roundsRuns reports whether g's results of algorithm a are float64
// distances rounded to float32 (computeInFloat64): a weighted run of a
// graph whose float32 weights are computed in float64.
func roundsRuns(g *Graph, a graph.Algorithm) bool {
	return g.rounds && !countsHops(g, a)
}

// roundRows rounds every cell of blk's float64 rows to the nearest float32,
// in place and still as float64 (Infinity stays), on every core, so that
// the k nearest are chosen on the values the result carries.
func roundRows(blk *graph.Block, threads int) {
	d, ok := blk.Dist.([]float64)
	if !ok {
		return
	}
	forCells(blk, threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = float64(float32(d[i]))
		}
	})
}

// forCells runs body over blk's cells [lo, hi) in chunks of whole rows, on
// up to threads goroutines (graph.ForRowChunks).
func forCells(blk *graph.Block, threads int, body func(lo, hi int)) {
	w := blk.Width()
	graph.ForRowChunks(len(blk.Sources), w, threads, func(first, end int) { body(first*w, end*w) })
}

// float32Block returns blk's float64 distances rounded to float32 in a
// block of their own, with blk's sources, columns and predecessors; blk's
// memory goes back (Recycle) once they are copied.
func float32Block(blk *graph.Block, threads int) *graph.Block {
	d, ok := blk.Dist.([]float64)
	if !ok {
		return blk
	}
	out := *blk
	f := make([]float32, len(d))
	forCells(blk, threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f[i] = float32(d[i])
		}
	})
	out.Dist, out.Type, out.Recycle = f, graph.DistFloat32, nil
	out.Valid, out.ValidSet, out.Nulls = nil, false, 0
	if blk.Recycle != nil {
		blk.Recycle()
	}
	return &out
}

// float32Stats is st, of float64 distances, as the stats of their float32
// rounding: the eccentricity rounded (the largest of the rounded row),
// the sums and counts as they are (float64, over the float64 distances).
func float32Stats(st *graph.Stats) *graph.Stats {
	if st == nil || st.Type != graph.DistFloat64 {
		return st
	}
	out := *st
	out.Type = graph.DistFloat32
	out.Eccentricity = make([]float64, len(st.Eccentricity))
	for i, e := range st.Eccentricity {
		out.Eccentricity[i] = float64(float32(e))
	}
	return &out
}

// float32Nearest is res, of float64 distances, with its distances rounded
// to float32 and its sources as they are.
func float32Nearest(res *graph.Nearest) *graph.Nearest {
	d, ok := res.Dist.([]float64)
	if !ok {
		return res
	}
	f := make([]float32, len(d))
	for i, x := range d {
		f[i] = float32(x)
	}
	return &graph.Nearest{Type: graph.DistFloat32, Dist: f, Source: res.Source}
}
