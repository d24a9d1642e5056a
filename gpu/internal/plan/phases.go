package plan

import (
	"runtime"
	"slices"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// The phases (Config.Seeds, Config.Phases): each later phase starts every
// source s of its own from min over its arcs (s, p, w) into earlier phases
// of w + d(p, t) (batched_seedfill_* in kernels/batched.cu), real path
// lengths, and expands only where a shorter path exists. On graphs with
// hubs most of a vertex's shortest paths leave through a hub (R-MAT 16,
// the top 5 % of vertices by degree computed: 8 % of the targets of a
// vertex next to one need correcting, the median none). Blocks holding
// fewer than half the vertices run one phase: their few hubs reach few of
// the other sources (R-MAT 20 in blocks of about 7,000 sources ran 13 %
// slower split). Weighted graphs' hub rows seed the rest more loosely, so
// a middle phase of the next-highest degrees tightens the last phase's
// seeds. H100, kernel ms of one block of every source, by phase ends
// (shares of the kernel sources; docs/benchmarks-history.md, "Stats layout: the host
// plan and the kernel", "More phases"):
//
//	                 0.15    0.4     0.15/0.4  0.2/0.5  0.1/0.3/0.6
//	R-MAT 16         316     299     278       279      282
//	email-Enron      46      50      50                 55
//	cond-mat-2005    76      71      65                 73
//	pgp-strong-2009  95      96      104                112

// seedsMinSources is the fewest kernel sources a block splits into phases:
// four groups. Not measured; below it a first phase of hubs is a group or
// two.
const seedsMinSources = 4 * BatchWidth

// phaseShares are the cumulative shares of g's kernel sources that end
// every phase but the last.
func phaseShares(g *graph.CSR, cfg *Config) []float64 {
	later := cfg.Phases
	if g.Weighted {
		later = cfg.PhasesWeighted
	}
	return append([]float64{cfg.Seeds}, later...)
}

// splitSeeded reorders plan's kernel sources (and rows) by falling
// out-degree and returns the ends of every phase but the last, at the
// cumulative shares given (each at least a group, rising). The sources of
// the degree a cut falls in are taken by vertex id, not in plan's order:
// a hub list dealt among devices (the GPU runner's shared hub rows) holds
// each hand's hubs together, and its plan's phases then split among the
// devices as evenly as the dealing (R-MAT 18's core on two devices: phases
// of 7,176 against 6,894 rows otherwise, the later device's wait at every
// phase's end; docs/benchmarks-history.md, "The last phase's rows cross while the
// blocks work").
func splitSeeded(g *graph.CSR, plan *Block, shares []float64) []int {
	ks := plan.Sources
	if plan.Rows == nil {
		plan.Rows = make([]int32, len(ks))
		for i := range plan.Rows {
			plan.Rows[i] = int32(i)
		}
	}
	idx := byDegree(g, ks, true)
	var cuts []int
	for _, share := range shares {
		c := min(len(ks), max(BatchWidth, int(share*float64(len(ks)))))
		if c >= len(ks) || (len(cuts) > 0 && c <= cuts[len(cuts)-1]) {
			break
		}
		cuts = append(cuts, c)
	}
	degree := func(j int32) int64 { return g.Offsets[ks[j]+1] - g.Offsets[ks[j]] }
	for _, c := range cuts {
		d := degree(idx[c])
		if degree(idx[c-1]) != d {
			continue
		}
		lo, hi := c-1, c+1
		for lo > 0 && degree(idx[lo-1]) == d {
			lo--
		}
		for hi < len(idx) && degree(idx[hi]) == d {
			hi++
		}
		slices.SortFunc(idx[lo:hi], func(a, b int32) int { return int(ks[a]) - int(ks[b]) })
	}
	sources, rows := make([]int32, len(ks)), make([]int32, len(ks))
	for i, j := range idx {
		sources[i], rows[i] = ks[j], plan.Rows[j]
	}
	plan.Sources, plan.Rows = sources, rows
	return cuts
}

// planSeeds lists, for every source after the first phase
// (plan.Sources[plan.Cuts[0]:]), its arcs into sources that earlier phases
// compute in their own row, and into vertices with a resident row
// (resRow: 1 + the row; nil for none), as plan.Seeds over plan.MinArcs.
// Each phase's sources are cut into chunks listed on every core, then
// joined in order.
func planSeeds(g *graph.CSR, plan *Block, resRow []int32) {
	bounds := append(slices.Clone(plan.Cuts), len(plan.Sources))
	rowOf := make([]int32, g.NumVertices) // 1 + the row of a source of an earlier phase, or a resident row
	copy(rowOf, resRow)
	for i, s := range plan.Sources[:bounds[0]] {
		rowOf[s] = plan.Rows[i] + 1
	}
	type part struct {
		arcs  []MinArc
		seeds []MinDerivation // First counts from the part's own arcs
	}
	workers := runtime.GOMAXPROCS(0)
	for p := 1; p < len(bounds); p++ {
		lo, hi := bounds[p-1], bounds[p]
		per := max(256, (hi-lo+workers-1)/workers)
		parts := make([]part, (hi-lo+per-1)/per)
		var wg sync.WaitGroup
		for c := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pt := &parts[c]
				from := lo + c*per
				for i, s := range plan.Sources[from:min(from+per, hi)] {
					first := int32(len(pt.arcs))
					for e := g.Offsets[s]; e < g.Offsets[s+1]; e++ {
						if row := rowOf[g.Targets[e]]; row != 0 {
							pt.arcs = append(pt.arcs, MinArc{row - 1, int64(e)})
						}
					}
					pt.seeds = append(pt.seeds, MinDerivation{plan.Rows[from+i], s, first, int32(len(pt.arcs)) - first})
				}
			}()
		}
		wg.Wait()
		for _, pt := range parts {
			at := int32(len(plan.MinArcs))
			plan.MinArcs = append(plan.MinArcs, pt.arcs...)
			for _, d := range pt.seeds {
				d.First += at
				plan.Seeds = append(plan.Seeds, d)
			}
		}
		for i, s := range plan.Sources[lo:hi] {
			rowOf[s] = plan.Rows[lo+i] + 1
		}
	}
}
