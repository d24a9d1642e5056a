package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pathctl/pathctl/graph"
)

// BuildCSR builds the CSR of edges on the device (kernels/csr.cu: counting
// sort by source with atomics, a scan, a scatter, then every row sorted by
// (target, weight) and deduplicated) and downloads it. The result equals
// graph.Build's for the same edges and options, errors included (with the
// gpu prefix): the distance type is chosen or checked on the host, and
// out-of-range ids and non-finite weights are refused before anything is
// uploaded.
func (e *Engine) BuildCSR(ctx context.Context, edges *graph.Edges, opt graph.BuildOptions) (*graph.CSR, error) {
	g, dc, err := e.buildCSR(ctx, edges, opt)
	if err != nil {
		return nil, err
	}
	if err := e.dev.do(func() error { return dc.free(e.dev) }); err != nil {
		return nil, err
	}
	return g, nil
}

// BuildCSRResident is BuildCSR that also keeps the device copy of the CSR:
// the first Prepare of the returned *graph.CSR adopts it instead of
// uploading the graph again. A copy no Prepare adopted is freed by
// ReleaseCSR or Close.
func (e *Engine) BuildCSRResident(ctx context.Context, edges *graph.Edges, opt graph.BuildOptions) (*graph.CSR, error) {
	g, dc, err := e.buildCSR(ctx, edges, opt)
	if err != nil {
		return nil, err
	}
	if err := e.graphs.putResident(g, dc); err != nil {
		return nil, errors.Join(err, e.dev.do(func() error { return dc.free(e.dev) }))
	}
	return g, nil
}

// ReleaseCSR frees the device copy BuildCSRResident kept for g, if no
// Prepare adopted it yet.
func (e *Engine) ReleaseCSR(g *graph.CSR) error {
	if dc := e.graphs.takeResident(g); dc != nil {
		return e.dev.do(func() error { return dc.free(e.dev) })
	}
	return nil
}

// deviceCSR is a CSR in device memory, laid out as the runner uploads one.
type deviceCSR struct {
	offsets, targets, weights devBuf
}

func (dc *deviceCSR) free(dv *device) error {
	return errors.Join(dv.free(&dc.offsets), dv.free(&dc.targets), dv.free(&dc.weights))
}

// buildCSR checks edges on the host, builds the CSR on the device and
// returns it both downloaded and on the device.
func (e *Engine) buildCSR(ctx context.Context, edges *graph.Edges, opt graph.BuildOptions) (*graph.CSR, *deviceCSR, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	t, err := checkEdges(edges, opt)
	if err != nil {
		return nil, nil, err
	}
	g := &graph.CSR{NumVertices: edges.NumVertices, Type: t, Weighted: edges.Weighted(), Undirected: opt.Undirected}
	var w []byte
	switch t {
	case graph.DistInt32:
		w = asBytes(convertWeights[int32](edges))
	case graph.DistInt64:
		w = asBytes(convertWeights[int64](edges))
	case graph.DistFloat32:
		w = asBytes(convertWeights[float32](edges))
	case graph.DistFloat64:
		w = asBytes(convertWeights[float64](edges))
	}
	dc := &deviceCSR{}
	err = e.dev.do(func() error {
		if err := dc.build(e.dev, edges, w, g); err != nil {
			return errors.Join(err, dc.free(e.dev))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	switch t {
	case graph.DistInt32:
		weightBounds[int32](g)
	case graph.DistInt64:
		weightBounds[int64](g)
	case graph.DistFloat32:
		weightBounds[float32](g)
	case graph.DistFloat64:
		weightBounds[float64](g)
	}
	g.NoteNegativeLoops(edges) // the self-loops csr.cu dropped, as graph.Build does
	return g, dc, nil
}

// checkEdges applies graph.Build's checks and returns the distance type.
func checkEdges(e *graph.Edges, opt graph.BuildOptions) (graph.DistType, error) {
	n := e.NumVertices
	if n < 0 || n > graph.MaxVertices {
		return 0, fmt.Errorf("gpu: %d vertices is more than int32 ids hold (%d)", n, graph.MaxVertices)
	}
	m := len(e.Src)
	if len(e.Dst) != m {
		return 0, fmt.Errorf("gpu: %d sources but %d targets", m, len(e.Dst))
	}
	for _, c := range []struct {
		name string
		l    int
	}{{"integer", len(e.IntWeights)}, {"float32", len(e.Float32Weights)}, {"float64", len(e.Float64Weights)}} {
		if c.l != 0 && c.l != m {
			return 0, fmt.Errorf("gpu: %d %s weights for %d edges", c.l, c.name, m)
		}
	}
	t := opt.DistType
	if t == 0 {
		t = graph.ChooseDistType(e)
	} else if err := graph.CheckDistType(e, t); err != nil {
		return 0, fmt.Errorf("gpu: %w", err)
	}
	switch t {
	case graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64:
	default:
		return 0, fmt.Errorf("gpu: invalid distance type %v", t)
	}
	for i := 0; i < m; i++ {
		if s, d := e.Src[i], e.Dst[i]; s < 0 || int(s) >= n || d < 0 || int(d) >= n {
			return 0, fmt.Errorf("gpu: row %d: edge %d -> %d outside [0, %d)", i, s, d, n)
		}
	}
	for i, w := range e.Float32Weights {
		if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
			return 0, fmt.Errorf("gpu: row %d: weight %v is not finite", i, w)
		}
	}
	for i, w := range e.Float64Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("gpu: row %d: weight %v is not finite", i, w)
		}
	}
	return t, nil
}

