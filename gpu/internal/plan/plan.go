package plan

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// Block is what the batched kernel runs for a block of sources: Sources[i]
// computed into block row Rows[i] (nil Rows: the block's own sources in
// its own order, nothing derived), then the derivations of the leaves, the
// first Passes[0] of them before the rest (derivations in place, of rows
// that lent their place to a parent outside the block, go last, after
// every leaf that reads that parent), and the minimums (Mins, reading
// MinArcs), which only read rows the kernel computed.
type Block struct {
	Sources, Rows []int32
	Derive        []Derivation
	Passes        [2]int
	Mins          []MinDerivation
	MinArcs       []MinArc
	// Cuts, when not empty, runs the kernel in phases: Sources[:Cuts[0]],
	// then Sources[Cuts[0]:Cuts[1]] and so on to the end, each later
	// source started from the rows of the phases before its own through
	// Seeds[i], the arcs of Sources[Cuts[0]+i] in MinArcs.
	Cuts  []int
	Seeds []MinDerivation
	// SeedFirst, set only in a block of one phase planned with resident
	// rows (StartResident), starts every kernel source from the resident
	// rows its arcs reach: Seeds[i] is then Sources[i]'s.
	SeedFirst bool
	// Copies are the block's sources that have a resident row
	// (StartResident): left out of the kernel, their rows are copied from
	// the resident ones after its phases and before the leaves and
	// minimums, which may read them.
	Copies []Copy
	// Early, when set, splits the block's work around rows that arrive
	// late (SplitLate).
	Early *Early
}

// Copy makes block row Dst a copy of the resident row Src.
type Copy struct{ Dst, Src int32 }

// Resident are rows kept on the device beside a block's own, which the
// block's plan may read as it reads the rows the kernel computes: the row
// of vertex Vertices[i] (its distances to every vertex, final) is block
// row FirstRow+i, past the block's own rows. The GPU runner keeps the
// rows of the graph's hubs so (Config.HubRows), so that blocks too small
// to hold many of their sources' neighbours still derive the leaves and
// minimums next to a hub, and start their sources from the hubs' rows.
type Resident struct {
	Vertices []int32
	FirstRow int32
}

// rowIndex returns, per vertex of a graph of n, 1 + its resident row (0
// where it has none), or nil when r holds no row.
func (r Resident) rowIndex(n int) []int32 {
	if len(r.Vertices) == 0 {
		return nil
	}
	at := make([]int32, n)
	for i, v := range r.Vertices {
		if at[v] == 0 {
			at[v] = r.FirstRow + int32(i) + 1
		}
	}
	return at
}

// MinDerivation makes block row Dst the row of vertex Source from the rows
// of its arcs' heads: MinArcs[First : First+Count].
type MinDerivation struct {
	Dst, Source int32
	First       int32
	Count       int32
}

// MinArc is an arc of a source derived by a minimum or seeded from an
// earlier phase: the block row of its head and the index of its weight.
type MinArc struct {
	Row int32
	Arc int64
}

// Derivation makes block row Dst the row of Leaf from the row Src of its
// parent, through the leaf's arc Arc.
type Derivation struct {
	Dst, Src, Leaf int32
	Arc            int64
}

// NumPhases is the number of phases the kernel runs: len(Cuts) + 1.
func (b *Block) NumPhases() int { return len(b.Cuts) + 1 }

// PhaseStart is where phase i's sources start in Sources (i may be
// NumPhases: the end).
func (b *Block) PhaseStart(i int) int {
	switch {
	case i == 0:
		return 0
	case i <= len(b.Cuts):
		return b.Cuts[i-1]
	}
	return len(b.Sources)
}

