package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestVerifyLayoutsSharedCases runs Verify in its pairs path and its stats
// path over every shared case, engine and algorithm that applies: no
// mismatch, every value compared.
func TestVerifyLayoutsSharedCases(t *testing.T) {
	for _, engine := range engines(t) {
		for _, c := range testgraphs.Cases() {
			if len(c.CycleSources) > 0 {
				continue
			}
			g := caseGraph(t, &c)
			n := g.NumVertices()
			for _, algo := range algorithms {
				if c.HasNegative() && !algo.AcceptsNegative() && !algo.CountsHops() && algo != graph.Auto {
					continue
				}
				for _, layout := range []arrowio.Layout{arrowio.LayoutPairs, arrowio.LayoutStats} {
					opt := Options{Query: Query{Algorithm: algo, Layout: layout}, Resources: Resources{Engine: engine}}
					rep, err := verifyOf(context.Background(), g, opt, n, 1)
					if err != nil {
						t.Fatalf("%s %s %s %s: %v", c.Name, engine, algo, layout, err)
					}
					perSource := int64(n) // pairs: the distances
					if layout == arrowio.LayoutStats {
						perSource = 6 // the source and its 5 stats
					}
					if rep.Mismatches != 0 || rep.Pairs != perSource*int64(n) || len(rep.Sources) != n {
						t.Errorf("%s %s %s %s: %d of %d values differ over %d sources, want 0 of %d over %d; first: %s",
							c.Name, engine, algo, layout, rep.Mismatches, rep.Pairs, len(rep.Sources), perSource*int64(n), n, rep.First)
					}
				}
			}
		}
	}
}

