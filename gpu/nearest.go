package gpu

// Nearest source on the device (kernels/nearest.cu): for every vertex the
// distance to the nearest of a set of sources and which source it is, ties
// to the smaller source id, in one multi-source run whose cost does not grow
// with the number of sources. The kernels are label correcting over a dense
// frontier, scheduled near-far with a bound that moves by delta; int32 and
// float32 labels are packed (distance, source) cells updated by one 64-bit
// atomicMin, int64 and float64 distances run first and their sources after,
// over the tight arcs. This file drives the rounds from the host: it queues
// them in batches and reads the control words between batches.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
)

// nearestDeltaScale multiplies the mean arc weight into the bucket width
// delta of the near-far schedule when the request names none. A wide bucket
// means fewer rounds (each a scan of the frontier bytes and two launches), a
// narrow one fewer relaxations of labels that are not final yet. The
// schedule's rounds and relaxations, counted by a host replay of the rounds
// (every thread reading the labels as the round began, the most rounds a
// device can take) on issue 17's grid (1000², weights 1..1000, mean 500):
//
//	             10,000 sources          one source
//	delta      rounds  relax/arc     rounds  relax/arc
//	500          108      1.05         3528     1.05
//	1000          79      1.13         2659     1.14
//	2000          56      1.24         2118     1.29
//	4000          45      1.41         1765     1.58
//	no buckets    39      1.58         1243    27.9
//
// Two mean weights keep the relaxations within 15 % of Dijkstra's at a few
// dozen rounds for many sources, and cap the label-correcting blow-up of one
// source. Device times belong in docs/benchmarks-history.md ("Nearest source").
const nearestDeltaScale = 2

// nearestWeightSample bounds the arcs whose weights estimate the mean
// weight: evenly spaced, so that the estimate costs O(1) and is the same on
// every run.
const nearestWeightSample = 1 << 16

// nearestFirstBatch and nearestMaxBatch bound the rounds queued between two
// reads of the done word: the batch doubles from the first to the max, so a
// run of a few rounds waits little and a run of thousands reads done rarely.
// Rounds queued after the last one return at once.
const (
	nearestFirstBatch = 4
	nearestMaxBatch   = 64
)

// nearestMeanwhileBatch is the smallest batch of rounds during which the
// host does its own part of the run (untilDone's meanwhile): the device
// waits for the host's next batch once it is through the queued one, and
// 16 rounds of issue 17's grid (about 2.5 ms on an H100) cover pinning the
// stage of a million vertices.
const nearestMeanwhileBatch = 16

// nearestControlWords is the size of kernels/nearest.cu's Control, in u64.
const nearestControlWords = 6

// nearestStageMax is the largest pinned stage that holds both columns of
// the result at once: past it (some 20 million vertices of int32
// distances) the columns share a stage of the larger one, one after the
// other, as page-locked memory is taken from the whole machine.
const nearestStageMax = 256 << 20

// nearestCopyChunk is the fewest bytes one goroutine copies out of the
// pinned stage: the result's columns are a few MiB for a million vertices,
// which one core copies (and faults in) in about a millisecond each.
const nearestCopyChunk = 512 << 10

// NearestInfo describes one run of Nearest on the device.
type NearestInfo struct {
	Delta  float64       // the bucket width of the near-far schedule
	Rounds int64         // relaxation rounds run (both passes for 64-bit distances)
	Kernel time.Duration // device time from the first kernel to the last (downloads excluded)
}

// Nearest computes, for every vertex of g, the distance to the nearest of
// sources and that source (ties to the smaller source id), over g's
// non-negative weights, in one multi-source run on the device; req.Cutoff,
// when set, leaves vertices farther than it unreached (Infinity, source -1),
// and req.Delta, when positive, is the bucket width. It satisfies
// graph.NearestFinder with the CPU engine's results wherever sums are exact
// (integers, floats that do not round). Where float sums round, paths of
// different real lengths can sum to the same distance: the source is then
// one whose path sums to the nearest distance, but which of such a tie wins
// may vary between runs (label correcting may relax a label that a later
// one replaces, and a Dijkstra never does). Negative weights give a
// *graph.NegativeWeightError; an empty or out-of-range source list an error.
// The device copy of g that BuildCSRResident kept is used where there is
// one (and left for later runs and Prepare), else g is uploaded for the
// run and freed after it. The cost is O(rounds · n) for the frontier
// scans plus the relaxations, which label correcting repeats for labels
// that improve more than once.
func (e *Engine) Nearest(ctx context.Context, g *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, error) {
	res, _, err := e.NearestInfo(ctx, g, sources, req)
	return res, err
}