// Graph is what every block's plan reads of one graph beside its arcs: its
// Shape and the breadth-first rank of its vertices, measured together on
// first use (a pass each over every arc, on two cores) and kept. Its
// methods may be called from any goroutine.
type Graph struct {
	g *graph.CSR
	// balls holds smallBall's answers (cutoff.go) by cutoff and share.
	ballMu sync.Mutex
	balls  map[[2]float64]bool
	// exact is ExactSumsOf(g), measured apart from the shape (a pass over
	// the weights alone) on first use.
	exactOnce sync.Once
	exact     bool
	// byWeight are the arcs of ArcsByWeight (cutoff.go), sorted once.
	byWeightOnce    sync.Once
	byWeightTargets []int32
	byWeight        any

	once  sync.Once
	shape Shape
	rank  []int32
	// core is Core's list, planned once.
	coreOnce sync.Once
	core     []int32
	coreErr  error
}

// NewGraph prepares plans over g; it measures nothing yet.
func NewGraph(g *graph.CSR) *Graph { return &Graph{g: g} }

// Hubs returns the h vertices of highest out-degree (all of them when h
// is larger), by falling degree, equal degrees by vertex id: the vertices
// whose rows a runner keeps resident (Config.HubRows, Resident).
func (pg *Graph) Hubs(h int) []int32 {
	n := pg.g.NumVertices
	all := make([]int32, n)
	for v := range all {
		all[v] = int32(v)
	}
	idx := byDegree(pg.g, all, true)
	return idx[:min(max(h, 0), n)]
}

// Core returns up to h vertices whose rows a block of every vertex
// computes in the kernel under cfg (its sources: the rows of every other
// vertex derive from theirs), by falling out-degree. Kept as hub rows
// (Config.HubCore), they let blocks of any size derive what one block of
// every vertex would. The block is planned once, under the first
// caller's cfg, without cutoff.
func (pg *Graph) Core(h int, cfg Config) ([]int32, error) {
	pg.coreOnce.Do(func() {
		n := pg.g.NumVertices
		all := make([]int32, n)
		for v := range all {
			all[v] = int32(v)
		}
		if err := cfg.Check(); err != nil {
			pg.coreErr = err
			return
		}
		// The kernel's sources only: their order, phases and seeds,
		// which a whole plan adds, do not change which they are.
		b, _, _ := pg.derive(all, cfg, Resident{})
		kernel := slices.Clone(b.Sources)
		slices.Sort(kernel)
		kernel = slices.Compact(kernel)
		idx := byDegree(pg.g, kernel, true)
		pg.core = make([]int32, len(idx))
		for i, j := range idx {
			pg.core[i] = kernel[j]
		}
	})
	if pg.coreErr != nil {
		return nil, pg.coreErr
	}
	return pg.core[:min(max(h, 0), len(pg.core))], nil
}

// CSR is the graph the plans read.
func (pg *Graph) CSR() *graph.CSR { return pg.g }

// Shape is what the kernel's choices read of the graph (ShapeOf).
func (pg *Graph) Shape() Shape {
	pg.measure()
	return pg.shape
}

// Rank is the breadth-first rank of every vertex (BFSRank).
func (pg *Graph) Rank() []int32 {
	pg.measure()
	return pg.rank
}

func (pg *Graph) measure() {
	pg.once.Do(func() {
		done := make(chan struct{})
		go func() { // the two walk the graph apart
			defer close(done)
			pg.shape = ShapeOf(pg.g)
		}()
		pg.rank = BFSRank(pg.g)
		<-done
	})
}

// Plan plans the block of sources (in row order) on g under cfg: Start,
// then its finish. It fails on an invalid cfg or a source outside g.
func Plan(g *graph.CSR, sources []int32, cfg Config) (*Block, error) {
	return NewGraph(g).Plan(sources, cfg)
}

// Plan plans the block of sources (in row order) under cfg, complete.
func (pg *Graph) Plan(sources []int32, cfg Config) (*Block, error) {
	b, finish, err := pg.Start(sources, cfg)
	if err != nil {
		return nil, err
	}
	if finish != nil {
		finish()
	}
	return b, nil
}

