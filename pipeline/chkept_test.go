package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// genGrid is pathctl gen grid side×side (seed 1) as a pipeline graph
// whose external ids are its dense ids.
func genGrid(t *testing.T, side int) *Graph {
	t.Helper()
	list, err := gen.Grid(side, side, 1)
	if err != nil {
		t.Fatal(err)
	}
	return loadEdges(t, list.GraphEdges)
}

// loadEdges loads the edges that edges returns, ids 0..n-1, directed.
func loadEdges(t *testing.T, edges func() (*graph.Edges, error)) *Graph {
	t.Helper()
	e, err := edges()
	if err != nil {
		t.Fatal(err)
	}
	return edgesGraph(t, e, false) // chgpu_test.go
}

// builds is how many hierarchy builds g has begun.
func builds(g *Graph) int {
	g.ch.mu.Lock()
	defer g.ch.mu.Unlock()
	return g.ch.builds
}

// checkOracle compares a matrix of the sources' rows (every vertex when
// sources is nil) with serial Dijkstra on g's CSR, or on its transpose.
func checkOracle(t *testing.T, what string, g *Graph, sources []string, reverse bool, got []float64) {
	t.Helper()
	csr := g.CSR
	if reverse {
		csr = graph.Transpose(csr)
	}
	n := csr.NumVertices
	rows := make([]graph.VertexID, 0, n)
	if sources == nil {
		for s := range n {
			rows = append(rows, graph.VertexID(s))
		}
	}
	for _, s := range sources {
		x, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, graph.VertexID(x))
	}
	if len(got) != len(rows)*n {
		t.Fatalf("%s: %d distances, want %d", what, len(got), len(rows)*n)
	}
	for i, s := range rows {
		for v, w := range dijkstraRow(t, csr, s) {
			if got[i*n+v] != w {
				t.Fatalf("%s: distance %d -> %d is %v, oracle %v", what, s, v, got[i*n+v], w)
			}
		}
	}
}

// TestGraphKeepsHierarchy checks that the hierarchy the first run of ch
// builds serves the later runs on the same Graph, forward and reversed,
// of auto and of ch, without a second build, and that every answer is
// serial Dijkstra's.
func TestGraphKeepsHierarchy(t *testing.T) {
	g := genGrid(t, 40) // 1,600 vertices: auto from every one builds
	if pays, why := g.HierarchyPays(); !pays {
		t.Fatalf("HierarchyPays: false (%s), want true on a grid", why)
	}
	var log bytes.Buffer
	opt := Options{Resources: Resources{Engine: "cpu"}, Log: &log}
	got, err := collectMatrix(t, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "built for the run and kept") || builds(g) != 1 {
		t.Fatalf("first run: %d builds, log %q; want one build by auto", builds(g), log.String())
	}
	checkOracle(t, "first run", g, nil, false, got)
	if h, err := g.KeptHierarchy(); h == nil || err != nil {
		t.Fatalf("KeptHierarchy after the run: %v, %v", h, err)
	}
	for _, c := range []struct {
		name string
		q    Query
	}{
		{"auto again", Query{}},
		{"auto from 3 sources", Query{Sources: []string{"0", "777", "1599"}}},
		{"auto reversed", Query{Sources: []string{"5", "1200"}, Reverse: true}},
		{"ch reversed", Query{Algorithm: CH, Sources: []string{"41"}, Reverse: true}},
		{"ch", Query{Algorithm: CH, Sources: []string{"1", "2"}}},
	} {
		log.Reset()
		o := opt
		o.Query = c.q
		got, err := collectMatrix(t, g, o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.q.Algorithm == Auto && !strings.Contains(log.String(), "the contraction hierarchy the graph keeps") {
			t.Errorf("%s: log %q, want the kept hierarchy", c.name, log.String())
		}
		checkOracle(t, c.name, g, c.q.Sources, c.q.Reverse, got)
	}
	if n := builds(g); n != 1 {
		t.Errorf("%d builds over the runs, want 1", n)
	}
	if _, algo, err := planOf(g, Options{Query: Query{Algorithm: CH}}); err != nil || !strings.Contains(algo, "the graph keeps") {
		t.Errorf("plan of ch: %q, %v; want the kept hierarchy", algo, err)
	}
}

// TestHierarchyIndexWins checks that an explicit index is used as given,
// and neither builds nor replaces the graph's own.
func TestHierarchyIndexWins(t *testing.T) {
	g := genGrid(t, 20)
	other := genGrid(t, 20)
	h, err := other.BuildHierarchy(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := collectMatrix(t, g, Options{Query: Query{Sources: []string{"3"}}, Resources: Resources{Index: h}})
	if err != nil {
		t.Fatal(err)
	}
	checkOracle(t, "index", g, []string{"3"}, false, got)
	if kept, _ := g.KeptHierarchy(); builds(g) != 0 || kept != nil {
		t.Errorf("a run with an index: %d builds, kept %v; want none", builds(g), kept)
	}
}

// TestHierarchyBuiltOnceConcurrently starts the first runs of ch on one
// Graph at once: one builds, the others wait for it (ch) or run the
// search kernels (auto), and every answer is serial Dijkstra's.
func TestHierarchyBuiltOnceConcurrently(t *testing.T) {
	g := genGrid(t, 40)
	queries := []Query{
		{Algorithm: CH, Sources: []string{"0", "100"}},
		{Algorithm: CH, Sources: []string{"1599"}, Reverse: true},
		{Algorithm: CH, Sources: []string{"800"}},
		{Sources: []string{"7"}}, // auto, too few sources for ch
		{Targets: []string{"3"}}, // auto from every source
		{Algorithm: CH, Sources: []string{"321", "1234"}},
	}
	var wg sync.WaitGroup
	results := make([][]float64, len(queries))
	errs := make([]error, len(queries))
	for i, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = collectMatrix(t, g, Options{Query: q, Resources: Resources{Engine: "cpu"}})
		}()
	}
	wg.Wait()
	for i, q := range queries {
		if errs[i] != nil {
			t.Fatalf("query %d: %v", i, errs[i])
		}
		if q.Targets != nil {
			// Every source's distance to 3 is the row of 3 on the
			// transposed graph.
			checkOracle(t, "concurrent, to 3", g, q.Targets, true, results[i])
			continue
		}
		checkOracle(t, "concurrent "+strconv.Itoa(i), g, q.Sources, q.Reverse, results[i])
	}
	if n := builds(g); n != 1 {
		t.Errorf("%d builds for concurrent first runs, want 1", n)
	}
}

