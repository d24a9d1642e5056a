package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// SharedGPU is one GPU engine for the runs of many graphs (Options.GPU),
// as a server holds it: the device is opened by the first run that wants
// it and stays open until Close, so later runs skip opening it (a quarter
// of a second on an H100). A graph's runs upload its CSR each time unless
// Keep made it resident, or LoadGraph built it on the device and kept it
// there; Forget frees such a copy. Runs on it take turns, one at a time. Where the
// device cannot open, that error is kept: auto runs use the CPU without
// looking again, gpu runs fail with it. The zero value is ready to use.
type SharedGPU struct {
	once sync.Once
	e    graph.GPUDevice
	err  error
	// turn is held by the run using the engine, and by Close.
	turn sync.Mutex
	// forget guards e for the methods that must not wait for a run's turn
	// (Forget, LoadGraph, GraphUploads, KeptBytes): whatever sets e holds
	// it.
	forget sync.Mutex
}

var errSharedClosed = errors.New("pipeline: the shared GPU engine is closed")

// acquire opens the engine if this is the first use and waits for the
// turn; release it with s.turn.Unlock.
func (s *SharedGPU) acquire() (graph.GPUDevice, error) {
	s.once.Do(func() {
		e, err := newGPU()
		s.forget.Lock()
		s.e, s.err = e, err
		s.forget.Unlock()
	})
	if s.err != nil {
		return nil, s.err
	}
	s.turn.Lock()
	if s.e == nil {
		s.turn.Unlock()
		return nil, errSharedClosed
	}
	return s.e, nil
}

// Opened reports whether the engine is open.
func (s *SharedGPU) Opened() bool {
	s.turn.Lock()
	defer s.turn.Unlock()
	return s.e != nil
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

// Keep makes the CSR of g resident on the shared engine's device (opening
// it if needed, and waiting for the turn): every later run of g on this
// engine borrows that copy instead of uploading the graph. It returns the
// device bytes the copy holds; keeping a graph kept already copies nothing.
// The copy stays until Forget or Close, so the caller counts those bytes
// in its own budget. Keep refuses, with an error and nothing kept, a
// graph on a device it cannot open, and one whose copy would take more
// than half of the device's free memory (the runs' blocks need the rest);
// runs of such a graph upload it each time, as without Keep.
func (s *SharedGPU) Keep(ctx context.Context, g *Graph) (int64, error) {
	e, err := s.acquire()
	if err != nil {
		return 0, err
	}
	defer s.turn.Unlock()
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

// LoadGraph is LoadGraph (the function) for a graph that runs on this
// engine: where the engine is open already and free this instant, the CSR
// is built on its device and kept there as Keep keeps it (the returned
// bytes, to be freed by Forget); else, or where the device fails, it is
// built on the CPU and 0 bytes are kept. It never opens the device, and
// never waits for a run's turn. opt.Engine and opt.Device are ignored; a
// table the CPU build refuses gets the CPU build's error.
func (s *SharedGPU) LoadGraph(ctx context.Context, t *arrowio.EdgeTable, opt LoadOptions) (*Graph, int64, error) {
	opt.Engine, opt.Device = "cpu", nil
	s.forget.Lock()
	e := s.e
	s.forget.Unlock()
	if e == nil || opt.Vertices != nil || !s.turn.TryLock() {
		g, err := LoadGraph(t, opt)
		return g, 0, err
	}
	g, kept, err := s.buildKept(ctx, e, t, opt)
	s.turn.Unlock()
	if err != nil {
		g, err := LoadGraph(t, opt)
		return g, 0, err
	}
	return g, kept, nil
}

// buildKept builds t's CSR with e and keeps it, holding the turn.
func (s *SharedGPU) buildKept(ctx context.Context, e graph.GPUDevice, t *arrowio.EdgeTable, opt LoadOptions) (*Graph, int64, error) {
	if s.e != e { // closed meanwhile
		return nil, 0, errSharedClosed
	}
	bopt := graph.BuildOptions{Undirected: opt.Undirected, DistType: opt.DistType}
	if err := checkDistanceRange(t, &bopt); err != nil {
		return nil, 0, err
	}
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
	g := &Graph{Table: t, CSR: csr, Undirected: opt.Undirected, builtOn: "gpu", buildTime: time.Since(start)}
	g.times.Build = g.buildTime
	return g, kept, nil
}

// Forget frees the device copy Keep or LoadGraph made of g's CSR, at once or, where a
// run is using it, when that run ends; later runs upload g again. It does
// not wait for the turn. Forgetting a graph not kept does nothing.
func (s *SharedGPU) Forget(g *Graph) error {
	s.forget.Lock()
	defer s.forget.Unlock()
	if s.e == nil {
		return nil
	}
	return s.e.DropCSR(g.CSR)
}

// GraphUploads is the number of times the shared engine copied a graph's
// CSR from host memory (gpu.Engine.GraphUploads), 0 before it opened.
func (s *SharedGPU) GraphUploads() int64 {
	s.forget.Lock()
	defer s.forget.Unlock()
	if s.e == nil {
		return 0
	}
	return s.e.GraphUploads()
}

// KeptBytes is the device memory of the CSRs Keep and LoadGraph keep now
// (gpu.Engine.KeptBytes), 0 before the engine opened.
func (s *SharedGPU) KeptBytes() int64 {
	s.forget.Lock()
	defer s.forget.Unlock()
	if s.e == nil {
		return 0
	}
	return s.e.KeptBytes()
}

// DeviceFailed reports whether err is a failure of the GPU itself (a
// driver call's error status, out of memory included) rather than of the
// input or the request: a run that failed so may be run again on the CPU.
func DeviceFailed(err error) bool {
	return gpuDriver.Failed(err)
}

// csrDeviceBytes is what g's CSR takes on the device: int64 offsets, int32
// targets and a weight per arc.
func csrDeviceBytes(g *Graph) int64 {
	c := g.CSR
	return 8*int64(len(c.Offsets)) + int64(4+c.Type.Size())*c.NumEdges()
}

// Close waits for the run using the engine, if any, and closes it, which
// frees every CSR Keep made resident; later runs find it closed. Closing
// an engine never opened does nothing.
func (s *SharedGPU) Close() error {
	s.once.Do(func() { s.err = errSharedClosed }) // never opened: stays so
	s.turn.Lock()
	defer s.turn.Unlock()
	s.forget.Lock()
	e := s.e
	s.e = nil
	s.forget.Unlock()
	if e == nil {
		return nil
	}
	return e.Close()
}
