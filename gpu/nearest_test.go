package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// nearestWant is the nearest layout as the oracle sees it, in float64
// (+Inf and -1 where no source reaches or every source is past the
// cutoff): every vertex's smallest distance over the sources, the smallest
// source at it, and the row of every source.
type nearestWant struct {
	dist []float64
	from []graph.VertexID
	rows map[graph.VertexID][]float64 // within the cutoff, else +Inf
}

// nearestLayoutOracle is the nearest layout from one internal/ref Dijkstra per
// source.
func nearestLayoutOracle[D graph.Number](t *testing.T, g *graph.CSR, sources []graph.VertexID, req graph.Request) nearestWant {
	t.Helper()
	n := g.NumVertices
	w := nearestWant{dist: make([]float64, n), from: make([]graph.VertexID, n), rows: map[graph.VertexID][]float64{}}
	for v := range w.dist {
		w.dist[v], w.from[v] = math.Inf(1), -1
	}
	cut := math.Inf(1)
	if req.HasCutoff {
		cut = float64(graph.CutoffOf[D](req.Cutoff))
	}
	inf := graph.Infinity[D]()
	for _, s := range sources {
		if w.rows[s] != nil {
			continue
		}
		row, err := ref.Dijkstra[D](g, s)
		if err != nil {
			t.Fatalf("oracle from %d: %v", s, err)
		}
		within := make([]float64, n)
		for v, d := range row {
			within[v] = math.Inf(1)
			if d == inf || float64(d) > cut {
				continue
			}
			x := float64(d)
			within[v] = x
			if x < w.dist[v] || (x == w.dist[v] && s < w.from[v]) {
				w.dist[v], w.from[v] = x, s
			}
		}
		w.rows[s] = within
	}
	return w
}

// nearestLayoutOracleOf dispatches nearestLayoutOracle on g's distance type.
func nearestLayoutOracleOf(t *testing.T, g *graph.CSR, sources []graph.VertexID, req graph.Request) nearestWant {
	t.Helper()
	switch g.Type {
	case graph.DistInt32:
		return nearestLayoutOracle[int32](t, g, sources, req)
	case graph.DistInt64:
		return nearestLayoutOracle[int64](t, g, sources, req)
	case graph.DistFloat32:
		return nearestLayoutOracle[float32](t, g, sources, req)
	}
	return nearestLayoutOracle[float64](t, g, sources, req)
}

// nearestCells is res's distances as float64, +Inf where unreached.
func nearestCells(t testing.TB, res *graph.Nearest, n int) []float64 {
	t.Helper()
	if res.Type == 0 || len(res.Source) != n {
		t.Fatalf("result of type %v with %d sources for %d vertices", res.Type, len(res.Source), n)
	}
	b := &graph.Block{Dist: res.Dist}
	cells := cellsOf(b)
	if len(cells) != n {
		t.Fatalf("result of %d distances (%T) for %d vertices", len(cells), res.Dist, n)
	}
	return cells
}

// checkNearestResult compares res with the oracle: every distance equal,
// unreached vertices with source -1, reached ones with a source of the
// list. Where exact, the source must be the oracle's, the smallest of a
// tie. Otherwise (float sums that round) it must be a nearest source: one
// whose own oracle row has the vertex at the nearest distance. Rounding can
// make paths of different real lengths sum to the same distance; the
// device's label correcting may then settle on a tie that a run relaxing
// only final labels (the CPU's Dijkstra) never sees, so the smallest of
// such ties is not fixed.
func checkNearestResult(t *testing.T, what string, res *graph.Nearest, g *graph.CSR, sources []graph.VertexID, want nearestWant, exact bool) {
	t.Helper()
	got := nearestCells(t, res, g.NumVertices)
	if res.Type != g.Type {
		t.Fatalf("%s: distances of type %v, graph of %v", what, res.Type, g.Type)
	}
	for v := range got {
		if got[v] != want.dist[v] {
			t.Fatalf("%s: dist[%d] = %v (source %d), want %v (source %d)", what, v, got[v], res.Source[v], want.dist[v], want.from[v])
		}
		s := res.Source[v]
		switch {
		case math.IsInf(got[v], 1):
			if s != -1 {
				t.Fatalf("%s: vertex %d unreached with source %d, want -1", what, v, s)
			}
		case !slices.Contains(sources, s):
			t.Fatalf("%s: vertex %d at %v from %d, which is no source", what, v, got[v], s)
		case exact && s != want.from[v]:
			t.Fatalf("%s: vertex %d at %v from source %d, want %d (the smaller of a tie)", what, v, got[v], s, want.from[v])
		case !exact && want.rows[s][v] != got[v]:
			t.Fatalf("%s: vertex %d at %v from source %d, which is %v away from it", what, v, got[v], s, want.rows[s][v])
		}
	}
}