// NearestInfo is Nearest that also says how the run went.
func (e *Engine) NearestInfo(ctx context.Context, g *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, NearestInfo, error) {
	return e.nearestInfo(ctx, g, sources, req, nearestStageMax)
}

// nearestInfo is NearestInfo with the largest stage that holds both
// columns (tests lower it to take the one-column path on small graphs).
func (e *Engine) nearestInfo(ctx context.Context, g *graph.CSR, sources []graph.VertexID, req graph.Request, stageMax int64) (*graph.Nearest, NearestInfo, error) {
	var info NearestInfo
	if err := ctx.Err(); err != nil {
		return nil, info, err
	}
	if err := checkNearest(g, sources); err != nil {
		return nil, info, err
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, info, errClosed
	}
	run := &nearestRun{dv: e.dev, g: g, n: g.NumVertices, sources: sources, cut: cutBitsOf(g.Type, req),
		delta: nearestDelta(g, req.Delta), stageMax: stageMax}
	info.Delta = run.delta
	// The result's columns are allocated, and their pages faulted in, on
	// a goroutine of their own while the device runs, rather than in the
	// copy out of the stage.
	columns := make(chan *graph.Nearest, 1)
	go func() {
		res := newNearestResult(g.Type, g.NumVertices)
		dist, _ := sliceBytes(res.Dist)
		touchPages(dist)
		touchPages(asBytes(res.Source))
		columns <- res
	}()
	var res *graph.Nearest
	result := func() *graph.Nearest {
		if res == nil {
			res = <-columns
		}
		return res
	}
	err := e.dev.do(func() error {
		// Looked up on the device goroutine: a Prepare may take the copy
		// from the map meanwhile, but its runner frees it on this
		// goroutine, after this run.
		dc := e.graphs.peekResident(g)
		if dc == nil {
			e.graphUploads.Add(1)
		}
		err := run.run(ctx, dc, result)
		return errors.Join(err, run.release())
	})
	info.Rounds, info.Kernel = run.rounds, run.kernel
	if err != nil {
		return nil, info, err
	}
	return result(), info, nil
}

// touchPages writes a zero byte into every page of b, which is zero: the
// operating system maps the pages of a fresh allocation on their first
// write.
func touchPages(b []byte) {
	const page = 4096
	for i := 0; i < len(b); i += page {
		b[i] = 0
	}
}

// newNearestResult allocates the columns of a nearest result of n vertices
// with distances of type t.
func newNearestResult(t graph.DistType, n int) *graph.Nearest {
	res := &graph.Nearest{Type: t, Source: make([]graph.VertexID, n)}
	switch t {
	case graph.DistInt32:
		res.Dist = make([]int32, n)
	case graph.DistInt64:
		res.Dist = make([]int64, n)
	case graph.DistFloat32:
		res.Dist = make([]float32, n)
	default:
		res.Dist = make([]float64, n)
	}
	return res
}

// checkNearest checks what Nearest is given, as the CPU engine does.
func checkNearest(g *graph.CSR, sources []graph.VertexID) error {
	if g == nil {
		return errors.New("gpu: nearest source of a nil graph")
	}
	if g.NumVertices < 0 || len(g.Offsets) != g.NumVertices+1 {
		return fmt.Errorf("gpu: CSR has %d offsets for %d vertices", len(g.Offsets), g.NumVertices)
	}
	switch g.Type {
	case graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64:
	default:
		return fmt.Errorf("gpu: invalid distance type %v", g.Type)
	}
	if len(sources) == 0 {
		return errors.New("gpu: the nearest source needs at least one source")
	}
	if len(sources) > math.MaxInt32 {
		return fmt.Errorf("gpu: %d sources, at most %d", len(sources), math.MaxInt32)
	}
	for _, s := range sources {
		if s < 0 || int(s) >= g.NumVertices {
			return fmt.Errorf("gpu: source %d outside [0, %d)", s, g.NumVertices)
		}
	}
	if g.HasNegative() {
		return g.NegativeWeight(graph.Dijkstra)
	}
	return nil
}

