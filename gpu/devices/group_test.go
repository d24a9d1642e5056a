package devices

import (
	"context"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// budgetEngine is an engine of fixed budgets whose runners are none: only
// its budgets are looked at.
type budgetEngine struct{ host, device int64 }

func (budgetEngine) Name() string { return "gpu" }
func (budgetEngine) Prepare(context.Context, *graph.CSR, graph.Request) (graph.Runner, error) {
	return nil, nil
}
func (e budgetEngine) DefaultBudget() int64 { return e.host }
func (e budgetEngine) DeviceBudget() int64  { return e.device }

// statsRunner costs per bytes a source for its rows, and statsPer and
// fixed for a stats block on the device; it starts blocks ahead.
type statsRunner struct{ per, statsPer, fixed int64 }

func (r statsRunner) DistType() graph.DistType                                  { return graph.DistInt32 }
func (r statsRunner) BytesPerSource() int64                                     { return r.per }
func (r statsRunner) Run(context.Context, *graph.Block) error                   { return nil }
func (r statsRunner) Close() error                                              { return nil }
func (r statsRunner) Start(context.Context, *graph.Block) (graph.Waiter, error) { return nil, nil }
func (r statsRunner) RunStats(context.Context, []graph.VertexID) (*graph.Stats, error) {
	return nil, nil
}
func (r statsRunner) StatsBytesPerSource() int64 { return r.statsPer }
func (r statsRunner) StatsFixedBytes() int64     { return r.fixed }

// TestGroupChunks checks that each device's chunks are sized as the
// planner sizes one device's blocks (graph.SizingOf): the run's
// per-device budget, split among the engines of one device, or the
// engine's own, over the blocks in flight and the bytes per source, the
// fixed bytes of stats off the budget (at most half of it).
func TestGroupChunks(t *testing.T) {
	const per, statsPer = 1000, 400
	r := statsRunner{per: per, statsPer: statsPer}
	eng := budgetEngine{host: 1 << 40, device: 30 * per}
	one := []Slot{{Label: "gpu 0", Engine: eng}}
	for _, c := range []struct {
		name  string
		slots []Slot
		cfg   Config
		r     graph.Runner
		want  int
	}{
		{"stats, the run's budget", one, Config{Stats: true, MemBudget: 12 * per}, r, 12 * per / statsPer},
		{"pairs, the run's budget", one, Config{MemBudget: 12 * per}, r, 4},
		{"stats, the engine's budget", one, Config{Stats: true}, r, 30 * per / statsPer},
		{"stats, fixed bytes", one, Config{Stats: true, MemBudget: 12 * per}, statsRunner{per, statsPer, 6 * per}, 6 * per / statsPer},
		{"stats, fixed bytes past half", one, Config{Stats: true, MemBudget: 12 * per}, statsRunner{per, statsPer, 40 * per}, 6 * per / statsPer},
		{"two engines on one device", []Slot{{Label: "gpu 0", Engine: eng}, {Label: "gpu 0", Engine: eng}}, Config{Stats: true, MemBudget: 12 * per}, r, 6 * per / statsPer},
	} {
		g := NewGroup(c.slots, c.cfg)
		if got := g.chunkMax(0, c.r); got != c.want {
			t.Errorf("%s: chunks of %d sources, want %d", c.name, got, c.want)
		}
	}
}
