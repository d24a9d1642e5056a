package gpu

// Betweenness on the device (kernels/brandes.cu): a block's distance rows
// are computed as for RunStats, by whatever kernel the runner runs (auto's
// batched kernel, dijkstra, bfs, ...), and stay on the device; Brandes's
// forward and backward passes run there over them, one thread block per
// source, and only the block's sums come back: n per vertex, or m per arc
// for edge betweenness.
//
// The entry points are functions of a runner, not methods, so that
// Runner keeps its one job (internal/layout bounds its methods);
// gpu/devices adapts them to graph.BetweennessRunner.
//
// Supported: int32, int64 and float64 distances, and hop counts (bfs and
// bfs-level runners). float32 distances are refused: their sums round in
// float32, so their ties are not those of the float64 sums networkx and
// the CPU engine compare. Narrowed runners and runners with predecessors
// are refused too.

import (
	"context"
	"errors"

	"github.com/pathctl/pathctl/graph"
)

// brandesBufs is a runner's betweenness buffers for up to k sources (on
// the device goroutine): per source a row of tight bits (one per arc),
// the tight in-arcs' counters, σ, δ, the order of the forward pass and its
// levels' starts, and the count it reached; the block's n sums; and every
// arc's tail (4 bytes an arc, made once). The sums' buffer holds outLen
// values: n, or m for edge betweenness.
type brandesBufs struct {
	k, outLen                                  int
	bits, cnt, sigma, delta, order, levels, re devBuf
	out, arcTails                              devBuf
}

// brandesWords is the number of 32-bit words of tight bits per source.
func brandesWords(m int64) int64 { return (m + 31) / 32 }

// brandesRowBytes is the device memory of one source's betweenness
// buffers beside its distance row.
func brandesRowBytes(n int, m int64) int64 {
	return int64(n)*(4+8+8+4+4) + 4*brandesWords(m) + 4
}

// arcTails is every arc's tail vertex, in CSR order.
func arcTails(g *graph.CSR) []int32 {
	tails := make([]int32, len(g.Targets))
	for u := range g.NumVertices {
		for a := g.Offsets[u]; a < g.Offsets[u+1]; a++ {
			tails[a] = int32(u)
		}
	}
	return tails
}

// BetweennessBytesPerSource is the device memory one more source in a
// block of RunBetweenness costs: a stats block's (StatsBytesPerSource)
// and the betweenness buffers.
func BetweennessBytesPerSource(r *Runner) int64 {
	return r.StatsBytesPerSource() + brandesRowBytes(r.n, r.g.NumEdges())
}

// BetweennessSupported says why r cannot run RunBetweenness, or nil.
func BetweennessSupported(r *Runner) error {
	switch {
	case r.Narrowed():
		return errors.New("gpu: betweenness of a narrowed runner")
	case r.req.WithPredecessors:
		return errors.New("gpu: betweenness of a runner with predecessors")
	case r.distType == graph.DistFloat32 && !brandesHops(r):
		return errors.New("gpu: betweenness over float32 distances (their sums round in float32; the CPU engine sums them in float64)")
	}
	return nil
}

// brandesHops reports whether r's rows are hop counts.
func brandesHops(r *Runner) bool { return r.req.Algorithm.CountsHops() || r.g.Weights == nil }

// RunBetweenness returns, for every vertex v, the sum over sources of
// Brandes's dependency δ_s(v) (with endpoints, networkx's endpoint terms
// too), as cpu.Engine.Betweenness defines it, computed on r's device.
// The sources run as one block, halved once when the device runs out of
// memory as RunStats' blocks are. Errors are those of RunStats and of
// BetweennessSupported.
func RunBetweenness(ctx context.Context, r *Runner, sources []graph.VertexID, endpoints bool) ([]float64, error) {
	return runBrandes(ctx, r, sources, brandesVertices{endpoints})
}

// RunEdgeBetweenness returns, for every arc of r's graph in CSR order, the
// sum over sources of the dependencies flowing through it, as
// cpu.Engine.EdgeBetweenness defines it, computed on r's device from the
// same passes as RunBetweenness (kernels/brandes.cu's brandes_edges).
// Blocks and errors are RunBetweenness'.
func RunEdgeBetweenness(ctx context.Context, r *Runner, sources []graph.VertexID) ([]float64, error) {
	return runBrandes(ctx, r, sources, brandesArcs{})
}

// brandesSums is what a block of Brandes's passes sums on the device: per
// vertex (brandesVertices) or per arc (brandesArcs).
type brandesSums interface {
	// size is the length of the sum vector for r's graph.
	size(r *Runner) int
	// launch runs the summing kernel over the block of k sources into out.
	launch(r *Runner, k int, out devBuf) error
}

// brandesVertices sums the dependencies per vertex (brandes_sum_*).
type brandesVertices struct{ endpoints bool }

func (brandesVertices) size(r *Runner) int { return r.n }

func (s brandesVertices) launch(r *Runner, k int, out devBuf) error {
	sum := "brandes_sum_" + typeSuffix(r.distType)
	if brandesHops(r) {
		sum = "brandes_sum_i32"
	}
	grid := (r.n + threadsPerBlock - 1) / threadsPerBlock
	return r.e.dev.launchAsync(sum, grid, r.buf.dist.ptr, int32(r.n), r.buf.sources.ptr, int32(k), r.bc.delta.ptr, r.bc.re.ptr,
		boolInt(s.endpoints), out.ptr)
}