// nearestDelta is asked when positive, else nearestDeltaScale times the
// mean weight of a sample of arcs (at least 1 for integer weights; 1 where
// the graph has no arc or only zero weights).
func nearestDelta(g *graph.CSR, asked float64) float64 {
	if asked > 0 {
		return asked
	}
	m := g.NumEdges()
	if m == 0 {
		return 1
	}
	step := max(m/nearestWeightSample, 1)
	var sum float64
	var count int64
	for k := int64(0); k < m; k += step {
		sum += g.WeightAt(k)
		count++
	}
	d := nearestDeltaScale * sum / float64(count)
	if !g.Type.IsFloat() {
		d = math.Floor(d)
	}
	if !(d > 0) || math.IsInf(d, 0) {
		d = 1
	}
	return d
}

// cutBitsOf is the cutoff of req as kernels/nearest.cu reads it: the bits of
// graph.CutoffOf in the distance type t (its infinity without a cutoff).
func cutBitsOf(t graph.DistType, req graph.Request) uint64 {
	c := math.Inf(1)
	if req.HasCutoff {
		c = req.Cutoff
	}
	switch t {
	case graph.DistInt32:
		return uint64(uint32(graph.CutoffOf[int32](c)))
	case graph.DistInt64:
		return uint64(graph.CutoffOf[int64](c))
	case graph.DistFloat32:
		return uint64(math.Float32bits(graph.CutoffOf[float32](c)))
	}
	return math.Float64bits(graph.CutoffOf[float64](c))
}

// nearestRun is one run of Nearest on the device goroutine, with the device
// buffers it holds.
type nearestRun struct {
	dv      *device
	g       *graph.CSR
	n       int
	sources []graph.VertexID
	cut     uint64
	delta   float64
	// stageMax is the largest stage that holds both columns of the
	// result (nearestStageMax).
	stageMax int64

	offsets, targets, weights devBuf
	// borrowed marks offsets, targets and weights as the resident copy's,
	// which release leaves alone (weights only where borrowedWeights).
	borrowed, borrowedWeights bool
	sourceIDs                 devBuf
	labels                    devBuf // packed cells (32-bit types) or distances (64-bit types)
	dist                      devBuf // the distances (32-bit types: split from the cells)
	owner                     devBuf // the nearest source of every vertex
	frontier                  devBuf // cur and next, n bytes each
	control                   devBuf
	stage                     pinned

	rounds int64
	kernel time.Duration
}

// release frees what the run took (on the device goroutine).
func (r *nearestRun) release() error {
	if r.borrowed {
		r.offsets, r.targets = devBuf{}, devBuf{}
	}
	if r.borrowedWeights {
		r.weights = devBuf{}
	}
	var errs []error
	for _, b := range []*devBuf{&r.offsets, &r.targets, &r.weights, &r.sourceIDs, &r.labels, &r.dist, &r.owner, &r.frontier, &r.control} {
		errs = append(errs, r.dv.free(b))
	}
	errs = append(errs, r.dv.freePinned(&r.stage))
	return errors.Join(errs...)
}

// upload borrows the graph's resident device copy dc (nil: uploads g) and
// allocates the run's buffers.
func (r *nearestRun) upload(dc *deviceCSR) error {
	dv, g := r.dv, r.g
	var err error
	if dc != nil {
		r.offsets, r.targets, r.weights = dc.offsets, dc.targets, dc.weights
		r.borrowed, r.borrowedWeights = true, dc.weights.ptr != 0
	} else {
		if r.offsets, err = dv.upload(asBytes(g.Offsets)); err != nil {
			return err
		}
		if r.targets, err = dv.upload(asBytes(g.Targets)); err != nil {
			return err
		}
	}
	if r.weights.ptr == 0 && g.NumEdges() > 0 {
		w, err := sliceBytes(g.Weights)
		if err != nil {
			return err
		}
		if r.weights, err = dv.upload(w); err != nil {
			return err
		}
	}
	if r.sourceIDs, err = dv.upload(asBytes(r.sources)); err != nil {
		return err
	}
	n := int64(r.n)
	size := int64(r.g.Type.Size())
	labels := size // 64-bit distances: the distance row is the label
	if !wideNearest(r.g.Type) {
		labels = 8
		if r.dist, err = dv.alloc(size * n); err != nil {
			return err
		}
	}
	for _, b := range []struct {
		buf  *devBuf
		size int64
	}{
		{&r.labels, labels * n},
		{&r.owner, 4 * n},
		{&r.frontier, 2 * n},
		{&r.control, 8 * nearestControlWords},
	} {
		if *b.buf, err = dv.alloc(b.size); err != nil {
			return err
		}
	}
	return nil
}

