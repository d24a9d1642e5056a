package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// Engine runs shortest paths on one CUDA device. Close it when done: it
// holds the device's context.
//
// Its methods match graph.Engine except that Prepare returns the concrete
// *Runner (which satisfies graph.Runner), whose Start and ComputeResident
// return concrete types too: package pipeline adapts them to the engine
// seam (graph/seam.go; gpu/seam.go lists what this package implements
// itself).
type Engine struct {
	dev  *device
	info DeviceInfo

	mu      sync.Mutex
	runners map[*Runner]struct{}
	closed  bool
	// graphs are the graphs held on the device beside the runners, and the
	// plans made ahead for their next Prepare (kept.go).
	graphs graphCopies

	// graphUploads counts the Prepares that copied their CSR from the host.
	graphUploads atomic.Int64
	// csrCopies counts the Prepares that copied their CSR from another
	// engine's device (peer.go).
	csrCopies atomic.Int64
}

// Option configures New.
type Option func(*options)

type options struct {
	ordinal int
}

// WithDevice picks the CUDA device by index. The default is device 0.
func WithDevice(ordinal int) Option { return func(o *options) { o.ordinal = ordinal } }

// New opens a device, retains its primary context and loads the kernel image.
// It fails, saying why, where Probe would: no driver, no device, a driver too
// old for the image.
func New(opts ...Option) (*Engine, error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	start := time.Now()
	dv, err := openDevice(o.ordinal)
	if err != nil {
		return nil, err
	}
	info, err := dv.info()
	if err != nil {
		return nil, errors.Join(err, dv.close())
	}
	t := &dv.opened
	t.Rest = max(time.Since(start)-t.Driver-t.Context-t.Kernels, 0)
	return &Engine{dev: dv, info: *info, runners: map[*Runner]struct{}{}}, nil
}

// OpenTimes is where New's time went, for --verbose.
type OpenTimes struct {
	// Driver is loading the driver library and cuInit, done once a
	// process: 0 for every engine after the first.
	Driver time.Duration
	// Context is retaining the device's primary context and making it
	// current: creating it, where no other engine of the process holds it.
	Context time.Duration
	// Kernels is loading the kernel image (and resolving every kernel of
	// it, unless they are resolved on first launch: lazyKernels).
	Kernels time.Duration
	// Rest is the remainder of New: events, the copy stream, the pinned
	// argument block, the device's description.
	Rest time.Duration
}

// OpenTimes says where New's time went.
func (e *Engine) OpenTimes() OpenTimes { return e.dev.opened }

// Ordinal is the index of the engine's device.
func (e *Engine) Ordinal() int { return e.dev.ordinal }

// CSRCopies is the number of Prepares (PrepareFrom) that copied their
// CSR from another engine's device rather than from host memory.
func (e *Engine) CSRCopies() int64 { return e.csrCopies.Load() }

// AdoptPlan hands p to the next Prepare of p's CSR on e (see PlanAhead).
// A plan for another CSR than the one Prepare gets is never taken; a
// second plan for one CSR replaces the first. nil does nothing.
func (e *Engine) AdoptPlan(p *HostPlan) {
	if p == nil {
		return
	}
	e.graphs.putAhead(p)
}

// MeasureDownload copies bytes bytes from device memory to pinned host
// memory several times and returns the best rate seen, in bytes per second.
// It allocates bytes of device memory and bytes of pinned host memory for
// the duration of the call and frees both before returning, also on error.
// bytes must be positive and a multiple of 4; it fails when either
// allocation fails (CUDA_ERROR_OUT_OF_MEMORY for the device), when a driver
// call fails, or when the copied data does not match what the device held.
// Cost: about downloadRepetitions+1 copies of bytes, plus a memset.
func (e *Engine) MeasureDownload(bytes int64) (bytesPerSecond float64, err error) {
	return measureDownload(e.dev, bytes)
}

// Name is "gpu".
func (e *Engine) Name() string { return "gpu" }

// Info describes the device, as probed when the engine opened.
func (e *Engine) Info() DeviceInfo { return e.info }

// FreeMemory is the device memory free now, in bytes (cuMemGetInfo).
func (e *Engine) FreeMemory() (int64, error) {
	var free int64
	err := e.dev.do(func() error {
		var err error
		free, _, err = e.dev.memInfo()
		return err
	})
	return free, err
}

// LiveBytes is the device memory the engine's runners hold now, in bytes.
// It is 0 once every runner is closed.
func (e *Engine) LiveBytes() int64 { return e.dev.live.Load() }

