package plan

import (
	"fmt"
	"math"
)

// BatchWidth is the number of sources one warp of the batched kernel
// relaxes together (one bit per source in a 32-bit frontier word).
const BatchWidth = 32

// Order is how a block's kernel sources are grouped into warps. Rows are
// written back in the block's order whatever the order of the kernel.
type Order string

const (
	// OrderCluster gathers each group of BatchWidth sources from a
	// breadth-first search around a seed, so that the group's sources are
	// close in the graph, share most of their shortest-path trees, change
	// in the same rounds and let a warp's walk of an arc serve more lanes.
	OrderCluster Order = "cluster"
	// OrderRank sorts the sources by breadth-first rank from the vertex
	// of highest out-degree.
	OrderRank Order = "bfs"
	// OrderID sorts the sources by vertex id: a group is a run of
	// consecutive vertices, whose trees overlap where the graph's own
	// numbering keeps neighbours together.
	OrderID Order = "id"
	// OrderBlock keeps the block's own order.
	OrderBlock Order = ""
)

// NearFarMode is when the batched kernel runs near-far rounds
// (Config.NearFar).
type NearFarMode string

const (
	// NearFarAuto runs them on large weighted graphs that look like
	// meshes (Config.NearFar says which).
	NearFarAuto NearFarMode = ""
	// NearFarOn runs them on every graph.
	NearFarOn NearFarMode = "on"
	// NearFarOff never runs them: the threshold rounds (Step).
	NearFarOff NearFarMode = "off"
)