// wideNearest reports whether distances of type t run in two passes
// (distances, then sources): the 64-bit types, which leave no room for the
// source in a 64-bit cell.
func wideNearest(t graph.DistType) bool { return t.Size() == 8 }

// resetControl writes the control words of a pass: the first bound, no
// waiting distance, no flags.
func (r *nearestRun) resetControl() error {
	words := [nearestControlWords]uint64{math.Float64bits(r.delta), math.Float64bits(math.Inf(1))}
	return r.dv.d.cuMemcpyHtoD_v2(r.control.ptr, unsafe.Pointer(&words[0]), 8*nearestControlWords).Err("cuMemcpyHtoD_v2")
}

// run computes the result on the device goroutine into the columns
// result returns (which it asks for once the rounds are done).
func (r *nearestRun) run(ctx context.Context, dc *deviceCSR, result func() *graph.Nearest) error {
	dv := r.dv
	if err := r.upload(dc); err != nil {
		return err
	}
	if r.n == 0 {
		return nil
	}
	sfx := typeSuffix(r.g.Type)
	n32, k32 := int32(r.n), int32(len(r.sources))
	grid := (r.n + threadsPerBlock - 1) / threadsPerBlock
	seedGrid := (len(r.sources) + threadsPerBlock - 1) / threadsPerBlock
	cur, next := r.frontier.ptr, r.frontier.ptr+uint64(r.n)
	if err := r.resetControl(); err != nil {
		return err
	}
	if err := dv.d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	wide := wideNearest(r.g.Type)
	var err error
	if wide {
		err = dv.launchAsync("nearest_init_"+sfx, grid, n32, r.labels.ptr, r.owner.ptr, cur, next)
		if err == nil {
			err = dv.launchAsync("nearest_seed_"+sfx, seedGrid, r.sourceIDs.ptr, k32, r.labels.ptr, r.owner.ptr, cur)
		}
	} else {
		err = dv.launchAsync("nearest_init_packed", grid, n32, r.labels.ptr, cur, next)
		if err == nil {
			err = dv.launchAsync("nearest_seed_packed", seedGrid, r.sourceIDs.ptr, k32, r.labels.ptr, cur)
		}
	}
	if err != nil {
		return err
	}
	round := func(cur, next uint64) error {
		return dv.launchAsync("nearest_round_"+sfx, grid, r.offsets.ptr, r.targets.ptr, r.weights.ptr, n32, r.cut,
			r.labels.ptr, cur, next, r.control.ptr)
	}
	// The stage holds both columns (one column at a time past
	// nearestStageMax); with the overlap it is pinned while a batch of
	// rounds runs (untilDone).
	distSize := int64(r.g.Type.Size()) * int64(r.n)
	stageBytes := distSize + 4*int64(r.n)
	if stageBytes > r.stageMax {
		stageBytes = max(distSize, 4*int64(r.n))
	}
	// The pinned stage is allocated once a batch of nearestMeanwhileBatch
	// rounds is queued, not after the last round finishes.
	pinStage := func() error { return dv.ensurePinned(&r.stage, stageBytes) }
	if err := r.untilDone(ctx, &cur, &next, round, pinStage); err != nil {
		return err
	}
	if wide {
		// The second pass: the sources over the tight arcs. Both frontiers
		// are empty; the seeds put the sources back in cur.
		if err := r.resetControl(); err != nil {
			return err
		}
		err := dv.launchAsync("nearest_seed_"+sfx, seedGrid, r.sourceIDs.ptr, k32, r.labels.ptr, r.owner.ptr, cur)
		if err != nil {
			return err
		}
		sourceRound := func(cur, next uint64) error {
			return dv.launchAsync("nearest_source_round_"+sfx, grid, r.offsets.ptr, r.targets.ptr, r.weights.ptr, n32,
				r.labels.ptr, r.owner.ptr, cur, next, r.control.ptr)
		}
		if err := r.untilDone(ctx, &cur, &next, sourceRound, nil); err != nil {
			return err
		}
		err = dv.launchAsync("nearest_sources_finish", grid, n32, r.owner.ptr)
		if err != nil {
			return err
		}
		r.dist = r.labels
		defer func() { r.dist = devBuf{} }() // one buffer, freed once as labels
	} else {
		err := dv.launchAsync("nearest_finish_"+sfx, grid, n32, r.labels.ptr, r.dist.ptr, r.owner.ptr)
		if err != nil {
			return err
		}
	}
	if err := dv.finishTimed("nearest_finish"); err != nil {
		return err
	}
	r.kernel += dv.lastKernel
	res := result()
	distBytes, err := sliceBytes(res.Dist)
	if err != nil {
		return err
	}
	sourceBytes := asBytes(res.Source)
	if err := pinStage(); err != nil {
		return err
	}
	stage := unsafe.Slice((*byte)(r.stage.p), r.stage.size)
	if int64(len(distBytes)+len(sourceBytes)) > r.stage.size {
		// One column at a time through a stage of the larger one.
		for _, c := range []struct {
			dst []byte
			src uint64
		}{{distBytes, r.dist.ptr}, {sourceBytes, r.owner.ptr}} {
			if err := dv.d.cuMemcpyDtoH_v2(unsafe.Pointer(&stage[0]), c.src, uint64(len(c.dst))).Err("cuMemcpyDtoH_v2 of a nearest column"); err != nil {
				return err
			}
			nearestCopyOut([][]byte{c.dst}, [][]byte{stage[:len(c.dst)]})
		}
		return nil
	}
	// Both columns into the stage, then out of it on every core.
	if err := dv.d.cuMemcpyDtoH_v2(unsafe.Pointer(&stage[0]), r.dist.ptr, uint64(len(distBytes))).Err("cuMemcpyDtoH_v2 of the nearest distances"); err != nil {
		return err
	}
	if err := dv.d.cuMemcpyDtoH_v2(unsafe.Pointer(&stage[len(distBytes)]), r.owner.ptr, uint64(len(sourceBytes))).Err("cuMemcpyDtoH_v2 of the nearest sources"); err != nil {
		return err
	}
	nearestCopyOut([][]byte{distBytes, sourceBytes}, [][]byte{stage[:len(distBytes)], stage[len(distBytes) : len(distBytes)+len(sourceBytes)]})
	return nil
}

