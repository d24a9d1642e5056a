package pipeline

// Graphs whose CSR stays on a server's shared device between runs.

import (
	"context"
	"fmt"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// ResidentGraphs keeps the CSRs of graphs on a server's shared device
// (GPU, the Options.GPU of their runs), so that their runs borrow that
// copy instead of uploading the graph each time.
type ResidentGraphs struct {
	GPU graph.SharedGPU
}

// WantsGPU reports whether a run of engine ("auto", "gpu", "cpu"; "" is
// auto) over sources sources (0: every vertex) would take a GPU where one
// is usable: the rule of the run's engine choice.
func WantsGPU(engine string, sources int) bool {
	switch engine {
	case "gpu":
		return true
	case "", "auto":
		return sources <= 0 || sources >= minGPUSources
	}
	return false
}

// Keep makes the CSR of g resident on the shared device (opening it if
// needed, and waiting for the turn): every later run of g on it borrows
// that copy instead of uploading the graph. It returns the device bytes
// the copy holds; keeping a graph kept already copies nothing. The copy
// stays until Forget or the device's Close, so the caller counts those
// bytes in its own budget. Keep refuses, with an error and nothing kept,
// a graph on a device it cannot open, and one whose copy would take more
// than half of the device's free memory (the runs' blocks need the rest);
// runs of such a graph upload it each time, as without Keep.
func (r ResidentGraphs) Keep(ctx context.Context, g *Graph) (int64, error) {
	e, release, err := r.GPU.Acquire()
	if err != nil {
		return 0, err
	}
	defer release()
	if !e.IsKept(g.CSR) {
		need := csrDeviceBytes(g)
		free, err := e.FreeMemory()
		if err != nil {
			return 0, err
		}
		if need > free/2 {
			return 0, fmt.Errorf("pipeline: the CSR of %s takes %d bytes on the device, more than half of the %d free; each run uploads it instead",
				g.Table.Name, need, free)
		}
	}
	return e.KeepCSR(ctx, g.CSR)
}

// Forget frees the device copy Keep or LoadGraph made of g's CSR
// (graph.SharedGPU.Forget).
func (r ResidentGraphs) Forget(g *Graph) error { return r.GPU.Forget(g.CSR) }

// LoadGraph is LoadGraph (the function) for a graph that runs on the
// shared device: where the device is open already and free this instant,
// the CSR is built on it and kept there as Keep keeps it (the returned
// bytes, to be freed by Forget); else, or where the device fails, it is
// built on the CPU and 0 bytes are kept. It never opens the device, and
// never waits for a run's turn. opt.Engine and opt.Device are ignored; a
// table the CPU build refuses gets the CPU build's error.
func (r ResidentGraphs) LoadGraph(ctx context.Context, t *arrowio.EdgeTable, opt LoadOptions) (*Graph, int64, error) {
	opt.Engine, opt.Device = "cpu", nil
	if opt.Vertices != nil {
		g, err := LoadGraph(t, opt)
		return g, 0, err
	}
	e, release, ok := r.GPU.TryAcquire()
	if !ok {
		g, err := LoadGraph(t, opt)
		return g, 0, err
	}
	g, kept, err := buildKept(ctx, e, t, opt)
	release()
	if err != nil {
		g, err := LoadGraph(t, opt)
		return g, 0, err
	}
	return g, kept, nil
}

// buildKept builds t's CSR with e and keeps it there, holding the turn.
func buildKept(ctx context.Context, e graph.GPUDevice, t *arrowio.EdgeTable, opt LoadOptions) (*Graph, int64, error) {
	bopt := graph.BuildOptions{Undirected: opt.Undirected, DistType: opt.DistType}
	if err := checkDistanceRange(t, &bopt); err != nil {
		return nil, 0, err
	}
	rounds := computeInFloat64(t, &bopt) // rounding.go
	free, err := e.FreeMemory()
	if err != nil {
		return nil, 0, err
	}
	// The build's own buffers (ids, counts, unsorted and sorted arcs)
	// take about three times the CSR it leaves.
	if need := 3 * (16*int64(t.Edges.Len()) + 8*int64(t.Edges.NumVertices)); need > free/2 {
		return nil, 0, fmt.Errorf("pipeline: building the CSR of %s on the device needs about %d bytes, more than half of the %d free", t.Name, need, free)
	}
	start := time.Now()
	csr, kept, err := e.BuildKeptCSR(ctx, &t.Edges, bopt)
	if err != nil {
		return nil, 0, err
	}
	g := &Graph{Table: t, CSR: csr, Undirected: opt.Undirected, builtOn: "gpu", buildTime: time.Since(start), rounds: rounds}
	g.times.Build = g.buildTime
	return g, kept, nil
}

// csrDeviceBytes is what g's CSR takes on the device: int64 offsets, int32
// targets and a weight per arc.
func csrDeviceBytes(g *Graph) int64 {
	c := g.CSR
	return 8*int64(len(c.Offsets)) + int64(4+c.Type.Size())*c.NumEdges()
}
