package gpu

// Betweenness on the device (kernels/brandes.cu): a block's distance rows
// are computed as for RunStats, by whatever kernel the runner runs (auto's
// batched kernel, dijkstra, bfs, ...), and stay on the device; Brandes's
// forward and backward passes run there over them, each resident thread
// block (a slot, with its own scratch rows and sums) taking the block's
// sources in turn, and only the block's sums come back: n per vertex, or m
// per arc for edge betweenness.
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

// brandesBufs is a runner's betweenness buffers (on the device
// goroutine): how many blocks of the passes a multiprocessor keeps
// resident (brandesResident, asked once); each slot's scratch rows
// (kernels/brandes.cu: a thread block's σ, δ, counters, order, levels and
// tight bits, reused for each of its sources) and sums (outLen values: n,
// or m for edge betweenness); the block's sums added over the slots; and
// every arc's tail (4 bytes an arc, made once).
type brandesBufs struct {
	resident                    int // brandesResident, once known
	slots, outLen               int
	scratch, acc, out, arcTails devBuf
}

// brandesWords is the number of 32-bit words of tight bits per source.
func brandesWords(m int64) int64 { return (m + 31) / 32 }

// brandesSlotBytes is the device memory of one slot's scratch rows,
// kernels/brandes.cu's slotBytes: σ and δ in float64, the counters, order
// and levels in int32, a bit per arc; rounded up to 16 bytes.
func brandesSlotBytes(n int, m int64) int64 {
	return (28*int64(n) + 4*brandesWords(m) + 15) &^ 15
}

// brandesSlots is the number of thread blocks, each a slot, that run the
// passes: as many as the device keeps resident at once (the passes'
// registers allow 4 of 256 threads per multiprocessor on sm_90; a slot
// that waited for another to finish would run its sources after all the
// others), fewer where their buffers would take more than a quarter of the
// device's memory (the arcs' sums of a large graph), at least one. The
// sums' bits depend on it (the slots' sums are added in slot order), so it
// depends on the device, the kernel image and the graph alone. On the
// device goroutine.
func brandesSlots(r *Runner, outLen int) int {
	if r.bc.resident == 0 {
		r.bc.resident = brandesResident(r)
	}
	per := brandesSlotBytes(r.n, r.g.NumEdges()) + 8*int64(outLen)
	slots := int64(r.bc.resident * max(r.e.info.Multiprocessors, 1))
	if brandesSlotCap > 0 {
		slots = min(slots, int64(brandesSlotCap))
	}
	if fit := r.e.info.TotalMemory / 4 / per; fit < slots {
		slots = max(fit, 1)
	}
	return int(slots)
}

// brandesResident is how many thread blocks of the passes' kernel for r a
// multiprocessor keeps resident (cuOccupancyMaxActiveBlocksPerMultiprocessor),
// or batchedBlocksPerSM, the most of 256 threads, where the driver cannot
// say (the launch then fails and says why).
func brandesResident(r *Runner) int {
	f, _, err := r.e.dev.function(brandesKernel(r))
	if err != nil {
		return batchedBlocksPerSM
	}
	var blocks int32
	if r.e.dev.d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, threadsPerBlock, 0) != 0 || blocks < 1 {
		return batchedBlocksPerSM
	}
	return int(blocks)
}

// brandesKernel is the name of the passes' kernel for r's rows.
func brandesKernel(r *Runner) string {
	if brandesHops(r) {
		return "brandes_hops"
	}
	return "brandes_" + typeSuffix(r.distType)
}

// brandesSlotCap, where positive, caps brandesSlots: the tests set it, so
// that each slot runs many sources of a small graph in turn.
var brandesSlotCap int