// nearestCopyOut copies src[i] into dst[i] for every i, in pieces of at least
// nearestCopyChunk bytes spread over GOMAXPROCS goroutines.
func nearestCopyOut(dst, src [][]byte) {
	total := 0
	for _, b := range src {
		total += len(b)
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), total/nearestCopyChunk))
	per := (total + workers - 1) / workers
	type piece struct{ dst, src []byte }
	var pieces []piece
	for i := range src {
		for lo := 0; lo < len(src[i]); lo += per {
			hi := min(lo+per, len(src[i]))
			pieces = append(pieces, piece{dst[i][lo:hi], src[i][lo:hi]})
		}
	}
	var wg sync.WaitGroup
	for _, p := range pieces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(p.dst, p.src)
		}()
	}
	wg.Wait()
}

// untilDone queues round (each followed by the advance kernel) in batches,
// swapping the frontiers after each, until the control words say done or
// ctx is cancelled. meanwhile, when not nil, runs once on the host after
// the first batch of at least nearestMeanwhileBatch rounds is queued, while
// the device works through it (a run done sooner never calls it).
func (r *nearestRun) untilDone(ctx context.Context, cur, next *uint64, round func(cur, next uint64) error, meanwhile func() error) error {
	dv := r.dv
	var words [nearestControlWords]uint64
	for batch := nearestFirstBatch; ; batch = min(2*batch, nearestMaxBatch) {
		if err := ctx.Err(); err != nil {
			return err
		}
		for range batch {
			if err := round(*cur, *next); err != nil {
				return err
			}
			if err := dv.launchAsync("nearest_advance", 1, r.control.ptr, r.delta); err != nil {
				return err
			}
			*cur, *next = *next, *cur
		}
		if meanwhile != nil && batch >= nearestMeanwhileBatch {
			if err := meanwhile(); err != nil {
				return err
			}
			meanwhile = nil
		}
		err := dv.readBack(unsafe.Pointer(&words[0]), r.control.ptr, 8*nearestControlWords, "nearest_round")
		if err != nil {
			return err
		}
		if words[4] != 0 { // done
			r.rounds += int64(words[5])
			return nil
		}
	}
}