// TestHierarchyFailureRemembered checks that a build that gives up is
// tried once: the next run of ch fails at once with the same error, and
// auto runs the search kernels; a build that its context stops is not
// remembered.
func TestHierarchyFailureRemembered(t *testing.T) {
	// A random graph of 20 arcs per vertex has no hierarchy (package
	// hierarchy's TestBuildRefuses).
	rng := testgraphs.Rand(t, 1)
	g := loadEdges(t, func() (*graph.Edges, error) {
		e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 3000, M: 60000, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 100})
		return e, nil
	})
	opt := Options{Query: Query{Algorithm: CH, Sources: []string{"0"}}}
	_, first := collectMatrix(t, g, opt)
	if !errors.Is(first, ErrInvalid) || !strings.Contains(first.Error(), "too many shortcuts") {
		t.Fatalf("ch on a random graph: %v, want ErrInvalid for too many shortcuts", first)
	}
	_, again := collectMatrix(t, g, opt)
	if again == nil || again.Error() != first.Error() || builds(g) != 1 {
		t.Errorf("second run: %v after %d builds; want the first error, one build", again, builds(g))
	}
	var log bytes.Buffer
	got, err := collectMatrix(t, g, Options{Query: Query{Sources: []string{"0"}}, Resources: Resources{Engine: "cpu"}, Log: &log})
	if err != nil || builds(g) != 1 {
		t.Fatalf("auto after the failure: %v after %d builds", err, builds(g))
	}
	if !strings.Contains(log.String(), "failed before") {
		t.Errorf("auto said %q, want the failure remembered", log.String())
	}
	checkOracle(t, "auto after the failure", g, []string{"0"}, false, got)

	grid := genGrid(t, 12)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := grid.BuildHierarchy(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled build: %v", err)
	}
	if h, err := grid.BuildHierarchy(context.Background(), 0); h == nil || err != nil || builds(grid) != 2 {
		t.Errorf("the build after a cancelled one: %v, %v after %d builds; want a hierarchy from a second build", h, err, builds(grid))
	}
}

// TestKeptHierarchyWaits drives keptHierarchy.get with builds that block:
// a caller that waits gets the build under way's hierarchy, one that does
// not hears errHierarchyBuilding, and where the builder's context stops
// its build a waiter builds instead.
func TestKeptHierarchyWaits(t *testing.T) {
	g := genGrid(t, 8)
	built, err := g.BuildHierarchy(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var k keptHierarchy
	started, release := make(chan struct{}), make(chan struct{})
	blocking := func(ctx context.Context) (*hierarchy.Hierarchy, error) {
		close(started)
		select {
		case <-release:
			return built, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	never := func(context.Context) (*hierarchy.Hierarchy, error) {
		t.Error("a second build began")
		return nil, errors.New("second build")
	}
	// 1. One builds; a waiter waits; an auto run does not.
	first := make(chan error, 1)
	go func() {
		h, err := k.get(context.Background(), true, blocking)
		if err == nil && h != built {
			err = errors.New("the builder got another hierarchy")
		}
		first <- err
	}()
	<-started
	waiter := make(chan *hierarchy.Hierarchy, 1)
	go func() {
		h, _ := k.get(context.Background(), true, never)
		waiter <- h
	}()
	if _, err := k.get(context.Background(), false, never); !errors.Is(err, errHierarchyBuilding) {
		t.Errorf("a caller that does not wait: %v, want errHierarchyBuilding", err)
	}
	if st := k.state(); !st.building || st.ready {
		t.Errorf("state during the build: %+v", st)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if h := <-waiter; h != built {
		t.Errorf("the waiter got %p, want the built %p", h, built)
	}
	if k.builds != 1 || !k.state().ready {
		t.Errorf("%d builds, state %+v; want one, ready", k.builds, k.state())
	}

	// 2. The builder's context ends its build: the waiter builds.
	var k2 keptHierarchy
	ctx, cancel := context.WithCancel(context.Background())
	started = make(chan struct{})
	stopped := make(chan error, 1)
	go func() {
		_, err := k2.get(ctx, true, func(ctx context.Context) (*hierarchy.Hierarchy, error) {
			close(started)
			<-ctx.Done()
			return nil, fmt.Errorf("stopped: %w", ctx.Err())
		})
		stopped <- err
	}()
	<-started
	took := make(chan *hierarchy.Hierarchy, 1)
	go func() {
		h, _ := k2.get(context.Background(), true, func(context.Context) (*hierarchy.Hierarchy, error) { return built, nil })
		took <- h
	}()
	cancel()
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("the stopped build: %v", err)
	}
	if h := <-took; h != built || k2.builds != 2 || k2.state().failed != nil {
		t.Errorf("after a stopped build: %p after %d builds, state %+v; want the waiter's build, no failure", h, k2.builds, k2.state())
	}
}