// Config is every tuning choice of the batched kernel's plan and of its
// rounds. The zero value turns every reduction off and is not valid
// (ClusterChunk is 0); start from DefaultConfig.
type Config struct {
	// Order groups the kernel sources into warps.
	Order Order
	// Leaves leaves the leaves of undirected graphs out of the kernel
	// and derives their rows from their parents'. Integer weights, or
	// floats with exact sums (ExactFloats), as for Mins and Seeds.
	Leaves bool
	// Mins leaves sources all of whose arcs reach kernel sources of the
	// block out of the kernel, and derives their rows as minimums over
	// their arcs.
	Mins bool
	// Seeds is the share of a block's kernel sources, those of highest
	// out-degree, that a first phase computes alone; 0 runs one phase.
	// Not on graphs that look like meshes unless SeedsOnMeshes, nor in
	// blocks holding fewer than SeedsMinShare of the vertices.
	Seeds float64
	// SeedsMinShare is the least share of the graph's vertices a block
	// must hold to run phases (phases.go: a small block's few hubs reach
	// few of its other sources).
	SeedsMinShare float64
	// SeedsOnMeshes lets graphs that look like meshes run phases too
	// (tests and benchmarks).
	SeedsOnMeshes bool
	// Phases are the cumulative shares of the kernel sources that end the
	// phases after the first on graphs of unit weights (the last phase
	// takes the rest); empty runs two phases. PhasesWeighted is the same
	// for weighted graphs.
	Phases, PhasesWeighted []float64
	// ClusterChunk is the fewest rows OrderCluster gives one core: the
	// rows, in rank order, are cut into contiguous chunks of whole groups,
	// clustered apart. Meshes always cluster on one core.
	ClusterChunk int
	// DeltaScale times the mean weight is the step by which the round
	// threshold rises per round (Step); 0 turns the threshold off.
	DeltaScale float64
	// StepMeshesOnly keeps the threshold to graphs that look like meshes.
	StepMeshesOnly bool
	// ExactFloats plans float-weighted graphs like integer ones (leaves,
	// minimums, phases) where every sum the kernels form is exact
	// (ExactSumsOf), in blocks of more than one group: then a derived row
	// equals the one the kernel would compute bit for bit.
	ExactFloats bool
	// Sparse is the most sources of a group that an expansion may carry
	// and still go through the round kernel's sparse relaxation (lanes
	// spread over sources × arcs) rather than one lane per source on every
	// arc; 0 turns it off. The plan does not read it: the round kernel
	// takes it as an argument.
	Sparse int
	// KernelCutoff makes the rounds of a request with a cutoff relax no
	// arc past it, and the derived rows clip at it, so that the search
	// stops at the cutoff's radius (kernels/batched.cu, batchedRound).
	// Off, the kernels compute full rows and only the gather clips them
	// (gpu/gather.go): slower, the same results. The plan does not read
	// it: the runner plans with the cutoff (Graph.StartWithin) only when
	// the kernel applies it.
	KernelCutoff bool
	// NearFarMode is when the rounds are near-far rounds
	// (kernels/batched.cu, nearFarRound): a bound shared by every group
	// that moves by a bucket width only once nothing at most it is left to
	// expand, with the lanes past it waiting in a pile that no round reads,
	// instead of the threshold that rises by Step every round. Step and
	// DeltaScale do not apply to near-far rounds.
	NearFarMode NearFarMode
	// NearFarMinVertices is the fewest vertices of a graph on which
	// NearFarAuto runs near-far rounds.
	NearFarMinVertices int
	// NearFarScale times the mean weight is the bucket width of near-far
	// rounds when the request names none.
	NearFarScale float64
	// NearFarOwn is the most relaxations (sources of a frontier word times
	// the vertex's arcs) that one thread of a near-far round makes alone
	// for a word: such light words are gathered 32 at a time, one per lane
	// of a warp; larger words go to the whole warp (Sparse says how). 0:
	// every word to the warp. The plan does not read it.
	NearFarOwn int
	// CutoffReach is the share of the vertices under which the balls of a
	// kernel's cutoff count as small (cutoff.go): a block under such a
	// cutoff runs without minimums and in one phase. 0 never.
	CutoffReach float64
	// OneSlotStats makes the GPU runner's stats blocks (RunStats) hold
	// one set of result rows instead of the two that Start alternates
	// between: the stats are reduced on the device as soon as a block's
	// rows are final, and nothing copies rows out while the next block
	// computes, so the second set only takes room. Blocks then hold 1.5×
	// the sources for the batched kernel's int32 rows (8 bytes per source
	// and vertex instead of 12), and the reductions that need large
	// blocks (leaves, minimums, phases) apply to more graphs. Off, the
	// stats blocks are sized and allocated as Start's. The plan does not
	// read it: the runner sizes and allocates its buffers by it.
	OneSlotStats bool
	// HubRows, when positive, makes the GPU runner's stats blocks that
	// hold fewer sources than the graph has vertices keep the rows of the
	// graph's HubRows vertices of highest out-degree on the device
	// (bounded by HubShare), computed once beside the first such block and
	// read by every block's plan as resident rows (StartResident): hubs
	// among the block's sources are copied, leaves of a hub and minimums
	// over hubs are derived, and blocks of one phase start their sources
	// from the hubs' rows.
	// Not with predecessors or a cutoff in the kernel; 0 keeps
	// no rows; HubRowsAuto as many as the runner's SizeStatsRun gives a
	// run that no one block holds (none for a block run without it). The
	// plan does not read it: the runner does.
	HubRows int
	// HubShare bounds the hub rows to a HubShare-th of the rows the
	// budget holds, where the runner sizes them for a run, else to one
	// per HubShare of a block's sources; 0 bounds them by the block's
	// capacity alone. The plan does not read it: the runner does.
	HubShare int
	// HubCore chooses the hub rows among the vertices whose rows a block
	// of every vertex computes in the kernel (Graph.Core) instead of among
	// every vertex (Graph.Hubs), both by falling out-degree: the rows a
	// block cannot derive when every other row is at hand. The plan does
	// not read it: the runner does.
	HubCore bool
	// HubSeeds and HubPhases, where HubSeeds is positive, are Seeds and
	// both Phases and PhasesWeighted for the plan of the hub rows (HubPlan):
	// a block of the core alone, whose later phases seed from every
	// earlier one's rows. The runner reads them, the plan does not.
	HubSeeds  float64
	HubPhases []float64
	// HubPack lets runners that share their hub rows among devices send a
	// phase's rows packed in 16 bits where every finite distance fits
	// (int32 distances, devices that reach each other's memory;
	// gpu/hubsend.go). The plan does not read it: the runner does.
	HubPack bool
	// BlockOrder makes the GPU runner order the sources of a stats run of
	// several blocks by their breadth-first rank (Graph.BlockOrder), so
	// that each block holds neighbourhoods whose rows derive from each
	// other; the pipeline writes the rows in the caller's order. The plan
	// does not read it: the runner does.
	BlockOrder bool
	// ScratchBytes, when positive, gives the GPU runner's stats blocks
	// (OneSlotStats) working distances of at most this many bytes instead
	// of a row per source: a phase runs its sources in slices that fit
	// (at least one group each), each slice's rounds to convergence and
	// its transpose into the result rows before the next, its frontier
	// beside it. A source then costs its result row alone (4 bytes per
	// vertex for int32 instead of 8), and blocks hold twice the sources,
	// less the scratch. Not with predecessors; 0 keeps a
	// working row per source.
	// Not measured yet (issue 18). The plan does not read it: the runner
	// does.
	ScratchBytes int64
	// ScratchMinShare is the share of the vertices the stats blocks must
	// hold with the scratch for the GPU runner to take it (and the blocks
	// without it must not already hold every source); 0 takes it wherever
	// ScratchBytes allows. The runner decides once, when it is prepared,
	// from the device's free memory.
	ScratchMinShare float64
}