// convertWeights returns the weight column in the distance type, or nil for
// an unweighted graph (the kernels weigh every arc 1).
func convertWeights[D graph.Number](e *graph.Edges) []D {
	var w []D
	switch {
	case e.IntWeights != nil:
		w = make([]D, len(e.IntWeights))
		for i, x := range e.IntWeights {
			w[i] = D(x)
		}
	case e.Float32Weights != nil:
		w = make([]D, len(e.Float32Weights))
		for i, x := range e.Float32Weights {
			w[i] = D(x)
		}
	case e.Float64Weights != nil:
		w = make([]D, len(e.Float64Weights))
		for i, x := range e.Float64Weights {
			w[i] = D(x)
		}
	}
	return w
}

// weightBounds sets g.MinWeight and g.MaxWeight as graph.Build does.
func weightBounds[D graph.Number](g *graph.CSR) {
	w := graph.WeightsOf[D](g)
	if len(w) == 0 {
		return
	}
	lo, hi := w[0], w[0]
	for _, x := range w {
		lo, hi = min(lo, x), max(hi, x)
	}
	g.MinWeight, g.MaxWeight = float64(lo), float64(hi)
}

// maxGrid bounds the blocks of the grid-stride kernels of csr.cu.
const maxGrid = 1 << 16

// build runs the kernels of csr.cu on the device goroutine, leaving the CSR
// in dc and its download in g (Offsets, Targets, Weights). w is the weight
// column in g.Type, nil when unweighted.
func (dc *deviceCSR) build(dv *device, edges *graph.Edges, w []byte, g *graph.CSR) (err error) {
	n, m := g.NumVertices, len(edges.Src)
	size := int64(g.Type.Size())
	sfx := typeSuffix(g.Type)
	undirected := int32(0)
	if g.Undirected {
		undirected = 1
	}
	var src, dst, wt, counts, fill, targets, weights, sortedT, sortedW devBuf
	var stage pinned
	defer func() {
		var errs []error
		for _, b := range []*devBuf{&src, &dst, &wt, &counts, &fill, &targets, &weights, &sortedT, &sortedW} {
			errs = append(errs, dv.free(b))
		}
		errs = append(errs, dv.freePinned(&stage))
		err = errors.Join(append([]error{err}, errs...)...)
	}()
	zeroed := func(words int64) (devBuf, error) {
		b, err := dv.alloc(8 * words)
		if err != nil || words == 0 {
			return b, err
		}
		return b, dv.d.cuMemsetD32_v2(b.ptr, 0, uint64(2*words)).Err("cuMemsetD32_v2")
	}
	last := func(b devBuf) (int64, error) { // b[n] of an int64 array
		var x [1]int64
		err := dv.download(asBytes(x[:]), b.ptr+8*uint64(n), &stage)
		return x[0], err
	}
	if src, err = dv.upload(asBytes(edges.Src)); err != nil {
		return err
	}
	if dst, err = dv.upload(asBytes(edges.Dst)); err != nil {
		return err
	}
	if wt, err = dv.upload(w); err != nil {
		return err
	}
	if counts, err = zeroed(int64(n) + 1); err != nil {
		return err
	}
	edgeGrid := min((m+threadsPerBlock-1)/threadsPerBlock, maxGrid)
	rowGrid := min(n, maxGrid)
	if err := dv.launch("csr_count", edgeGrid, src.ptr, dst.ptr, int64(m), undirected, counts.ptr); err != nil {
		return err
	}
	if err := dv.launch("csr_scan", 1, counts.ptr, int64(n)+1); err != nil {
		return err
	}
	arcs, err := last(counts)
	if err != nil {
		return err
	}
	if fill, err = zeroed(int64(n)); err != nil {
		return err
	}
	if targets, err = dv.alloc(4 * arcs); err != nil {
		return err
	}
	if weights, err = dv.alloc(size * arcs); err != nil {
		return err
	}
	if err := dv.launch("csr_scatter_"+sfx, edgeGrid, src.ptr, dst.ptr, wt.ptr, int64(m), undirected,
		counts.ptr, fill.ptr, targets.ptr, weights.ptr); err != nil {
		return err
	}
	for _, b := range []*devBuf{&src, &dst, &wt, &fill} {
		if err := dv.free(b); err != nil {
			return err
		}
	}
	if sortedT, err = dv.alloc(4 * arcs); err != nil {
		return err
	}
	if sortedW, err = dv.alloc(size * arcs); err != nil {
		return err
	}
	if dc.offsets, err = zeroed(int64(n) + 1); err != nil {
		return err
	}
	if err := dv.launch("csr_sort_"+sfx, rowGrid, counts.ptr, int32(n), targets.ptr, weights.ptr,
		sortedT.ptr, sortedW.ptr, dc.offsets.ptr); err != nil {
		return err
	}
	if err := dv.free(&targets); err != nil {
		return err
	}
	if err := dv.free(&weights); err != nil {
		return err
	}
	if err := dv.launch("csr_scan", 1, dc.offsets.ptr, int64(n)+1); err != nil {
		return err
	}
	kept, err := last(dc.offsets)
	if err != nil {
		return err
	}
	if dc.targets, err = dv.alloc(4 * kept); err != nil {
		return err
	}
	if dc.weights, err = dv.alloc(size * kept); err != nil {
		return err
	}
	if err := dv.launch("csr_compact_"+sfx, rowGrid, counts.ptr, dc.offsets.ptr, int32(n), sortedT.ptr, sortedW.ptr,
		dc.targets.ptr, dc.weights.ptr); err != nil {
		return err
	}
	g.Offsets = make([]graph.EdgeOffset, n+1)
	g.Targets = make([]graph.VertexID, kept)
	if err := dv.download(asBytes(g.Offsets), dc.offsets.ptr, &stage); err != nil {
		return err
	}
	if err := dv.download(asBytes(g.Targets), dc.targets.ptr, &stage); err != nil {
		return err
	}
	switch g.Type {
	case graph.DistInt32:
		ws := make([]int32, kept)
		g.Weights, err = ws, dv.download(asBytes(ws), dc.weights.ptr, &stage)
	case graph.DistInt64:
		ws := make([]int64, kept)
		g.Weights, err = ws, dv.download(asBytes(ws), dc.weights.ptr, &stage)
	case graph.DistFloat32:
		ws := make([]float32, kept)
		g.Weights, err = ws, dv.download(asBytes(ws), dc.weights.ptr, &stage)
	case graph.DistFloat64:
		ws := make([]float64, kept)
		g.Weights, err = ws, dv.download(asBytes(ws), dc.weights.ptr, &stage)
	}
	return err
}