// GraphUploads is the number of Prepares that copied their CSR from host
// memory to the device, plus the copies KeepCSR made. A Prepare that
// adopted the device copy BuildCSRResident kept, or borrowed a kept one
// (kept.go), does not count: a graph built on the device and run once is
// never uploaded, and a kept graph is uploaded once however often it runs.
func (e *Engine) GraphUploads() int64 { return e.graphUploads.Load() }

// Close closes every runner still open and releases the device.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	runners := make([]*Runner, 0, len(e.runners))
	for r := range e.runners {
		runners = append(runners, r)
	}
	e.mu.Unlock()
	var errs []error
	for _, r := range runners {
		errs = append(errs, r.Close())
	}
	errs = append(errs, e.graphs.close(e.dev))
	errs = append(errs, e.dev.close())
	return errors.Join(errs...)
}

// Abandon ends the engine's use without releasing the device, for a
// process that exits right after: the exit releases the context, the
// kernel image and every allocation at once, where Close tears them down
// one by one (91 ms on an H100 after a run of R-MAT 16; docs/benchmarks-history.md,
// "Issue 18: the wall time of a small run"). It waits for the work queued on
// the device, so that an error of it is still returned; afterwards the
// engine refuses work as after Close, and Close does nothing. Runners
// still open are left as they are: their memory goes with the process.
// Only a process about to exit calls it; a process that goes on (a
// server, tests, a library user) calls Close, or the device memory stays
// taken.
func (e *Engine) Abandon() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	return e.dev.abandon()
}

// Prepare uploads g for runs of req, under the default tuning (Tuning;
// PrepareTuned takes another). A req.Algorithm of graph.Auto is
// resolved to a kernel here (auto.go), which the runner's Describe names.
// Negative weights are refused unless req.Algorithm is bellman-ford (or
// counts hops, ignoring weights): the error is a *graph.NegativeWeightError
// naming one such arc.
func (e *Engine) Prepare(ctx context.Context, g *graph.CSR, req graph.Request) (*Runner, error) {
	if req.Algorithm == graph.CH {
		return nil, errNeedsHierarchy
	}
	return e.prepare(ctx, g, req, defaultBatchedConfig())
}

// errNeedsHierarchy refuses the algorithm ch where no hierarchy is given.
var errNeedsHierarchy = errors.New("gpu: the algorithm ch runs over a hierarchy: PrepareCH")

// PrepareCH prepares a runner of the algorithm ch over h, the hierarchy
// of g (of its transpose for distances along incoming arcs). It refuses
// other algorithms, predecessors, distances other than int32, a
// hierarchy of another size, and one whose arcs are too heavy for int32.
// Everything else is Prepare's.
func (e *Engine) PrepareCH(ctx context.Context, g *graph.CSR, req graph.Request, h *hierarchy.Hierarchy) (*Runner, error) {
	return prepareCH(ctx, e, g, req, h) // ch.go
}

// PrepareTuned is Prepare under the tuning t.
func (e *Engine) PrepareTuned(ctx context.Context, g *graph.CSR, req graph.Request, t Tuning) (*Runner, error) {
	if req.Algorithm == graph.CH {
		return nil, errNeedsHierarchy
	}
	return e.prepare(ctx, g, req, t.batched())
}

