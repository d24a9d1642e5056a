package gpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestHubRowsNearestAgainstOracle selects the k nearest (SelectNearest)
// with the batched kernel in one result slot beside hub rows
// (narrowing.selectsInOneSlot, plan.Config.HubRows) over every source of the
// one-slot graphs, in blocks of an eighth of the vertices (the hub rows
// derive and seed there) and of 97, and checks every row against a sort
// of the CPU engine's full rows. Where hub rows may be kept (exact sums)
// the blocks must have kept and computed them, and a block's cells must be
// all that left the device; two slots (oneslot=0) must give the same rows
// without them.
func TestHubRowsNearestAgainstOracle(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	configs := map[string]string{
		"hubs":               "hubrows=64",
		"hubs-phases":        "hubrows=64,seeds=0.2,seedsmin=0,phases=0.5",
		"hubs-block-scratch": "hubrows=100000,hubshare=0,scratchmb=0.5,scratchmin=0",
		"two-slots":          "oneslot=0",
	}
	const k = 16
	for gname, g := range statsSlotGraphs(t) {
		n := g.NumVertices
		sources := allVertices(n)
		want := nearestOracle(cpuRows(t, g, sources), graph.Request{}, k)
		for cname, spec := range configs {
			cfg := defaultBatchedConfig()
			if err := cfg.Config.Apply(spec); err != nil {
				t.Fatal(err)
			}
			t.Run(gname+"/"+cname, func(t *testing.T) {
				r, err := e.prepare(ctx, g, graph.Request{Algorithm: Batched}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if !r.SelectNearest(k) {
					t.Fatal("SelectNearest refused")
				}
				if r.narrow.selectsInOneSlot(r.bk.cfg.OneSlotStats) != cfg.OneSlotStats {
					t.Fatalf("selects in one slot %v under oneslot %v", r.narrow.selectsInOneSlot(r.bk.cfg.OneSlotStats), cfg.OneSlotStats)
				}
				kept := r.hubs.possible()
				if (gname == "rmat11-int" || gname == "rmat11-float-exact") && kept != cfg.OneSlotStats {
					t.Fatalf("hub rows possible %v under oneslot %v on a graph of exact sums", kept, cfg.OneSlotStats)
				}
				for _, size := range []int{(n + 7) / 8, 97} {
					if testing.Short() && size == 97 {
						continue
					}
					for lo := 0; lo < n; lo += size {
						hi := min(lo+size, n)
						b := graph.NewBlock(sources[lo:hi], k, r.DistType(), false)
						b.NumVertices = n
						b.CellTargets = make([]graph.VertexID, (hi-lo)*k)
						poison(b)
						before := r.DownloadedBytes()
						if err := r.Run(ctx, b); err != nil {
							t.Fatalf("blocks of %d, sources %d..%d: %v", size, lo, hi, err)
						}
						if moved, exp := r.DownloadedBytes()-before, int64(hi-lo)*k*int64(r.DistType().Size()+4); moved != exp {
							t.Fatalf("blocks of %d from %d: %d bytes to the host, want %d", size, lo, moved, exp)
						}
						cells := cellsOf(b)
						for i := range b.Sources {
							for j := range k {
								got := nearCell{b.CellTargets[i*k+j], cells[i*k+j]}
								if w := want[lo+i][j]; got != w {
									t.Fatalf("blocks of %d: source %d, rank %d: GPU %v, want %v", size, b.Sources[i], j+1, got, w)
								}
							}
						}
						wantRows := r.hubs.forBlock(r.buf.capacity)
						if kept && cfg.OneSlotStats && wantRows == 0 {
							t.Fatalf("blocks of %d: no hub rows where they may be kept", size)
						}
						if r.hubs.rows.ready != (wantRows > 0) || len(r.hubs.rows.vertices) != wantRows {
							t.Fatalf("blocks of %d: %d hub rows, ready %v; want %d", size, len(r.hubs.rows.vertices), r.hubs.rows.ready, wantRows)
						}
					}
				}
			})
		}
	}
}

// TestSelectBytesPerSource checks, without a device, that a runner
// selecting the k nearest in one slot counts one slot's rows and its
// cells, and that two slots count both.
func TestSelectBytesPerSource(t *testing.T) {
	g := statsSlotGraphs(t)["rmat11-int"]
	for _, spec := range []string{"", "oneslot=0", "scratchmb=0.5,scratchmin=0"} {
		cfg := defaultBatchedConfig()
		if err := cfg.Config.Apply(spec); err != nil {
			t.Fatal(err)
		}
		r := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
		stats := r.StatsBytesPerSource()
		if !r.SelectNearest(8) {
			t.Fatal("SelectNearest refused")
		}
		cells := int64(8 * (r.distType.Size() + 4))
		want := r.bytesPerSource(false)
		if cfg.OneSlotStats {
			want = stats + cells
		}
		if got := r.BytesPerSource(); got != want {
			t.Errorf("%q: %d bytes per source, want %d (%s)", spec, got, want, fmt.Sprint("stats ", stats, " + cells ", cells))
		}
		if cfg.OneSlotStats && r.BytesPerSource() >= r.bytesPerSource(false) {
			t.Errorf("%q: one slot's %d bytes per source not below two slots' %d", spec, r.BytesPerSource(), r.bytesPerSource(false))
		}
	}
}