// Start plans the block of sources (in row order) under cfg as far as its
// first phase needs: with several phases, the sources of the later ones
// are not yet ordered and have no seeds, and finish completes the plan.
// finish touches only the later phases' part of Sources and Rows (in
// place), Seeds and the arcs after the minimums' in MinArcs, so that the
// first phase may run (and its part be read) meanwhile; the host's plan
// then overlaps the first phase's kernels. finish is nil when the plan is
// complete. The caller's sources are never reordered.
//
// Time and memory are linear in the graph's size (clusters search at most
// clusterMaxVisit vertices each); the first plan of a Graph adds its
// Shape and Rank.
func (pg *Graph) Start(sources []int32, cfg Config) (*Block, func(), error) {
	return pg.StartWithin(sources, cfg, math.Inf(1))
}

// StartWithin is Start for a kernel that relaxes nothing past cut (+Inf:
// no cutoff): where the graph's balls of radius cut are small
// (Config.CutoffReach, cutoff.go) the block is planned without minimums
// and in one phase. The first plan of a Graph under a cutoff adds a
// bounded search from each of a few vertices.
func (pg *Graph) StartWithin(sources []int32, cfg Config, cut float64) (*Block, func(), error) {
	return pg.StartResident(sources, cfg, cut, Resident{})
}

// StartResident is StartWithin for a block beside resident rows (rows
// past the block's own, final before its kernels run): where rows derived
// from others are exact (integer weights, or ExactFloats), a source with a
// resident row is copied from it (Block.Copies), a leaf whose
// parent has a resident row is derived from it, a minimum may read
// resident rows for any of its arcs, the seeds of later phases read them
// too, and a block of one phase starts every kernel source from the
// resident rows its arcs reach (Block.SeedFirst). Every resident vertex
// must lie in the graph and every row past the block's.
func (pg *Graph) StartResident(sources []int32, cfg Config, cut float64, res Resident) (*Block, func(), error) {
	if err := cfg.Check(); err != nil {
		return nil, nil, err
	}
	if math.IsNaN(cut) || cut < 0 {
		return nil, nil, fmt.Errorf("plan: cutoff %v, want a value ≥ 0", cut)
	}
	g := pg.g
	for _, s := range sources {
		if s < 0 || int(s) >= g.NumVertices {
			return nil, nil, fmt.Errorf("plan: source %d outside [0, %d)", s, g.NumVertices)
		}
	}
	k := len(sources)
	if len(res.Vertices) > 0 && (res.FirstRow < int32(k) || int64(res.FirstRow)+int64(len(res.Vertices)) > math.MaxInt32) {
		return nil, nil, fmt.Errorf("plan: %d resident rows from row %d beside a block of %d", len(res.Vertices), res.FirstRow, k)
	}
	for _, v := range res.Vertices {
		if v < 0 || int(v) >= g.NumVertices {
			return nil, nil, fmt.Errorf("plan: resident row of vertex %d outside [0, %d)", v, g.NumVertices)
		}
	}
	cfg = pg.withinCutoff(cfg, cut)
	plan, exact, resRow := pg.derive(sources, cfg, res)
	if plan.Rows == nil && (cfg.Order == OrderBlock || len(plan.Sources) <= BatchWidth) {
		if resRow != nil && len(plan.Sources) > 0 {
			plan.Sources = slices.Clone(plan.Sources)
			plan.Rows = make([]int32, len(plan.Sources))
			for i := range plan.Rows {
				plan.Rows[i] = int32(i)
			}
			seedFirst(g, &plan, resRow)
		}
		return &plan, nil, nil
	}
	shape, rank := pg.Shape(), pg.Rank()
	var cuts []int
	if cfg.Seeds > 0 && exact && (!shape.MeshLike || cfg.SeedsOnMeshes) && len(plan.Sources) >= seedsMinSources &&
		float64(k) >= cfg.SeedsMinShare*float64(g.NumVertices) {
		cuts = splitSeeded(g, &plan, phaseShares(g, &cfg))
	}
	rows := plan.Rows
	if rows == nil {
		rows = make([]int32, len(plan.Sources))
		for i := range rows {
			rows[i] = int32(i)
		}
	}
	// Ordered in place below: never in the caller's sources.
	plan.Sources, plan.Rows = slices.Clone(plan.Sources), slices.Clone(rows)
	plan.Cuts = cuts
	// Each phase is ordered on its own, in place: the first now, the
	// others (on cores of their own) by finish.
	bounds := append(append([]int{0}, cuts...), len(plan.Sources))
	order := func(i int) {
		lo, hi := bounds[i], bounds[i+1]
		s, r := orderSources(g, rank, plan.Sources[lo:hi], plan.Rows[lo:hi], &cfg, !shape.MeshLike)
		copy(plan.Sources[lo:hi], s)
		copy(plan.Rows[lo:hi], r)
	}
	order(0)
	if len(cuts) == 0 {
		if resRow != nil {
			seedFirst(g, &plan, resRow)
		}
		return &plan, nil, nil
	}
	return &plan, func() {
		var wg sync.WaitGroup
		for i := 1; i+1 < len(bounds); i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				order(i)
			}()
		}
		wg.Wait()
		planSeeds(g, &plan, resRow)
	}, nil
}

