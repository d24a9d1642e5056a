package gpu

// RunStats (runner.go): the stats layout's reductions run on the device,
// four words per source brought back and turned into graph.Stats.

import (
	"context"
	"errors"
	"math"

	"github.com/pathctl/pathctl/graph"
)

// statsWords is the number of 8-byte words kernels/stats.cu writes per
// source: reachable, eccentricity, sum, harmonic.
const statsWords = 4

// RunStats computes the stats layout's reductions (design.md, "Outputs")
// from every source on the device: the distance rows never leave it, only
// four words per source do, and closeness is derived here from reachable
// and sum with graph.ComputeStats' expression. Integer sums, reachable
// counts and eccentricities equal graph.ComputeStats' exactly; float sums
// and harmonic sums are added in another order than the CPU's vertex order,
// so they may differ in the last bits (the same bits on every run). Errors
// are those of Run. A narrowed runner (Narrowed) reduces on the device
// too, over the targets' columns within the cutoff, as graph.ComputeStats
// does a narrowed block (gather.go); one that selects the k nearest
// refuses it. Under plan.Config.OneSlotStats its blocks allocate one
// result slot's rows (StatsBytesPerSource), and under plan.Config.HubRows
// small blocks keep the hubs' rows beside them (hubs.go).
func (r *Runner) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.narrow.nearestK > 0 {
		return nil, errors.New("gpu: RunStats of a runner that selects the k nearest: the k nearest are a pairs result")
	}
	if err := checkSources(sources, r.n); err != nil {
		return nil, err
	}
	st := graph.NewStats(sources, r.distType)
	if len(sources) == 0 {
		return st, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("gpu: run on a closed runner")
	}
	words := make([]uint64, statsWords*len(sources))
	cycleSource := graph.VertexID(-1)
	tracef(r.e.dev.ordinal, "stats of %d sources", len(sources))
	defer tracef(r.e.dev.ordinal, "stats of %d sources done", len(sources))
	// The algorithm ch reduces a whole block's words from its table as the
	// block's last phase (ch.go).
	fromTable := r.ch != nil && !r.Narrowed()
	if fromTable {
		r.ch.stats = true
		defer func() { r.ch.stats = false }()
	}
	err := r.e.dev.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		if err := r.narrow.uploadTargets(r.e.dev); err != nil {
			return err
		}
		return runChunks(len(sources), &r.buf.fit, r.releaseBlock, func(lo, hi int) error {
			c, err := r.compute(sources[lo:hi], r.buf.statsSlot(), r.bk.cfg.OneSlotStats)
			if err != nil {
				return err
			}
			if c >= 0 {
				cycleSource = c
				return errCycle
			}
			dv := r.e.dev
			if !fromTable {
				if r.Narrowed() {
					err = dv.launch("stats_narrow_"+typeSuffix(r.distType), hi-lo, r.narrow.statsArgs(hi-lo, r.buf.dist.ptr, r.buf.sources.ptr, r.buf.stats.ptr)...)
				} else {
					err = dv.launch("stats_"+typeSuffix(r.distType), hi-lo, r.buf.dist.ptr, int32(r.n), r.buf.sources.ptr, int32(hi-lo), r.buf.stats.ptr)
				}
				r.kernelTime += dv.lastKernel
				if err != nil {
					return err
				}
			}
			part := asBytes(words[statsWords*lo : statsWords*hi])
			r.buf.downloaded.Add(int64(len(part)))
			return dv.download(part, r.buf.stats.ptr, &r.buf.stage)
		})
	})
	if errors.Is(err, errCycle) {
		return nil, negativeCycle(r.g, cycleSource)
	}
	if err != nil {
		return nil, err
	}
	fillStats(st, words, r.n)
	if r.Narrowed() && r.req.Targets != nil {
		narrowCloseness(st, r.req.Targets)
	}
	return st, nil
}

// fillStats decodes the words of kernels/stats.cu into st.
func fillStats(st *graph.Stats, words []uint64, n int) {
	isFloat := st.Type.IsFloat()
	for i := range st.Sources {
		w := words[statsWords*i : statsWords*(i+1)]
		reach := int64(w[0])
		st.Reachable[i] = reach
		st.Eccentricity[i] = math.Float64frombits(w[1])
		var total float64
		if isFloat {
			st.SumFloat[i] = math.Float64frombits(w[2])
			total = st.SumFloat[i]
		} else {
			st.SumInt[i] = int64(w[2])
			total = float64(st.SumInt[i])
		}
		st.Harmonic[i] = math.Float64frombits(w[3])
		if reach > 0 && total > 0 && n > 1 {
			st.Closeness[i] = (float64(reach) / total) * (float64(reach) / float64(n-1))
		}
	}
}