// PrepareFrom is PrepareTuned with the graph taken from the device copy of
// from, a runner of g on another engine: copied device to device where
// both engines share a context (two engines on one device), peer to peer
// where cuDeviceCanAccessPeer allows it, and uploaded from host memory
// otherwise (also where from is nil or runs another graph). Errors are
// Prepare's, and the copy's naming the driver call.
func (e *Engine) PrepareFrom(ctx context.Context, g *graph.CSR, req graph.Request, from *Runner, t Tuning) (*Runner, error) {
	tracef(e.dev.ordinal, "prepare from another device's CSR")
	defer tracef(e.dev.ordinal, "prepare from done")
	if from == nil || from.g != g || from.e == e || from.csr.offsets.ptr == 0 || ctx.Err() != nil {
		return e.PrepareTuned(ctx, g, req, t)
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if e.graphs.peekResident(g) == nil {
		dc := &deviceCSR{}
		copied := false
		err := e.dev.do(func() error {
			var err error
			copied, err = dc.copyFrom(e.dev, from)
			if err != nil {
				return errors.Join(err, dc.free(e.dev))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if copied {
			if err := e.graphs.putResident(g, dc); err != nil {
				return nil, errors.Join(err, e.dev.do(func() error { return dc.free(e.dev) }))
			}
			e.csrCopies.Add(1)
		}
	}
	r, err := e.PrepareTuned(ctx, g, req, t)
	if err != nil {
		return nil, errors.Join(err, e.ReleaseCSR(g))
	}
	sharePlanGraph(r, from)
	return r, nil
}

// prepare is Prepare with the batched kernel's configuration (tests and
// benchmarks pass others than the default).
func (e *Engine) prepare(ctx context.Context, g *graph.CSR, req graph.Request, batched batchedConfig) (*Runner, error) {
	tracef(e.dev.ordinal, "prepare")
	defer tracef(e.dev.ordinal, "prepare done")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	autoWhy := ""
	if req.Algorithm == graph.Auto && g != nil {
		req.Algorithm, autoWhy = chooseAlgorithm(g)
	}
	if err := checkRequest(g, req); err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errClosed
	}
	e.mu.Unlock()
	if req.Algorithm == Batched {
		if err := batched.Check(); err != nil {
			return nil, fmt.Errorf("gpu: batched: %w", err)
		}
	}
	r := newRunner(e, g, req, batched)
	r.autoWhy = autoWhy
	r.csr.adopt = e.graphs.takeResident(g)
	if r.csr.adopt == nil {
		r.csr.lent = e.graphs.borrowKept(g)
	}
	if req.Algorithm == Batched && r.csr.lent == nil {
		r.bk.adopt(e.graphs.takeAhead(g))
	}
	uploads := r.csr.adopt == nil && r.csr.lent == nil
	if r.csr.lent != nil {
		r.bk.graph = r.csr.lent.plan // measured once for every borrower
	}
	upload := func() error {
		if err := r.csr.upload(e.dev, g, req.Algorithm); err != nil {
			return err
		}
		return r.csr.uploadArcsByWeight(e.dev, r.bk.cuts(), r.bk.graph)
	}
	if err := e.dev.do(upload); err != nil {
		return nil, errors.Join(err, e.dev.do(r.release))
	}
	if uploads {
		e.graphUploads.Add(1)
	}
	if r.bk.scratchPossible() && r.bk.cfg.ScratchMinShare > 0 {
		err := e.dev.do(func() error {
			free, _, err := e.dev.memInfo()
			r.bk.scratchDeclined = err != nil || !r.bk.scratchPays(free, func() int64 { return r.bytesPerSource(true) })
			return nil
		})
		if err != nil {
			return nil, errors.Join(err, e.dev.do(r.release))
		}
	}
	e.mu.Lock()
	e.runners[r] = struct{}{}
	e.mu.Unlock()
	return r, nil
}

func checkRequest(g *graph.CSR, req graph.Request) error {
	if req.Algorithm == graph.Auto {
		return errors.New("gpu: algorithm auto is resolved by Prepare, not run")
	}
	if _, ok := plans[req.Algorithm]; !ok {
		return fmt.Errorf("gpu: unknown algorithm %q", req.Algorithm)
	}
	if req.WithPredecessors && !req.Algorithm.HasPredecessors() {
		return fmt.Errorf("gpu: algorithm %s stores no predecessors", req.Algorithm)
	}
	if g.NumVertices < 0 || len(g.Offsets) != g.NumVertices+1 {
		return fmt.Errorf("gpu: CSR has %d offsets for %d vertices", len(g.Offsets), g.NumVertices)
	}
	switch g.Type {
	case graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64:
	default:
		return fmt.Errorf("gpu: invalid distance type %v", g.Type)
	}
	if req.Algorithm.CountsHops() || req.Algorithm.AcceptsNegative() || !g.HasNegative() {
		return nil
	}
	return g.NegativeWeight(req.Algorithm)
}

// asBytes views a slice of fixed-size numbers as its bytes.
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// sliceBytes views a []int32, []int64, []float32 or []float64 as bytes.
func sliceBytes(v any) ([]byte, error) {
	switch s := v.(type) {
	case []int32:
		return asBytes(s), nil
	case []int64:
		return asBytes(s), nil
	case []float32:
		return asBytes(s), nil
	case []float64:
		return asBytes(s), nil
	}
	return nil, fmt.Errorf("gpu: unsupported slice type %T", v)
}

// typeSuffix names the kernel instance of a distance type.
func typeSuffix(t graph.DistType) string {
	switch t {
	case graph.DistInt32:
		return "i32"
	case graph.DistInt64:
		return "i64"
	case graph.DistFloat32:
		return "f32"
	}
	return "f64"
}

// ptrOf is the address of a slice's first element.
func ptrOf[T any](s []T) unsafe.Pointer { return unsafe.Pointer(&s[0]) }