// derive is the first part of a block's plan: the sources copied from
// resident rows, the leaves and the minimums left out of the kernel (its
// sources are then plan's Sources, in no particular order); exact says
// whether rows derived from others are exact, and resRow is 1 + a
// vertex's resident row (nil for none, or where not exact).
func (pg *Graph) derive(sources []int32, cfg Config, res Resident) (plan Block, exact bool, resRow []int32) {
	g, k := pg.g, len(sources)
	plan = Block{Sources: sources}
	exact = pg.exactSums(&cfg, k)
	if exact {
		resRow = res.rowIndex(g.NumVertices)
	}
	if resRow != nil {
		planCopies(sources, &plan, resRow)
	}
	if cfg.Leaves && g.Undirected && exact && k > 1 {
		planLeaves(g, sources, &plan, resRow)
	}
	if cfg.Mins && exact && k > 1 {
		planMins(g, sources, &plan, resRow)
	}
	return plan, exact, resRow
}

// seedFirstMaxArcs bounds the resident rows one source of a first phase
// starts from: batched_seedfill reads a row of n distances per arc, and
// a hub's few dozen hub neighbours already give most of its seeds. Not
// measured; the cap of the minimums' arcs (minsMaxDegree).
const seedFirstMaxArcs = minsMaxDegree

// seedFirst starts every kernel source of plan, a block of one phase, from
// the resident rows its arcs reach (resRow: 1 + a vertex's resident row):
// plan.Seeds lists each source's arcs into resident rows, the first
// seedFirstMaxArcs of them (none leaves it unreached but for itself, as
// without seeds), and plan.SeedFirst is set. The seeds are real path
// lengths, and each resident row obeys the triangle inequality along
// every arc, so the minimum over any of them does too: the kernel then
// starts from the source alone, as a later phase does.
func seedFirst(g *graph.CSR, plan *Block, resRow []int32) {
	for i, s := range plan.Sources {
		first := int32(len(plan.MinArcs))
		for e := g.Offsets[s]; e < g.Offsets[s+1] && int32(len(plan.MinArcs))-first < seedFirstMaxArcs; e++ {
			if row := resRow[g.Targets[e]]; row != 0 {
				plan.MinArcs = append(plan.MinArcs, MinArc{row - 1, int64(e)})
			}
		}
		plan.Seeds = append(plan.Seeds, MinDerivation{plan.Rows[i], s, first, int32(len(plan.MinArcs)) - first})
	}
	plan.SeedFirst = true
}

