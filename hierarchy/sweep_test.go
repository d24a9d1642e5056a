package hierarchy

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestSweepAgainstDijkstra lays every property graph's hierarchy out by
// levels (Sweep) and checks, through the host's batched sweep
// (DistancesBySweep, which also checks that every arc's tail lies in an
// earlier level of its phase), every row of a random block of sources (repeats
// included) against the serial Dijkstra; and that positions and
// vertices are inverse permutations and the levels of both phases cover
// every position and arc once.
func TestSweepAgainstDijkstra(t *testing.T) {
	rng := testgraphs.Rand(t, 5)
	for _, tg := range drawGraphs(t, rng) {
		h, err := Build(tg.g, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		s, err := NewSweep(h)
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		n := tg.g.NumVertices
		for p, v := range s.Vertex {
			if s.Position[v] != int32(p) {
				t.Fatalf("%s: vertex %d at position %d, Position says %d", tg.name, v, p, s.Position[v])
			}
		}
		if n > 0 && (s.LevelStart[0] != 0 || int(s.LevelStart[s.Levels()]) != n) {
			t.Fatalf("%s: levels cover [%d, %d) of %d positions", tg.name, s.LevelStart[0], s.LevelStart[s.Levels()], n)
		}
		if int(s.ArcStart[n]) != len(h.down.head) {
			t.Fatalf("%s: %d arcs laid out of %d", tg.name, s.ArcStart[n], len(h.down.head))
		}
		if n == 0 {
			continue
		}
		want := oracle(t, tg.g)
		sources := make([]graph.VertexID, 1+rng.IntN(70))
		for i := range sources {
			sources[i] = graph.VertexID(rng.IntN(n))
		}
		rows := make([][]int64, len(sources))
		for i := range rows {
			rows[i] = make([]int64, n)
		}
		if err := s.DistancesBySweep(sources, rows); err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		for i, src := range sources {
			for v := range n {
				if got := h.Float(rows[i][v]); got != want[src][v] {
					t.Fatalf("%s: sweep d(%d, %d) = %v, Dijkstra %v", tg.name, src, v, got, want[src][v])
				}
			}
		}
		if int(s.UpArcStart[n]) != len(h.up.head) || s.UpLevelStart[0] != 0 || int(s.UpLevelStart[s.UpLevels()]) != n {
			t.Fatalf("%s: the upward levels lay out %d of %d arcs and [%d, %d) of %d positions", tg.name,
				s.UpArcStart[n], len(h.up.head), s.UpLevelStart[0], s.UpLevelStart[s.UpLevels()], n)
		}
		seen := make([]bool, n)
		for _, p := range s.UpOrder {
			if seen[p] {
				t.Fatalf("%s: position %d twice in the upward order", tg.name, p)
			}
			seen[p] = true
		}
	}
}

// TestSweepAndReverseMadeOnce checks that a hierarchy's sweep layout and
// reversed view are made once, also when asked for concurrently (a kept
// hierarchy serves every run), that the reverse of the reverse is the
// hierarchy itself, and that the reverse's sweep answers as Dijkstra on
// the transposed graph does.
func TestSweepAndReverseMadeOnce(t *testing.T) {
	rng := testgraphs.Rand(t, 6)
	g := mustBuildCSR(t, testgraphs.RoadGrid(rng, 9, 11, 0.3, 0, 20), false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sweeps := make([]*Sweep, 8)
	reverses := make([]*Hierarchy, 8)
	var wg sync.WaitGroup
	for i := range sweeps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sweeps[i], _ = NewSweep(h)
			reverses[i] = h.Reverse()
		}()
	}
	wg.Wait()
	for i := range sweeps {
		if sweeps[i] != sweeps[0] || reverses[i] != reverses[0] {
			t.Fatalf("call %d made its own sweep or reverse", i)
		}
	}
	if reverses[0].Reverse() != h {
		t.Fatal("the reverse of the reverse is not the hierarchy")
	}
	rs, err := NewSweep(reverses[0])
	if err != nil {
		t.Fatal(err)
	}
	if rs == sweeps[0] {
		t.Fatal("the reverse shares the forward sweep")
	}
	tg := graph.Transpose(g)
	want := oracle(t, tg)
	sources := []graph.VertexID{0, 5, graph.VertexID(g.NumVertices - 1)}
	rows := make([][]int64, len(sources))
	for i := range rows {
		rows[i] = make([]int64, g.NumVertices)
	}
	if err := rs.DistancesBySweep(sources, rows); err != nil {
		t.Fatal(err)
	}
	for i, s := range sources {
		for v, d := range rows[i] {
			if got := h.Float(d); got != want[s][v] {
				t.Fatalf("reverse sweep d(%d, %d) = %v, Dijkstra on the transpose %v", s, v, got, want[s][v])
			}
		}
	}
}

// TestSweepLaidOnEveryCore checks the layout of a grid large enough that
// every core lays a share of its upward arcs: every head's arcs are those
// of the hierarchy, in rising tail rank, and the sweep answers as Dijkstra.
func TestSweepLaidOnEveryCore(t *testing.T) {
	rng := testgraphs.Rand(t, 41)
	g := mustBuildCSR(t, testgraphs.RoadGrid(rng, 90, 100, 0.3, 0.05, 20), false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSweep(h)
	if err != nil {
		t.Fatal(err)
	}
	n := h.n
	rankAt := func(p int32) int32 { return h.rank[s.Vertex[p]] }
	// The arcs into each rank, as the hierarchy holds them: (tail rank, weight).
	type arc struct{ tail, w int64 }
	into := make([][]arc, n)
	for u := range n {
		for k := h.up.off[u]; k < h.up.off[u+1]; k++ {
			into[h.up.head[k]] = append(into[h.up.head[k]], arc{int64(u), h.up.w[k]})
		}
	}
	for i, p := range s.UpOrder {
		x := rankAt(p)
		var got []arc
		for a := s.UpArcStart[i]; a < s.UpArcStart[i+1]; a++ {
			got = append(got, arc{int64(rankAt(s.UpArcTail[a])), int64(s.UpArcWeight[a])})
		}
		if !reflect.DeepEqual(got, into[x]) && (len(got) > 0 || len(into[x]) > 0) {
			t.Fatalf("rank %d: upward arcs %v, the hierarchy's %v", x, got, into[x])
		}
	}
	sources := []graph.VertexID{0, graph.VertexID(rng.IntN(n)), graph.VertexID(n - 1)}
	want := map[graph.VertexID][]float64{}
	for _, src := range sources {
		want[src] = refRow(t, g, src)
	}
	rows := make([][]int64, len(sources))
	for i := range rows {
		rows[i] = make([]int64, n)
	}
	if err := s.DistancesBySweep(sources, rows); err != nil {
		t.Fatal(err)
	}
	for i, src := range sources {
		for v := range n {
			if got := h.Float(rows[i][v]); got != want[src][v] {
				t.Fatalf("sweep d(%d, %d) = %v, Dijkstra %v", src, v, got, want[src][v])
			}
		}
	}
}

// TestSweepRefusesWideWeights: arcs past int32 have no sweep.
func TestSweepRefusesWideWeights(t *testing.T) {
	rng := testgraphs.Rand(t, 42)
	e := testgraphs.RoadGrid(rng, 5, 6, 0.3, 0.1, 9)
	for i := range e.IntWeights {
		e.IntWeights[i] += 1 << 31
	}
	h, err := Build(mustBuildCSR(t, e, false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := NewSweep(h); err == nil || s != nil || !strings.Contains(err.Error(), "past int32") {
		t.Fatalf("a sweep of arcs past int32: %v, %v", s, err)
	}
}