// brandesOutLen is the length of the sums of r's graph: n per vertex, m
// per arc.
func brandesOutLen(r *Runner, edges bool) int {
	if edges {
		return int(r.g.NumEdges())
	}
	return r.n
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

// BetweennessBytes is the device memory of RunBetweenness (edges false)
// or RunEdgeBetweenness (edges true): fixed, whatever the block (the
// slots' buffers, the block's sums and the arcs' tails), and perSource for
// each source of a block (a stats block's rows, StatsBytesPerSource: the
// passes keep nothing per source). It asks the device goroutine for the
// slots, so it is not called on it.
func BetweennessBytes(r *Runner, edges bool) (fixed, perSource int64) {
	outLen := brandesOutLen(r, edges)
	var slots int64
	if err := r.e.dev.do(func() error { slots = int64(brandesSlots(r, outLen)); return nil }); err != nil {
		slots = int64(batchedBlocksPerSM * max(r.e.info.Multiprocessors, 1)) // a closed device: the run says so
	}
	fixed = slots*(brandesSlotBytes(r.n, r.g.NumEdges())+8*int64(outLen)) + 8*int64(outLen) + 4*r.g.NumEdges()
	return fixed, r.StatsBytesPerSource()
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
// vertex (brandesVertices, with or without networkx's endpoint terms) or
// per arc (brandesArcs).
type brandesSums interface {
	// edges reports whether the sums are per arc.
	edges() bool
	// endpoints reports whether the vertices' sums take the endpoint terms.
	endpoints() bool
}

// brandesVertices sums the dependencies per vertex.
type brandesVertices struct{ withEndpoints bool }

func (brandesVertices) edges() bool       { return false }
func (s brandesVertices) endpoints() bool { return s.withEndpoints }

// brandesArcs sums the dependencies per arc.
type brandesArcs struct{}

func (brandesArcs) edges() bool     { return true }
func (brandesArcs) endpoints() bool { return false }

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
	total := make([]float64, brandesOutLen(r, sums.edges()))
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
		err := runChunks(len(sources), &r.buf.fit, func() error { return releaseBetweenness(r) }, func(lo, hi int) error {
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
		if err != nil { // the slots' sums of a block that failed may not have been cleared
			err = errors.Join(err, r.bc.release(r.e.dev))
		}
		return err
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
	outLen := len(part)
	slots := min(brandesSlots(r, outLen), k)
	if err := r.bc.ensure(dv, slots, r.g, outLen); err != nil {
		if isOutOfMemory(err) { // BetweennessBytes' perSource; it asks the device goroutine, which this is
			err = outOfMemory(dv, k, r.StatsBytesPerSource(), err)
		}
		return err
	}
	b := &r.bc
	kernel, weights := brandesKernel(r), r.csr.weights.ptr
	if brandesHops(r) {
		weights = 0
	}
	accV, accE := b.acc.ptr, uint64(0)
	if sums.edges() {
		accV, accE = 0, b.acc.ptr
	}
	if err := dv.d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	err = dv.launchAsync(kernel, slots, r.csr.offsets.ptr, r.csr.targets.ptr, weights, b.arcTails.ptr, int32(r.n), r.g.NumEdges(),
		r.buf.sources.ptr, int32(k), r.buf.dist.ptr, b.scratch.ptr, accV, accE, boolInt(sums.endpoints()))
	if err != nil {
		return err
	}
	grid := int(min((int64(outLen)+threadsPerBlock-1)/threadsPerBlock, 1<<20))
	if err := dv.launchAsync("brandes_reduce", grid, b.acc.ptr, int32(slots), int64(outLen), b.out.ptr); err != nil {
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

// ensure sizes the buffers for slots slots over g and sums of outLen
// values (n per vertex, m per arc); the slots' sums start at zero, and
// brandes_reduce clears them again as it adds them.
func (b *brandesBufs) ensure(dv *device, slots int, g *graph.CSR, outLen int) error {
	if slots <= b.slots && outLen <= b.outLen {
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
	outLen = max(n, outLen)
	sizes := []struct {
		buf  *devBuf
		size int64
	}{
		{&b.scratch, int64(slots) * brandesSlotBytes(n, m)}, {&b.acc, 8 * int64(slots) * int64(outLen)}, {&b.out, 8 * int64(outLen)},
	}
	for _, s := range sizes {
		var err error
		if *s.buf, err = dv.alloc(s.size); err != nil {
			return errors.Join(err, b.release(dv))
		}
	}
	if err := dv.d.cuMemsetD32_v2(b.acc.ptr, 0, uint64(2*slots*outLen)).Err("cuMemsetD32_v2 (betweenness sums)"); err != nil {
		return errors.Join(err, b.release(dv))
	}
	b.slots, b.outLen = slots, outLen
	return nil
}

// release frees the buffers (on the device goroutine).
func (b *brandesBufs) release(dv *device) error {
	var errs []error
	for _, p := range []*devBuf{&b.scratch, &b.acc, &b.out, &b.arcTails} {
		errs = append(errs, dv.free(p))
	}
	b.slots, b.outLen = 0, 0
	return errors.Join(errs...)
}