// HubPlan is c for the plan of the hub rows: its Seeds and phases are
// HubSeeds and HubPhases where HubSeeds is positive, c's own otherwise.
func (c Config) HubPlan() Config {
	if c.HubSeeds > 0 {
		c.Seeds = c.HubSeeds
		c.Phases, c.PhasesWeighted = c.HubPhases, c.HubPhases
	}
	return c
}

// HubRowsAuto is the Config.HubRows that lets the runner size the hub
// rows for each stats run.
const HubRowsAuto = -1

// DefaultConfig is what the GPU engine runs.
func DefaultConfig() Config {
	return Config{
		// docs/benchmarks-history.md, "What changed, and what was tried": R-MAT 16
		// 1,145 → 1,013 ms, grid 256² 3,484 → 2,241 ms.
		Order: OrderCluster,
		// Same section: R-MAT 16 kernels 1,019 → 847 ms.
		Leaves: true,
		// docs/benchmarks-history.md, "What changed (kernel time of one block of every
		// source, ...)": R-MAT 16 388 ms (from 842), grid 256² 1,377 ms
		// (from 2,233).
		Mins: true,
		// docs/benchmarks-history.md, "Stats layout: the host plan and the kernel"
		// (the first phase's share, then "More phases"), tried again in
		// "The kernel: expansions of few sources spread over the arcs".
		Seeds: 0.15,
		// phases.go: R-MAT 20 in blocks of about 7,000 sources (1.3 %)
		// ran 13 % slower split. docs/benchmarks-history.md, "Issue 18: throughput,
		// float weights, the small run" (its locality settings): R-MAT 18
		// in blocks of about 16 % ran 11.1 → 9.0 s split (0.1), R-MAT 16
		// in one block unchanged.
		SeedsMinShare:  0.1,
		PhasesWeighted: []float64{0.4},
		// docs/benchmarks-history.md, "Stats layout: the host plan and the kernel":
		// R-MAT 16's plan 66 → 39 ms on 2 cores with chunks.
		ClusterChunk: 32 * BatchWidth,
		// H200, BenchmarkBatchedStep; docs/benchmarks-history.md, "GPU engine after the
		// second slice, H200": grid 331 ms of kernels with the threshold,
		// 503 without. See Step.
		DeltaScale:     0.5,
		StepMeshesOnly: true,
		// Issue 17's cutoff row: R-MAT 18 at the 1st percentile ran 0.21×
		// the full run's speed with the cutoff applied only at the gather
		// (docs/benchmarks-history.md, "Issue 17: the narrow queries against scipy").
		KernelCutoff: true,
		// Not measured: cutoff.go says what it trades.
		CutoffReach: 0.05,
		// Not measured yet (issue 18): float graphs with exact sums take
		// the integer path's reductions, which the kernel's results cannot
		// tell apart from its own.
		ExactFloats: true,
		// docs/benchmarks-history.md, "Issues 18 and 19: stats sources in breadth-first
		// order": R-MAT 18 stats in 3 blocks on an H100 6.58 → 6.05 s, in 2
		// on an H200 3.83 → 3.19 s.
		BlockOrder: true,
		// docs/benchmarks-history.md, "Issues 18 and 19: hub rows": R-MAT 18 every
		// source on an H100 6.1 → 3.6 s with 40,000 hub rows beside blocks
		// of 43,521 (half the rows the budget holds), on an H200 3.2 →
		// 2.5-2.8 s with the core's 56,278; on two H200s 2.95 → 2.1-2.4 s.
		HubRows:  HubRowsAuto,
		HubShare: 2,
		HubCore:  true,
		// docs/benchmarks-history.md, "The core's plan in eight phases (issues 18 and
		// 19)": R-MAT 18's core in 8 phases instead of 3, every source on
		// one H200 2.42-2.44 -> 2.04-2.08 s, on two 1.30-1.32 -> 1.14-1.15 s.
		HubSeeds:  0.08,
		HubPhases: []float64{0.2, 0.35, 0.5, 0.65, 0.8, 0.9},
		// docs/benchmarks-history.md, "Hub rows in 16 bits (`hubpack`, on by
		// default)": R-MAT 18, every source, on two H200s 1.78-1.79 ->
		// 1.81-1.83 x (the two devices' median 1.145-1.149 -> 1.130-1.142 s).
		HubPack: true,
		// docs/benchmarks-history.md, "The kernel: expansions of few sources spread
		// over the arcs": R-MAT 16 288.7 → 168.5 ms.
		Sparse: 16,
		// Not measured yet (issue 18): R-MAT 18's stats blocks on an
		// 80 GB device hold 1.5× the sources (TestStatsBlockGrowth).
		OneSlotStats: true,
		// docs/benchmarks-history.md, "Issue 18 (stats, every source)" (one H200):
		// R-MAT 18 5.67 → 3.83 s with a scratch of 8 GiB, its blocks 45 %
		// of the vertices instead of 26 %; R-MAT 20, whose blocks stay
		// at 3.3 %, 156 → 166 s, so below a quarter it is declined.
		ScratchBytes:    8 << 30,
		ScratchMinShare: 0.25,
		// The million-vertex grid of issue 17's OD row (999,887 vertices)
		// takes near-far rounds, the 256² grid (65,536) keeps the
		// threshold rounds of docs/benchmarks-history.md's figures. Buckets of four
		// times the mean weight: OD 4,096 × 4,096 kernels 3.02 s against
		// 4.55 s at 1× and 3.67 s at 2× (one H200; threshold rounds 8.04
		// s; docs/benchmarks-history.md, "Issue 17 (H100)").
		NearFarMinVertices: 1 << 18,
		NearFarScale:       4,
		// Not measured: a grid vertex's word holds one or two sources of
		// its group and four arcs.
		NearFarOwn: 8,
	}
}