// sameNearest reports where a and b differ, or "": in distance, and where
// sourcesToo in source.
func sameNearest(t testing.TB, a, b *graph.Nearest, n int, sourcesToo bool) string {
	t.Helper()
	da, db := nearestCells(t, a, n), nearestCells(t, b, n)
	for v := range n {
		if da[v] != db[v] || (sourcesToo && a.Source[v] != b.Source[v]) {
			return fmt.Sprintf("vertex %d: (%v, %d) and (%v, %d)", v, da[v], a.Source[v], db[v], b.Source[v])
		}
	}
	return ""
}

// namedSources is one source list of a test.
type namedSources struct {
	name    string
	sources []graph.VertexID
}

// nearestSourceSets draws the source lists of a graph of n vertices, in a
// fixed order (a seed replays them): one source, a few with a repeat (a
// source given twice), a tenth of the vertices, every vertex, and every
// vertex in reverse order and then again.
func nearestSourceSets(rng *rand.Rand, n int) []namedSources {
	sets := []namedSources{{"one", []graph.VertexID{graph.VertexID(rng.IntN(n))}}}
	few := make([]graph.VertexID, 0, 8)
	for range 1 + rng.IntN(min(n, 6)) {
		few = append(few, graph.VertexID(rng.IntN(n)))
	}
	few = append(few, few[rng.IntN(len(few))])
	sets = append(sets, namedSources{"few-with-repeat", few})
	if n > 20 {
		var tenth []graph.VertexID
		for _, p := range rng.Perm(n)[:n/10] {
			tenth = append(tenth, graph.VertexID(p))
		}
		sets = append(sets, namedSources{"tenth", tenth})
	}
	all := allVertices(n)
	twice := slices.Clone(all)
	slices.Reverse(twice)
	return append(sets, namedSources{"every-vertex", all}, namedSources{"every-vertex-twice", append(twice, all...)})
}