// brandesArcs sums the dependencies per arc (brandes_edges).
type brandesArcs struct{}

func (brandesArcs) size(r *Runner) int { return int(r.g.NumEdges()) }

func (brandesArcs) launch(r *Runner, k int, out devBuf) error {
	m := r.g.NumEdges()
	if m == 0 {
		return nil
	}
	grid := int(min((m+threadsPerBlock-1)/threadsPerBlock, 1<<20))
	b := &r.bc
	return r.e.dev.launchAsync("brandes_edges", grid, r.csr.targets.ptr, b.arcTails.ptr, int32(r.n), m, int32(k), b.bits.ptr,
		b.sigma.ptr, b.delta.ptr, out.ptr)
}

// runBrandes runs the passes over sources in blocks and adds the blocks'
// sums, of kind sums, in block order.
func runBrandes(ctx context.Context, r *Runner, sources []graph.VertexID, sums brandesSums) ([]float64, error) {
	if err := BetweennessSupported(r); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkSources(sources, r.n); err != nil {
		return nil, err
	}
	total := make([]float64, sums.size(r))
	if len(sources) == 0 || len(total) == 0 {
		return total, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("gpu: run on a closed runner")
	}
	part := make([]float64, len(total))
	tracef(r.e.dev.ordinal, "betweenness of %d sources", len(sources))
	err := r.e.dev.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		return runChunks(len(sources), &r.buf.fit, func() error { return releaseBetweenness(r) }, func(lo, hi int) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := brandesBlock(r, sources[lo:hi], sums, part); err != nil {
				return err
			}
			for v, x := range part {
				total[v] += x
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return total, nil
}

// brandesBlock computes the rows of sources, runs the passes over them and
// downloads the block's sums into part (on the device goroutine).
func brandesBlock(r *Runner, sources []graph.VertexID, sums brandesSums, part []float64) error {
	c, err := r.compute(sources, r.buf.statsSlot(), r.bk.cfg.OneSlotStats)
	if err != nil {
		return err
	}
	if c >= 0 {
		return negativeCycle(r.g, c) // the caller checks the weights non-negative first
	}
	k, dv := len(sources), r.e.dev
	if err := r.bc.ensure(dv, k, r.g, len(part)); err != nil {
		if isOutOfMemory(err) {
			err = outOfMemory(dv, k, BetweennessBytesPerSource(r), err)
		}
		return err
	}
	b := &r.bc
	kernel := "brandes_" + typeSuffix(r.distType)
	weights := r.csr.weights.ptr
	if brandesHops(r) {
		kernel, weights = "brandes_hops", 0
	}
	if err := dv.d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	err = dv.launchAsync(kernel, k, r.csr.offsets.ptr, r.csr.targets.ptr, weights, b.arcTails.ptr, int32(r.n), r.g.NumEdges(),
		r.buf.sources.ptr, int32(k), r.buf.dist.ptr, b.bits.ptr, b.cnt.ptr, b.sigma.ptr, b.delta.ptr, b.order.ptr, b.levels.ptr, b.re.ptr)
	if err != nil {
		return err
	}
	if err := sums.launch(r, k, b.out); err != nil {
		return err
	}
	if err := dv.finishTimed(kernel); err != nil {
		return err
	}
	r.kernelTime += dv.lastKernel
	out := asBytes(part)
	r.buf.downloaded.Add(int64(len(out)))
	return dv.download(out, b.out.ptr, &r.buf.stage)
}

// boolInt is b as a kernel's int argument.
func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// releaseBetweenness frees the block's buffers and the betweenness
// buffers: runChunks' release before it halves a chunk.
func releaseBetweenness(r *Runner) error {
	return errors.Join(r.releaseBlock(), r.bc.release(r.e.dev))
}

// ensure sizes the buffers for k sources of g and sums of outLen values
// (n per vertex, m per arc).
func (b *brandesBufs) ensure(dv *device, k int, g *graph.CSR, outLen int) error {
	if k <= b.k && outLen <= b.outLen {
		return nil
	}
	if err := b.release(dv); err != nil {
		return err
	}
	n, m := g.NumVertices, g.NumEdges()
	if m > 0 {
		var err error
		if b.arcTails, err = dv.upload(asBytes(arcTails(g))); err != nil {
			return err
		}
	}
	rows := int64(k) * int64(n)
	sizes := []struct {
		buf  *devBuf
		size int64
	}{
		{&b.bits, 4 * int64(k) * brandesWords(m)}, {&b.cnt, 4 * rows}, {&b.sigma, 8 * rows}, {&b.delta, 8 * rows},
		{&b.order, 4 * rows}, {&b.levels, 4 * rows}, {&b.re, 4 * int64(k)}, {&b.out, 8 * int64(max(n, outLen))},
	}
	for _, s := range sizes {
		var err error
		if *s.buf, err = dv.alloc(s.size); err != nil {
			return errors.Join(err, b.release(dv))
		}
	}
	b.k, b.outLen = k, max(n, outLen)
	return nil
}

// release frees the buffers (on the device goroutine).
func (b *brandesBufs) release(dv *device) error {
	var errs []error
	for _, p := range []*devBuf{&b.bits, &b.cnt, &b.sigma, &b.delta, &b.order, &b.levels, &b.re, &b.out, &b.arcTails} {
		errs = append(errs, dv.free(p))
	}
	b.k, b.outLen = 0, 0
	return errors.Join(errs...)
}
