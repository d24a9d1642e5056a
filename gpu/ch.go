package gpu

// The algorithm ch on the device: PHAST (Delling, Goldberg, Nowatzyk,
// Werneck, IPDPS 2011) batched over a block of sources, on a contraction
// hierarchy built on the host (package hierarchy). Per block, the host
// runs every source's upward search (small on road networks: hundreds of
// vertices) on every core and sends the spaces; the device fills its
// vertex-major table with them, sweeps the hierarchy's levels one kernel
// each (kernels/ch.cu) and gathers the table into the block's rows, which
// then travel and reduce as every kernel's rows do (stats, targets,
// cutoff, k nearest, the matrix's values).
//
// Choices: int32 distances only (the graph's type; the hierarchy's
// weights must fit, and PrepareCH refuses a hierarchy whose heaviest arc
// does not). The table lives in the block's auxiliary buffer (4 bytes a
// vertex and source, as the rows). The seeds go up once per block from
// pageable memory: 12 bytes per reached vertex and source, a few MB for
// thousands of sources.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// chSweep is a runner's hierarchy: the host's (for the upward searches)
// and its sweep's arrays on the device, with the seeds' buffers of the
// last block.
type chSweep struct {
	h     *hierarchy.Hierarchy
	sweep *hierarchy.Sweep
	// On the device: the down-arcs by position (start, tail, weight),
	// each vertex's position, the seeds' table offsets and distances.
	arcStart, arcTail, arcWeight, position devBuf
	seedAt, seedDist                       devBuf
	queries                                sync.Pool // *hierarchy.Query
}

var chPlan = kernelPlan{
	layout: func(t graph.DistType, _ bool) layout {
		return layout{dist: t.Size(), aux: t.Size()}
	},
	launch:              func(r *Runner, k int) error { return r.ch.launch(r, k) },
	derivesPredecessors: never,
}

// prepareCH is Engine.PrepareCH.
func prepareCH(ctx context.Context, e *Engine, g *graph.CSR, req graph.Request, h *hierarchy.Hierarchy) (*Runner, error) {
	switch {
	case req.Algorithm != graph.CH:
		return nil, fmt.Errorf("gpu: PrepareCH of the algorithm %s", req.Algorithm)
	case req.WithPredecessors:
		return nil, errors.New("gpu: the algorithm ch keeps no predecessors")
	case g.Type != graph.DistInt32:
		return nil, fmt.Errorf("gpu: the algorithm ch runs on int32 distances only so far, not %s", g.Type)
	case h == nil || h.NumVertices() != g.NumVertices:
		return nil, errors.New("gpu: PrepareCH without the graph's hierarchy")
	}
	sw := hierarchy.NewSweep(h)
	if sw.MaxWeight > math.MaxInt32 {
		return nil, fmt.Errorf("gpu: the hierarchy's heaviest arc, %d, is past int32", sw.MaxWeight)
	}
	r, err := e.prepare(ctx, g, req, defaultBatchedConfig())
	if err != nil {
		return nil, err
	}
	r.ch = &chSweep{h: h, sweep: sw}
	if err := e.dev.do(func() error { return r.ch.upload(e.dev) }); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return r, nil
}

// upload puts the sweep's arrays on dv (on the device goroutine).
func (c *chSweep) upload(dv *device) error {
	sw := c.sweep
	weights := make([]int32, len(sw.ArcWeight))
	for i, w := range sw.ArcWeight {
		weights[i] = int32(w)
	}
	var err error
	for _, b := range []struct {
		buf  *devBuf
		host []byte
	}{
		{&c.arcStart, asBytes(sw.ArcStart)}, {&c.arcTail, asBytes(sw.ArcTail)},
		{&c.arcWeight, asBytes(weights)}, {&c.position, asBytes(sw.Position)},
	} {
		if len(b.host) == 0 {
			continue
		}
		if *b.buf, err = dv.upload(b.host); err != nil {
			return err
		}
	}
	return nil
}

// release frees the device arrays (nil-safe; on the device goroutine).
func (c *chSweep) release(dv *device) error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, b := range []*devBuf{&c.arcStart, &c.arcTail, &c.arcWeight, &c.position, &c.seedAt, &c.seedDist} {
		errs = append(errs, dv.free(b))
	}
	return errors.Join(errs...)
}