// TestNearestAgainstOracles runs the nearest layout on the device for
// every distance type (floats as multiples of 1/8, whose sums are exact,
// and drawn uniformly, whose sums round), directed and undirected, with
// zero weights (ties at distance 0 between sources, zero-weight cycles),
// on random graphs with unreachable vertices, from one source, a few with a
// repeat, a tenth and every vertex, with and without a cutoff, against
// one internal/ref Dijkstra per source. Distances must be equal bit for
// bit, and equal to the CPU engine's; the sources must be the oracle's (the
// smallest of a tie) where sums are exact, and equal to the CPU engine's.
// Where sums round, each source must be a nearest one by its own oracle row
// (checkNearestResult says why the smallest is not fixed then). Every run
// is repeated: a result that moves between runs is a race.
func TestNearestAgainstOracles(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	ce := cpu.New()
	for _, n := range []int{1, 37, 300, 1000} {
		for _, dk := range distKinds {
			for _, undirected := range []bool{false, true} {
				o := testgraphs.RandomOptions{N: n, M: 2 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
					Dyadic: !dk.uniform, Duplicates: n / 10}
				edges, _ := testgraphs.Random(rng, o)
				g, err := graph.Build(edges, graph.BuildOptions{Undirected: undirected, DistType: dk.typ})
				if err != nil {
					t.Fatal(err)
				}
				for _, set := range nearestSourceSets(rng, n) {
					name, sources := set.name, set.sources
					for _, withCutoff := range []bool{false, true} {
						var req graph.Request
						if withCutoff {
							req.Cutoff, req.HasCutoff = float64(rng.IntN(30))+0.5*float64(rng.IntN(2)), true
						}
						what := fmt.Sprintf("n=%d/%s/undirected=%v/%s/cutoff=%v", n, dk.name, undirected, name, withCutoff)
						t.Run(what, func(t *testing.T) {
							want := nearestLayoutOracleOf(t, g, sources, req)
							res, err := e.Nearest(context.Background(), g, sources, req)
							if err != nil {
								t.Fatal(err)
							}
							checkNearestResult(t, "gpu", res, g, sources, want, !dk.uniform)
							onCPU, err := ce.Nearest(context.Background(), g, sources, req)
							if err != nil {
								t.Fatal(err)
							}
							if d := sameNearest(t, res, onCPU, n, !dk.uniform); d != "" {
								t.Fatalf("gpu and cpu engines differ at %s", d)
							}
							again, err := e.Nearest(context.Background(), g, sources, req)
							if err != nil {
								t.Fatal(err)
							}
							if d := sameNearest(t, res, again, n, !dk.uniform); d != "" {
								t.Fatalf("two runs differ at %s", d)
							}
							checkNearestResult(t, "gpu, again", again, g, sources, want, !dk.uniform)
						})
					}
				}
			}
		}
	}
}

// TestNearestDeltas runs one graph at bucket widths from far below the
// smallest weight to past every distance (one bucket: plain label
// correcting): the schedule changes the rounds, never the answer.
func TestNearestDeltas(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 500, M: 1500, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 1000})
	g, err := graph.Build(edges, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	sources := []graph.VertexID{3, 77, 140, 141, 499}
	want := nearestLayoutOracleOf(t, g, sources, graph.Request{})
	rounds := map[float64]int64{}
	for _, delta := range []float64{0.25, 1, 10, 1000, 1e9} {
		res, info, err := e.NearestInfo(context.Background(), g, sources, graph.Request{Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		if info.Delta != delta || info.Rounds < 1 {
			t.Fatalf("delta %v: info %+v", delta, info)
		}
		rounds[delta] = info.Rounds
		checkNearestResult(t, fmt.Sprintf("delta %v", delta), res, g, sources, want, true)
	}
	if rounds[1] <= rounds[1e9] {
		t.Errorf("rounds by delta %v: narrow buckets should take more rounds than one bucket", rounds)
	}
	t.Logf("rounds by delta: %v", rounds)
}

// TestNearestSmallCases runs the shared table of small graphs: from every
// vertex alone and from every vertex at once, against the table's known
// distances; the cases with negative weights must be refused (also the set
// compute-sanitizer runs, gpu/sanitize.sh).
func TestNearestSmallCases(t *testing.T) {
	e := openEngine(t)
	for _, c := range testgraphs.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			g, err := c.CSR()
			if err != nil {
				t.Fatal(err)
			}
			n := g.NumVertices
			if n == 0 {
				if _, err := e.Nearest(context.Background(), g, []graph.VertexID{0}, graph.Request{}); err == nil {
					t.Error("a source on a graph without vertices was accepted")
				}
				return
			}
			if c.HasNegative() {
				_, err := e.Nearest(context.Background(), g, allVertices(n), graph.Request{})
				if !errors.Is(err, graph.ErrNegativeWeight) {
					t.Errorf("err = %v, want a negative weight error", err)
				}
				return
			}
			matrix := c.WantMatrix()
			sets := [][]graph.VertexID{allVertices(n)}
			for s := range n {
				sets = append(sets, []graph.VertexID{graph.VertexID(s)})
			}
			for _, sources := range sets {
				res, err := e.Nearest(context.Background(), g, sources, graph.Request{})
				if err != nil {
					t.Fatalf("sources %v: %v", sources, err)
				}
				got := nearestCells(t, res, n)
				for v := range n {
					best, from := math.Inf(1), graph.VertexID(-1)
					for _, s := range sources {
						if d := matrix[int(s)*n+v]; d < best || (d == best && s < from && !math.IsInf(d, 1)) {
							best, from = d, s
						}
					}
					if got[v] != best || res.Source[v] != from {
						t.Errorf("sources %v: vertex %d at %v from %d, want %v from %d", sources, v, got[v], res.Source[v], best, from)
					}
				}
			}
		})
	}
}

