package devices

// Betweenness over several devices (graph.BetweennessRunner): a block of
// sources is one job of the queue, shared among the devices idle when it
// is taken, as RunStats' blocks are; each chunk runs Brandes's passes on
// its device (the device runner's RunBetweenness or RunEdgeBetweenness),
// which returns one vector for the chunk. Once every chunk has landed,
// the vectors are added in the order of their sources. A device that
// fails gives its chunk back to the others, as for every other job; a
// chunk's vector is kept only when it was computed whole.
//
// The chunks depend on which devices are idle when a block is taken, so
// that the sums may differ in the last bits from one run to the next.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// devicesBrandes is the multi-device runner of devices whose runners all
// have Brandes's passes: it adds graph.BetweennessRunner to the runner's
// interfaces.
type devicesBrandes struct{ *devicesRunner }

var _ graph.BetweennessRunner = devicesBrandes{}

// withBetweenness is r, as a graph.BetweennessRunner where every device's
// runner is one.
func withBetweenness(r *devicesRunner) graph.Runner {
	for _, w := range r.workers {
		if _, ok := w.runner.(graph.BetweennessRunner); !ok {
			return r
		}
	}
	return devicesBrandes{r}
}

// BetweennessSupported is the first device's refusal, naming the device.
func (r devicesBrandes) BetweennessSupported() error {
	for _, w := range r.workers {
		if err := w.runner.(graph.BetweennessRunner).BetweennessSupported(); err != nil {
			return fmt.Errorf("devices: device %s: %w", w.label, err)
		}
	}
	return nil
}

// BetweennessBytes is the most any device needs, fixed and for one more
// source of a chunk.
func (r devicesBrandes) BetweennessBytes(edges bool) (fixed, perSource int64) {
	for _, w := range r.workers {
		f, p := w.runner.(graph.BetweennessRunner).BetweennessBytes(edges)
		fixed, perSource = max(fixed, f), max(perSource, p)
	}
	return fixed, perSource
}

// RunBetweenness sums the vertices' dependencies of sources over the
// devices.
func (r devicesBrandes) RunBetweenness(ctx context.Context, sources []graph.VertexID, endpoints bool) ([]float64, error) {
	return r.brandes(ctx, sources, &brandesJob{endpoints: endpoints})
}

// RunEdgeBetweenness sums the arcs' dependencies of sources over the
// devices.
func (r devicesBrandes) RunEdgeBetweenness(ctx context.Context, sources []graph.VertexID) ([]float64, error) {
	return r.brandes(ctx, sources, &brandesJob{edges: true})
}

// brandes queues sources as one shared job of kind b and adds its chunks'
// vectors.
func (r devicesBrandes) brandes(ctx context.Context, sources []graph.VertexID, b *brandesJob) ([]float64, error) {
	if len(sources) == 0 { // the vector's length, of zeros, is the device's to say
		return b.run(ctx, r.workers[0].runner, nil)
	}
	j, err := r.submit(&deviceJob{ctx: ctx, kind: jobBetweenness, sources: sources, brandes: b}, len(sources), true, nil)
	if err != nil {
		return nil, err
	}
	if err := j.Wait(); err != nil {
		return nil, err
	}
	return b.sum()
}

// brandesJob is what a betweenness job computes (vertices, with or
// without endpoints, or arcs) and the vectors of its chunks, by the
// position of their first source.
type brandesJob struct {
	endpoints, edges bool

	mu    sync.Mutex
	parts map[int][]float64
}

// run computes the vector of sources on a device's runner.
func (b *brandesJob) run(ctx context.Context, runner graph.Runner, sources []graph.VertexID) ([]float64, error) {
	br := runner.(graph.BetweennessRunner)
	if b.edges {
		return br.RunEdgeBetweenness(ctx, sources)
	}
	return br.RunBetweenness(ctx, sources, b.endpoints)
}

// compute runs chunk c of j on w's device and keeps its vector.
func (b *brandesJob) compute(w *deviceWorker, j *deviceJob, c chunk) error {
	part, err := b.run(j.ctx, w.runner, j.sources[c.lo:c.hi])
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.parts == nil {
		b.parts = map[int][]float64{}
	}
	b.parts[c.lo] = part
	return nil
}

// sum adds the chunks' vectors in the order of their sources.
func (b *brandesJob) sum() ([]float64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.parts) == 0 {
		return nil, errors.New("devices: no device returned betweenness sums")
	}
	at := make([]int, 0, len(b.parts))
	for lo := range b.parts {
		at = append(at, lo)
	}
	slices.Sort(at)
	total := make([]float64, len(b.parts[at[0]]))
	for _, lo := range at {
		part := b.parts[lo]
		if len(part) != len(total) {
			return nil, fmt.Errorf("devices: betweenness sums of %d and %d values", len(part), len(total))
		}
		for v, x := range part {
			total[v] += x
		}
	}
	return total, nil
}