// randomGraph draws a graph of n vertices (ids 0..n-1) with weights of
// kind (testgraphs.Rand logs the seed of a failed test).
func randomGraph(t *testing.T, rng *rand.Rand, n int, kind testgraphs.WeightKind) *Graph {
	t.Helper()
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: 4 * n, Kind: kind, MinWeight: 0, MaxWeight: 40})
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
	for i := range n {
		v.Ints = append(v.Ints, int64(i))
	}
	g, err := LoadGraph(&arrowio.EdgeTable{Edges: *e, Vertices: v, Name: "random"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// cpuStats computes the stats of sources with the CPU engine's Dijkstra and
// graph.ComputeStats, the reduction that Run uses on the CPU.
func cpuStats(t *testing.T, g *Graph, sources []graph.VertexID) *graph.Stats {
	t.Helper()
	opt, err := normalize(g, Options{Query: Query{Algorithm: graph.Dijkstra, Layout: arrowio.LayoutStats}, Resources: Resources{Engine: "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	eng, release, err := runEngine(g, opt, len(sources))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	runner, err := eng.Prepare(context.Background(), g.CSR, graph.Request{Algorithm: graph.Dijkstra})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	blk := graph.NewBlock(sources, g.NumVertices(), runner.DistType(), false)
	if err := runner.Run(context.Background(), blk); err != nil {
		t.Fatal(err)
	}
	return graph.ComputeStats(blk)
}

// TestRowCheckCatchesWrongStats feeds a RowCheck the stats records of the
// CPU engine, then the same with float sums one bit off (as another order
// of adding may leave them), then with one value of one source changed by
// one part in 10⁹ (or one unit): the first two pass, each of the others
// fails naming the value.
func TestRowCheckCatchesWrongStats(t *testing.T) {
	rng := testgraphs.Rand(t, 11)
	for _, kind := range []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float64, testgraphs.Unweighted} {
		runSources := []string{"5", "17", "3", "40", "22"}
		check := []string{"3", "22", "5"}
		opt := Options{Query: Query{Algorithm: graph.Dijkstra, Layout: arrowio.LayoutStats, Sources: runSources}, Resources: Resources{Engine: "cpu"}}
		target := 2 // run row of source 3: checked
		// Draw graphs until source 3 reaches another vertex, so that every
		// changed value below is one the oracle has.
		var g *Graph
		var dense []graph.VertexID
		for range 100 {
			g = randomGraph(t, rng, 60, kind)
			var err error
			if dense, err = g.resolveSources(runSources); err != nil {
				t.Fatal(err)
			}
			if cpuStats(t, g, slices.Clone(dense)).Reachable[target] > 0 {
				break
			}
		}
		relative := func(x float64) float64 { return x * (1 + 1e-9) }
		for _, tc := range []struct {
			field  string
			change func(s *graph.Stats)
		}{
			{"", func(*graph.Stats) {}},
			// A sum added in another order may differ in its last bits.
			{"", func(s *graph.Stats) {
				if s.SumFloat != nil {
					s.SumFloat[target] = math.Nextafter(s.SumFloat[target], math.Inf(1))
				}
				s.Harmonic[target] = math.Nextafter(s.Harmonic[target], 0)
			}},
			{"reachable", func(s *graph.Stats) { s.Reachable[target]-- }},
			{"eccentricity", func(s *graph.Stats) { s.Eccentricity[target]++ }},
			{"sum", func(s *graph.Stats) {
				if s.SumFloat != nil {
					s.SumFloat[target] = relative(s.SumFloat[target])
				} else {
					s.SumInt[target]++
				}
			}},
			{"closeness", func(s *graph.Stats) { s.Closeness[target] = relative(s.Closeness[target]) }},
			{"harmonic", func(s *graph.Stats) { s.Harmonic[target] = relative(s.Harmonic[target]) }},
			{"its row", func(s *graph.Stats) { s.Sources[target] = 0 }}, // another source in its place
		} {
			st := cpuStats(t, g, slices.Clone(dense))
			if st.Reachable[target] == 0 {
				t.Fatal("source 3 reaches nothing in 100 random graphs; the test wants it to")
			}
			tc.change(st)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			b := arrowio.NewResultBuilder(arrowio.LayoutStats, g.Table.Vertices, st.Type, false, mem)
			rc, err := newRowCheck(g, opt, check)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Stats(st, rc.Observe); err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
			rep := rc.Report()
			switch {
			case tc.field == "" && rep.Mismatches != 0:
				t.Errorf("%s weights: correct stats: %d mismatches; first: %s", g.CSR.Type, rep.Mismatches, rep.First)
			case tc.field != "" && (rep.Mismatches == 0 || !strings.Contains(rep.First, "source 3: "+tc.field)):
				t.Errorf("%s weights: %s changed: %d mismatches; first: %q", g.CSR.Type, tc.field, rep.Mismatches, rep.First)
			}
			if rep.Pairs != 6*int64(len(check)) && tc.field != "its row" || len(rep.Sources) != len(check) {
				t.Errorf("compared %d values of %d sources, want %d of %d", rep.Pairs, len(rep.Sources), 6*len(check), len(check))
			}
		}
	}
}

// TestRowCheckMatrix checks a matrix run's rows: those of its own graph
// pass; those of a graph with every weight raised by one fail on a
// distance; a run that emits nothing reports every check source missing.
func TestRowCheckMatrix(t *testing.T) {
	rng := testgraphs.Rand(t, 12)
	g := randomGraph(t, rng, 40, testgraphs.Int)
	opt := Options{Query: Query{Algorithm: graph.Delta, Layout: arrowio.LayoutMatrix}, Resources: Resources{Engine: "cpu"}}
	check := []string{"39", "0", "7"}

	rc, err := newRowCheck(g, opt, check)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runQuery(context.Background(), g, opt, rc.Observe); err != nil {
		t.Fatal(err)
	}
	if rep := rc.Report(); rep.Mismatches != 0 || rep.Pairs != 3*41 {
		t.Errorf("own graph: %d of %d differ; first: %s", rep.Mismatches, rep.Pairs, rep.First)
	}

	heavier := *g.CSR
	w := slices.Clone(graph.WeightsOf[int32](g.CSR))
	for i := range w {
		w[i]++
	}
	heavier.Weights = w
	rc, err = newRowCheck(g, opt, check)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runQuery(context.Background(), &Graph{Table: g.Table, CSR: &heavier}, opt, rc.Observe); err != nil {
		t.Fatal(err)
	}
	if rep := rc.Report(); rep.Mismatches == 0 || !strings.HasPrefix(rep.First, "distance ") {
		t.Errorf("heavier graph: %d mismatches; first: %q", rep.Mismatches, rep.First)
	}

	rc, err = newRowCheck(g, opt, check)
	if err != nil {
		t.Fatal(err)
	}
	if rep := rc.Report(); rep.Mismatches != 3 || !strings.Contains(rep.First, "source 39: no row") {
		t.Errorf("no rows: %d mismatches; first: %q", rep.Mismatches, rep.First)
	}
}

func TestRowCheckRefuses(t *testing.T) {
	g := randomGraph(t, rand.New(rand.NewPCG(1, 2)), 10, testgraphs.Int)
	if _, err := newRowCheck(g, Options{Query: Query{Layout: arrowio.LayoutPairs}}, []string{"1"}); err == nil {
		t.Errorf("pairs layout accepted")
	}
	if _, err := newRowCheck(g, Options{Query: Query{Layout: arrowio.LayoutStats, Sources: []string{"1", "2"}}}, []string{"3"}); err == nil {
		t.Errorf("a check source outside the run's sources accepted")
	}
}