// TestNearestGrid runs a road-like grid (integer weights 1..1000, a tenth
// of the edges dropped, so some corners are cut off) with 300 sources
// against the CPU engine, and with one source against the oracle: many
// buckets, many rounds.
func TestNearestGrid(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	side := 120
	if testing.Short() {
		side = 40
	}
	edges := roadGrid(rng, side, 0.1)
	g, err := graph.Build(edges, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	n := g.NumVertices
	var many []graph.VertexID
	for _, p := range rng.Perm(n)[:min(300, n/4)] {
		many = append(many, graph.VertexID(p))
	}
	res, info, err := e.NearestInfo(context.Background(), g, many, graph.Request{})
	if err != nil {
		t.Fatal(err)
	}
	onCPU, err := cpu.New().Nearest(context.Background(), g, many, graph.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if d := sameNearest(t, res, onCPU, n, true); d != "" {
		t.Fatalf("%d sources: gpu and cpu engines differ at %s", len(many), d)
	}
	t.Logf("%d vertices, %d sources: %d rounds, delta %v, %v", n, len(many), info.Rounds, info.Delta, info.Kernel)
	one := many[:1]
	want := nearestLayoutOracleOf(t, g, one, graph.Request{})
	res, info, err = e.NearestInfo(context.Background(), g, one, graph.Request{})
	if err != nil {
		t.Fatal(err)
	}
	checkNearestResult(t, "one source", res, g, one, want, true)
	t.Logf("%d vertices, one source: %d rounds, %v", n, info.Rounds, info.Kernel)
}

// TestNearestGridCopiedOnEveryCore runs a grid large enough that the
// result leaves the pinned stage in several pieces on several goroutines
// (nearestCopyOut), in int32 (packed cells) and int64 (two passes, the
// stage twice as wide for the distances), with unreached corners (a tenth
// of the edges dropped) and a cutoff, and through a stage too small for
// both columns (one column at a time, as past nearestStageMax), against
// the CPU engine.
func TestNearestGridCopiedOnEveryCore(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	side := 400
	if testing.Short() {
		side = 200
	}
	edges := roadGrid(rng, side, 0.1)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 4)))
	for _, typ := range []graph.DistType{graph.DistInt32, graph.DistInt64} {
		g, err := graph.Build(edges, graph.BuildOptions{Undirected: true, DistType: typ})
		if err != nil {
			t.Fatal(err)
		}
		n := g.NumVertices
		if stage := (typ.Size() + 4) * n; stage < 2*nearestCopyChunk {
			t.Fatalf("a stage of %d bytes leaves in one piece", stage)
		}
		var sources []graph.VertexID
		for _, p := range rng.Perm(n)[:n/100] {
			sources = append(sources, graph.VertexID(p))
		}
		for _, c := range []struct {
			req      graph.Request
			stageMax int64 // below both columns: one column at a time
		}{{graph.Request{}, nearestStageMax}, {graph.Request{Cutoff: 3000, HasCutoff: true}, nearestStageMax}, {graph.Request{}, int64(n)}} {
			req := c.req
			res, _, err := e.nearestInfo(context.Background(), g, sources, req, c.stageMax)
			if err != nil {
				t.Fatal(err)
			}
			onCPU, err := cpu.New().Nearest(context.Background(), g, sources, req)
			if err != nil {
				t.Fatal(err)
			}
			if d := sameNearest(t, res, onCPU, n, true); d != "" {
				t.Fatalf("%s, cutoff %v, stage of at most %d bytes: gpu and cpu engines differ at %s", typ, req.HasCutoff, c.stageMax, d)
			}
		}
	}
	if live := e.LiveBytes(); live != 0 {
		t.Errorf("%d device bytes live after the runs", live)
	}
}

