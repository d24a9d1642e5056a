package flight

import (
	"context"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/pipeline"
)

// Resident CSRs: a GPU query makes its graph's CSR resident on the
// server's device (pipeline.ResidentGraphs.Keep), so that the next queries on
// that graph borrow it instead of uploading it again. Once the device is
// open, a graph uploaded or read back from its file is built on the
// device and kept there from the start (ResidentGraphs.LoadGraph), when the
// device is not busy with a run at that instant. The device bytes
// count in the cache's budget (--cache-bytes) beside the host bytes, and
// the copy goes with its cache entry: on eviction, on a drop or a
// replacement of the graph, and at shutdown. A graph the device cannot
// keep (no GPU, too little free memory) runs as before, uploaded by each
// query. Config.NoResidentCSR turns it off.

// residentKeeper keeps graphs' CSRs in device memory between queries:
// pipeline.ResidentGraphs, or a fake in tests.
type residentKeeper interface {
	// Keep makes g's CSR resident and returns its device bytes.
	Keep(ctx context.Context, g *pipeline.Graph) (int64, error)
	// Forget frees the copy Keep or LoadGraph made (once the runs using it
	// end).
	Forget(g *pipeline.Graph) error
	// LoadGraph builds the graph of t, its CSR on the device and kept there
	// where the device is open and idle (returning its device bytes),
	// else on the CPU (0 bytes).
	LoadGraph(ctx context.Context, t *arrowio.EdgeTable, opt pipeline.LoadOptions) (*pipeline.Graph, int64, error)
}

// loadGraph builds the graph of an uploaded or stored table: on the
// server's GPU, kept resident, where ResidentGraphs.LoadGraph can, else on the CPU. The
// caller counts the device bytes in the cache (addDevice), or forgets
// the copy.
func (s *Server) loadGraph(ctx context.Context, t *arrowio.EdgeTable, opt pipeline.LoadOptions) (*pipeline.Graph, int64, error) {
	if s.resident == nil {
		g, err := pipeline.LoadGraph(t, opt)
		return g, 0, err
	}
	return s.resident.LoadGraph(ctx, t, opt)
}

// keepResident makes the CSR of q's graph resident before q runs, where
// the run would take the GPU and borrow that copy (not the nearest layout
// and not reverse runs, which run on the CPU or a transposed graph), and
// where the cache has room for it; a graph resident already costs
// nothing more. Failing to keep it is no error: the
// run uploads the graph as it would without.
func (s *Server) keepResident(ctx context.Context, name string, q *pipeline.Prepared) {
	g, opt := q.Graph(), q.Options()
	if s.resident == nil || opt.Reverse || opt.Layout == arrowio.LayoutNearest {
		return
	}
	if !pipeline.WantsGPU(opt.Engine, len(opt.Sources)) {
		return
	}
	if resident, fits := s.cache.roomOnDevice(g, csrBytes(g)); resident || !fits {
		return
	}
	start := time.Now()
	b, err := s.resident.Keep(ctx, g)
	if err != nil {
		level := s.log.Warn
		if pipeline.NoGPU(err) || ctx.Err() != nil {
			level = s.log.Debug
		}
		level("flight: the graph's CSR is not kept on the device; each query uploads it", "graph", name, "error", err.Error())
		return
	}
	s.cache.addDevice(g, b)
	s.log.Debug("flight: graph resident on the device", "graph", name, "device_bytes", b, "took", time.Since(start).String())
}

// forgetResident frees the device copy of a graph the cache removed.
func (s *Server) forgetResident(g *pipeline.Graph) {
	if err := s.resident.Forget(g); err != nil {
		s.log.Warn("flight: freeing a resident CSR", "error", err.Error())
	}
}