// Check reports whether c is a valid configuration, naming the first
// field that is not.
func (c Config) Check() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	return nil
}

// check is Check without the package's prefix (Apply names the setting).
func (c Config) check() error {
	switch c.Order {
	case OrderCluster, OrderRank, OrderID, OrderBlock:
	default:
		return fmt.Errorf("unknown source order %q", c.Order)
	}
	share := func(name string, x float64) error {
		if !(x >= 0 && x <= 1) {
			return fmt.Errorf("%s share %v outside [0, 1]", name, x)
		}
		return nil
	}
	if err := share("seeds", c.Seeds); err != nil {
		return err
	}
	if err := share("seeds minimum", c.SeedsMinShare); err != nil {
		return err
	}
	for _, x := range c.Phases {
		if err := share("phase", x); err != nil {
			return err
		}
	}
	for _, x := range c.PhasesWeighted {
		if err := share("weighted phase", x); err != nil {
			return err
		}
	}
	if err := share("hub seeds", c.HubSeeds); err != nil {
		return err
	}
	for _, x := range c.HubPhases {
		if err := share("hub phase", x); err != nil {
			return err
		}
	}
	if err := share("cutoff reach", c.CutoffReach); err != nil {
		return err
	}
	if c.ClusterChunk < 1 {
		return fmt.Errorf("cluster chunk of %d rows, want at least 1", c.ClusterChunk)
	}
	if !(c.DeltaScale >= 0) || math.IsInf(c.DeltaScale, 0) {
		return fmt.Errorf("threshold step scale %v, want a finite value ≥ 0", c.DeltaScale)
	}
	if !(c.ScratchMinShare >= 0 && c.ScratchMinShare <= 1) {
		return fmt.Errorf("scratch minimum share %v, want 0 .. 1", c.ScratchMinShare)
	}
	if c.ScratchBytes < 0 {
		return fmt.Errorf("scratch of %d bytes, want at least 0", c.ScratchBytes)
	}
	if c.HubRows < HubRowsAuto {
		return fmt.Errorf("%d hub rows, want at least 0 (or HubRowsAuto)", c.HubRows)
	}
	if c.HubShare < 0 {
		return fmt.Errorf("hub share %d, want at least 0", c.HubShare)
	}
	switch c.NearFarMode {
	case NearFarAuto, NearFarOn, NearFarOff:
	default:
		return fmt.Errorf("unknown near-far mode %q", c.NearFarMode)
	}
	if c.NearFarMinVertices < 0 {
		return fmt.Errorf("near-far rounds from %d vertices, want at least 0", c.NearFarMinVertices)
	}
	if c.NearFarOwn < 0 {
		return fmt.Errorf("near-far expansions of up to %d relaxations a thread, want at least 0", c.NearFarOwn)
	}
	if !(c.NearFarScale >= 0) || math.IsInf(c.NearFarScale, 0) {
		return fmt.Errorf("near-far bucket scale %v, want a finite value ≥ 0", c.NearFarScale)
	}
	if c.Sparse < 0 || c.Sparse > BatchWidth {
		return fmt.Errorf("sparse expansions of up to %d sources, want 0 .. %d", c.Sparse, BatchWidth)
	}
	return nil
}