// TestNearestCopyOut checks the copy out of the stage (host only): every
// column equal to its source, whatever the sizes and core counts, with
// pieces that split columns unevenly.
func TestNearestCopyOut(t *testing.T) {
	rng := newSeed(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, cores := range []int{1, 3, 16} {
		runtime.GOMAXPROCS(cores)
		for _, sizes := range [][]int{{0, 0}, {1, 5}, {3 * nearestCopyChunk, 7}, {nearestCopyChunk + 1, 5*nearestCopyChunk - 3}} {
			var dst, src [][]byte
			for _, size := range sizes {
				b := make([]byte, size)
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				src, dst = append(src, b), append(dst, make([]byte, size))
			}
			nearestCopyOut(dst, src)
			for i := range src {
				if !bytes.Equal(dst[i], src[i]) {
					t.Fatalf("%d cores, sizes %v: column %d differs after the copy", cores, sizes, i)
				}
			}
		}
	}
}

// roadGrid is issue 17's road-like grid, side × side vertices joined to
// their right and lower neighbours, drop of the edges left out at random,
// integer weights 1..1000 (bench/bench_queries.py builds the same shape).
func roadGrid(rng *rand.Rand, side int, drop float64) *graph.Edges {
	e := &graph.Edges{NumVertices: side * side}
	add := func(u, v int) {
		if rng.Float64() < drop {
			return
		}
		e.Src = append(e.Src, graph.VertexID(u))
		e.Dst = append(e.Dst, graph.VertexID(v))
		e.IntWeights = append(e.IntWeights, int64(1+rng.IntN(1000)))
	}
	for r := range side {
		for c := range side {
			if c+1 < side {
				add(r*side+c, r*side+c+1)
			}
			if r+1 < side {
				add(r*side+c, (r+1)*side+c)
			}
		}
	}
	return e
}

// TestNearestResident checks that Nearest runs on the device copy of a CSR
// built by BuildCSRResident (no upload) and leaves it there: a second run
// and a Prepare find it too, and ReleaseCSR frees it.
func TestNearestResident(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 200, M: 600, Kind: testgraphs.Float32, MinWeight: 0, MaxWeight: 9, Dyadic: true})
	g, err := e.BuildCSRResident(context.Background(), edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before, kept := e.GraphUploads(), e.LiveBytes()
	sources := []graph.VertexID{5, 6, 7, 199}
	want := nearestLayoutOracleOf(t, g, sources, graph.Request{})
	for run := range 2 {
		res, err := e.Nearest(context.Background(), g, sources, graph.Request{})
		if err != nil {
			t.Fatal(err)
		}
		checkNearestResult(t, fmt.Sprintf("run %d on the resident copy", run), res, g, sources, want, true)
		if live := e.LiveBytes(); live != kept {
			t.Errorf("run %d: %d device bytes live after it, %d (the resident copy) before", run, live, kept)
		}
	}
	r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Dijkstra})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if up := e.GraphUploads() - before; up != 0 {
		t.Errorf("%d uploads of a graph kept on the device", up)
	}
	if err := e.ReleaseCSR(g); err != nil {
		t.Fatal(err)
	}
	res, err := e.Nearest(context.Background(), g, sources, graph.Request{})
	if err != nil {
		t.Fatal(err)
	}
	checkNearestResult(t, "uploaded", res, g, sources, want, true)
	if up := e.GraphUploads() - before; up != 1 {
		t.Errorf("%d uploads once the resident copy was adopted by Prepare, want 1", up)
	}
	if live := e.LiveBytes(); live != 0 {
		t.Errorf("%d device bytes live after every run", live)
	}
}