// launch computes the rows of the k sources in r.blockSources into
// r.buf.dist, with r.buf.aux as the table (on the device goroutine).
func (c *chSweep) launch(r *Runner, k int) error {
	if c == nil {
		return errors.New("gpu: the algorithm ch needs a hierarchy (PrepareCH)")
	}
	dv := r.e.dev
	began := time.Now()
	at, dist, err := c.seeds(r.blockSources)
	r.host.plan += time.Since(began)
	if err != nil {
		return err
	}
	if err := c.ensureSeeds(dv, len(at)); err != nil {
		return err
	}
	if len(at) > 0 {
		if err := dv.d.cuMemcpyHtoD_v2(c.seedAt.ptr, ptrOf(at), uint64(8*len(at))).Err("cuMemcpyHtoD_v2 (ch seeds)"); err != nil {
			return err
		}
		if err := dv.d.cuMemcpyHtoD_v2(c.seedDist.ptr, ptrOf(dist), uint64(4*len(dist))).Err("cuMemcpyHtoD_v2 (ch seeds)"); err != nil {
			return err
		}
	}
	n, sw := r.n, c.sweep
	cells := uint64(k) * uint64(n)
	if err := dv.d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	if err := dv.d.cuMemsetD32_v2(r.buf.aux.ptr, uint32(math.MaxInt32), cells).Err("cuMemsetD32_v2 (ch table)"); err != nil {
		return err
	}
	if err := dv.launchAsync("ch_seed_i32", chGrid(uint64(len(at))), r.buf.aux.ptr, c.seedAt.ptr, c.seedDist.ptr, int64(len(at))); err != nil {
		return err
	}
	for l := range sw.Levels() {
		first, last := sw.LevelStart[l], sw.LevelStart[l+1]
		if sw.ArcStart[last] == sw.ArcStart[first] {
			continue // no arc enters the level: its seeds are final
		}
		err := dv.launchAsync("ch_level_i32", chGrid(uint64(last-first)*uint64(k)), r.buf.aux.ptr, int32(k), first, last,
			c.arcStart.ptr, c.arcTail.ptr, c.arcWeight.ptr)
		if err != nil {
			return err
		}
	}
	if err := dv.launchAsync("ch_rows_i32", chGrid(cells), r.buf.aux.ptr, int32(k), int32(n), c.position.ptr, r.buf.dist.ptr); err != nil {
		return err
	}
	return dv.finishTimed("ch_rows_i32")
}

// chGridMax bounds the thread blocks of the sweep's kernels, whose threads
// stride over their items.
const chGridMax = 1 << 16

// chGrid is the grid of a kernel over items threads' items.
func chGrid(items uint64) int {
	return int(min((items+threadsPerBlock-1)/threadsPerBlock, chGridMax))
}

// seeds runs the upward search of every source on every core and returns
// the table's cells they reach (position·k + j for source j) with their
// distances.
func (c *chSweep) seeds(sources []graph.VertexID) ([]int64, []int32, error) {
	k := len(sources)
	workers := max(1, min(runtime.GOMAXPROCS(0), k/16))
	type part struct {
		at   []int64
		dist []int32
		err  error
	}
	parts := make([]part, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q, _ := c.queries.Get().(*hierarchy.Query)
			if q == nil {
				q = c.h.NewQuery()
			}
			defer c.queries.Put(q)
			p := &parts[w]
			for j := w * k / workers; j < (w+1)*k/workers; j++ {
				err := q.UpwardSpace(sources[j], func(v graph.VertexID, d int64) {
					p.at = append(p.at, int64(c.sweep.Position[v])*int64(k)+int64(j))
					p.dist = append(p.dist, int32(min(d, math.MaxInt32)))
				})
				if err != nil {
					p.err = err
					return
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, p := range parts {
		if p.err != nil {
			return nil, nil, p.err
		}
		total += len(p.at)
	}
	at, dist := make([]int64, 0, total), make([]int32, 0, total)
	for _, p := range parts {
		at, dist = append(at, p.at...), append(dist, p.dist...)
	}
	return at, dist, nil
}

// ensureSeeds grows the seeds' device buffers to count entries.
func (c *chSweep) ensureSeeds(dv *device, count int) error {
	for _, b := range []struct {
		buf  *devBuf
		size int64
	}{{&c.seedAt, 8 * int64(count)}, {&c.seedDist, 4 * int64(count)}} {
		if b.buf.size >= b.size || b.size == 0 {
			continue
		}
		if err := dv.free(b.buf); err != nil {
			return err
		}
		var err error
		if *b.buf, err = dv.alloc(b.size + b.size/4); err != nil {
			if isOutOfMemory(err) {
				return outOfMemory(dv, 0, b.size, err)
			}
			return err
		}
	}
	return nil
}