// exactSums reports whether rows derived from others (leaves, minimums,
// seeds) equal the kernel's own for a block of k sources: always for
// integer distances, and for floats under cfg.ExactFloats when every sum
// is exact (ExactSums), in blocks of more than one group (smaller ones
// derive little, and skip the pass over the weights).
func (pg *Graph) exactSums(cfg *Config, k int) bool {
	if !pg.g.Type.IsFloat() {
		return true
	}
	return cfg.ExactFloats && k > BatchWidth && pg.ExactSums()
}

// ExactSums is ExactSumsOf(g), measured on first use and kept.
func (pg *Graph) ExactSums() bool {
	pg.exactOnce.Do(func() { pg.exact = ExactSumsOf(pg.g) })
	return pg.exact
}

// planCopies leaves the sources of src (the block in row order) that have
// a resident row (resRow: 1 + a vertex's resident row) out of plan's
// kernel sources, as copies of those rows. One source stays in the kernel
// where every one has a resident row: a kernel launch needs one.
func planCopies(src []int32, plan *Block, resRow []int32) {
	var kernel, rows []int32
	for i, s := range src {
		if r := resRow[s]; r != 0 && (len(kernel) > 0 || i+1 < len(src)) {
			plan.Copies = append(plan.Copies, Copy{int32(i), r - 1})
			continue
		}
		kernel = append(kernel, s)
		rows = append(rows, int32(i))
	}
	if len(plan.Copies) > 0 {
		plan.Sources, plan.Rows = kernel, rows
	}
}

// planLeaves leaves the leaves among src (the block in row order) out of
// plan's kernel sources: a leaf whose parent is a source of the block,
// has a resident row (resRow: 1 + a vertex's resident row; nil for none),
// or was already brought into the kernel by another leaf, is derived from
// that row in the first pass; the first leaf of another parent outside
// the block lends its row to the parent, computed by the kernel, and is
// derived from it in place in the second pass.
func planLeaves(g *graph.CSR, src []int32, plan *Block, resRow []int32) {
	k := len(src)
	row := make([]int32, g.NumVertices) // 1 + the block row of a source vertex
	for i, s := range src {
		row[s] = int32(i) + 1
	}
	host := make([]int32, g.NumVertices) // 1 + the row computing a parent outside the block
	kernel := make([]int32, 0, k)
	kernelRows := make([]int32, 0, k)
	var later []Derivation
	for j, s := range plan.Sources { // the copies (planCopies) are not among them
		i := int32(j)
		if plan.Rows != nil {
			i = plan.Rows[j]
		}
		p, arc, ok := leafParent(g, s)
		if !ok {
			kernel = append(kernel, s)
			kernelRows = append(kernelRows, i)
			continue
		}
		if pr := row[p]; pr != 0 {
			plan.Derive = append(plan.Derive, Derivation{i, pr - 1, s, arc})
		} else if resRow != nil && resRow[p] != 0 {
			plan.Derive = append(plan.Derive, Derivation{i, resRow[p] - 1, s, arc})
		} else if hr := host[p]; hr != 0 {
			plan.Derive = append(plan.Derive, Derivation{i, hr - 1, s, arc})
		} else {
			host[p] = i + 1
			kernel = append(kernel, p)
			kernelRows = append(kernelRows, i)
			later = append(later, Derivation{i, i, s, arc})
		}
	}
	if len(plan.Derive)+len(later) > 0 {
		plan.Sources, plan.Rows = kernel, kernelRows
		plan.Passes = [2]int{len(plan.Derive), len(later)}
		plan.Derive = append(plan.Derive, later...)
	}
}

// leafParent returns the one neighbour of s and the index of its arc when s
// is a leaf whose neighbour has other neighbours too.
func leafParent(g *graph.CSR, s int32) (int32, int64, bool) {
	lo, hi := g.Offsets[s], g.Offsets[s+1]
	if hi-lo != 1 {
		return 0, 0, false
	}
	p := g.Targets[lo]
	if p == s || g.Offsets[p+1]-g.Offsets[p] < 2 {
		return 0, 0, false
	}
	return p, int64(lo), true
}