// TestNearestErrors checks what Nearest refuses, and that nothing is left
// on the device after it.
func TestNearestErrors(t *testing.T) {
	e := openEngine(t)
	edges, _ := testgraphs.Random(newSeed(t), testgraphs.RandomOptions{N: 10, M: 30, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 5})
	g, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Nearest(ctx, g, nil, graph.Request{}); err == nil {
		t.Error("no sources: accepted")
	}
	if _, err := e.Nearest(ctx, g, []graph.VertexID{3, 10}, graph.Request{}); err == nil {
		t.Error("source 10 of 10 vertices: accepted")
	}
	if _, err := e.Nearest(ctx, g, []graph.VertexID{-1}, graph.Request{}); err == nil {
		t.Error("source -1: accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Nearest(cancelled, g, []graph.VertexID{1}, graph.Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	neg, _ := testgraphs.Random(newSeed(t), testgraphs.RandomOptions{N: 10, M: 30, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 5, Potential: 4})
	gn, err := graph.Build(neg, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gn.HasNegative() {
		var nw *graph.NegativeWeightError
		if _, err := e.Nearest(ctx, gn, []graph.VertexID{1}, graph.Request{}); !errors.As(err, &nw) {
			t.Errorf("negative weights: err = %v, want a *graph.NegativeWeightError", err)
		}
	}
	if live := e.LiveBytes(); live != 0 {
		t.Errorf("%d device bytes live after refused runs", live)
	}
}

// BenchmarkNearest times the nearest layout on issue 17's road-like grid
// (1000 × 1000, a tenth of the edges dropped, weights 1..1000, undirected)
// from 10,000 random sources, one multi-source run per operation, checked
// once against the CPU engine; it reports the device time and the rounds.
// -test.short runs a 300 × 300 grid.
func BenchmarkNearest(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	side, k := 1000, 10000
	if testing.Short() {
		side, k = 300, 900
	}
	rng := rand.New(rand.NewPCG(17, 4))
	g, err := graph.Build(roadGrid(rng, side, 0.1), graph.BuildOptions{Undirected: true})
	if err != nil {
		b.Fatal(err)
	}
	var sources []graph.VertexID
	for _, p := range rng.Perm(g.NumVertices)[:k] {
		sources = append(sources, graph.VertexID(p))
	}
	ctx := context.Background()
	began := time.Now()
	want, err := cpu.New().Nearest(ctx, g, sources, graph.Request{})
	if err != nil {
		b.Fatal(err)
	}
	cpuTime := time.Since(began)
	for _, delta := range []float64{0, 250, 1000, 4000} {
		b.Run(fmt.Sprintf("grid%d/sources=%d/delta=%v", side, k, delta), func(b *testing.B) {
			req := graph.Request{Delta: delta}
			got, _, err := e.NearestInfo(ctx, g, sources, req) // warm-up and check
			if err != nil {
				b.Fatal(err)
			}
			if d := sameNearest(b, got, want, g.NumVertices, true); d != "" {
				b.Fatalf("gpu and cpu engines differ at %s", d)
			}
			var kernel time.Duration
			var info NearestInfo
			b.ResetTimer()
			for b.Loop() {
				if _, info, err = e.NearestInfo(ctx, g, sources, req); err != nil {
					b.Fatal(err)
				}
				kernel += info.Kernel
			}
			b.StopTimer()
			b.ReportMetric(kernel.Seconds()/float64(b.N)*1e3, "kernel-ms/op")
			b.ReportMetric(float64(info.Rounds), "rounds")
			b.ReportMetric(info.Delta, "delta")
			b.ReportMetric(cpuTime.Seconds()*1e3, "cpu-engine-ms")
		})
	}
}
