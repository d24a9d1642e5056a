package gpu

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// The batched kernel's host plan, made before the engine is open.
//
// The plan of a block (gpu/internal/plan: the graph's shape and
// breadth-first rank, the leaves and minimums left out of the kernel, the
// phases, the groups' order, the later phases' seeds) reads nothing but
// the CSR and the block's sources. A process that opens the device beside
// its read (package pipeline) holds the CSR about 130 ms before the
// device is ready on an H100 (docs/benchmarks-history.md, "Issue 18: throughput, float
// weights, the small run"), while the plan of R-MAT 16's one block of
// every source costs 20-35 ms on the path once it is. PlanAhead makes it
// in that wait; Engine.AdoptPlan hands it to the next Prepare of its CSR,
// whose first batched block takes it where it is the plan that block
// would make (the same sources, configuration and cutoff), and makes its
// own otherwise. The graph's shape and rank
// are taken whatever the block.

// HostPlan is a plan of the batched kernel for one block of sources over
// one CSR, made by PlanAhead in a goroutine of its own. Its methods may be
// called from any goroutine.
type HostPlan struct {
	csr     *graph.CSR
	graph   *plan.Graph
	sources []int32
	config  batchedConfig

	// started is closed once Start returned (block, finish and err set),
	// finished once the block is complete and packed (packed, took set).
	started, finished chan struct{}
	block             *plan.Block
	finish            func()
	err               error
	packed            *plan.Packed
	took              time.Duration

	mu   sync.Mutex
	used bool // taken by a runner's block
}

// PlanAhead starts planning, on the host, the batched kernel's block of
// sources over g (in the block's row order, as the runner will compute
// them; the caller does not change them afterwards) under the tuning t,
// which the runs' PrepareTuned must take too for the plan to be taken, and
// returns at once. nil sources plan no block: only the graph's shape and
// rank are measured, which every block's plan reads. Hand the result to
// the engine with Engine.AdoptPlan. A plan that no runner takes costs
// nothing but its goroutine's work.
func PlanAhead(g *graph.CSR, sources []graph.VertexID, t Tuning) *HostPlan {
	return planAhead(g, sources, t.batched())
}

// planAhead is PlanAhead under cfg (tests pass others).
func planAhead(g *graph.CSR, sources []graph.VertexID, cfg batchedConfig) *HostPlan {
	p := &HostPlan{csr: g, graph: plan.NewGraph(g), sources: sources, config: cfg,
		started: make(chan struct{}), finished: make(chan struct{})}
	go p.make()
	return p
}

// make plans the block: Start, then its finish, then the packed words
// the runner uploads (plan.Block.Pack), as launchBatched would, without a
// cutoff.
func (p *HostPlan) make() {
	began := time.Now()
	defer func() {
		p.took = time.Since(began)
		close(p.finished)
	}()
	if p.sources == nil {
		p.graph.Shape() // and the rank, measured together
		close(p.started)
		if c := p.config.Config; c.HubRows != 0 && c.HubCore && c.Check() == nil {
			// A graph too large for one block of every source may keep
			// hub rows, chosen from its core (hubs.go): sizing the run
			// then finds it made (R-MAT 18 on the host of two H200s:
			// 38 ms on the run's path).
			p.graph.Core(p.csr.NumVertices, c)
		}
		return
	}
	if p.err = p.config.Check(); p.err == nil {
		p.block, p.finish, p.err = p.graph.StartWithin(p.sources, p.config.Config, math.Inf(1))
	}
	close(p.started)
	if p.err != nil {
		return
	}
	p.packed = completePlan(p.block, p.finish)
}

// completePlan runs finish (when not nil) and packs the whole plan bp for
// upload (plan.Block.Pack); nil for a block in its sources' own order
// (Rows nil), which uploads nothing.
func completePlan(bp *plan.Block, finish func()) *plan.Packed {
	if finish != nil {
		finish()
	}
	if bp.Rows == nil {
		return nil
	}
	packed := bp.Pack(0, bp.NumPhases(), true)
	return &packed
}

// Took is how long the plan took, once made; 0 before.
func (p *HostPlan) Took() time.Duration {
	if p == nil {
		return 0
	}
	select {
	case <-p.finished:
		return p.took
	default:
		return 0
	}
}

// Used reports whether a runner's block took the plan (rather than
// planning its own: other sources, another configuration, a cutoff); for
// a plan of no block, whether a runner took the graph it measured.
func (p *HostPlan) Used() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used
}

// Wait waits until the plan is made and returns its error, if any: an
// invalid configuration or a source outside the graph.
// The nil plan returns nil at once.
func (p *HostPlan) Wait() error {
	if p == nil {
		return nil
	}
	<-p.finished
	return p.err
}

// adopt gives r the plan made ahead for its CSR: its plan graph (the
// shape and rank, measured or being measured) at once, its block for
// r's first batched block that matches it (startPlan).
func (bk *batchedKernel) adopt(p *HostPlan) {
	if p == nil || p.csr != bk.g {
		return
	}
	bk.graph, bk.ahead = p.graph, p
	if p.sources == nil {
		p.mu.Lock()
		p.used = true
		p.mu.Unlock()
	}
}

// startPlan is the plan of the block of sources under the
// runner's configuration, cut and resident rows (plan.Graph.StartResident):
// the one made ahead where it is that plan (no cut, no resident rows), else
// its own. packed, when not nil, is the whole plan packed for upload
// (finish is then nil). A plan made ahead is taken once; a block it does
// not match drops it.
func (bk *batchedKernel) startPlan(sources []int32, cut float64, res plan.Resident) (bp *plan.Block, finish func(), packed *plan.Packed, err error) {
	if p := bk.ahead; p != nil {
		bk.ahead = nil
		if p.sources != nil && math.IsInf(cut, 1) && len(res.Vertices) == 0 && slices.Equal(p.sources, sources) &&
			reflect.DeepEqual(p.config.Config, bk.cfg.Config) {
			return p.take()
		}
	}
	bp, finish, err = bk.graph.StartResident(sources, bk.cfg.Config, cut, res)
	return bp, finish, nil, err
}

// take hands the plan to the runner's block: complete and packed where it
// is made, else as Start left it, with a finish that waits for the rest.
func (p *HostPlan) take() (*plan.Block, func(), *plan.Packed, error) {
	p.mu.Lock()
	p.used = true
	p.mu.Unlock()
	select {
	case <-p.finished:
		if p.err != nil {
			return nil, nil, nil, fmt.Errorf("planned ahead: %w", p.err)
		}
		return p.block, nil, p.packed, nil
	default: // (a select over both would pick either once both are closed)
	}
	<-p.started
	if p.err != nil {
		return nil, nil, nil, fmt.Errorf("planned ahead: %w", p.err)
	}
	if p.finish == nil {
		return p.block, nil, nil, nil
	}
	return p.block, func() { <-p.finished }, nil, nil
}
