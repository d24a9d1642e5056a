package gpu

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// relabelKinds are the relabellings the GPU tests run.
var relabelKinds = []plan.Relabel{plan.RelabelBFS, plan.RelabelDegree, plan.RelabelHubs, plan.RelabelRCM}

// TestBatchedRelabelled runs the batched kernel on a relabelled graph
// (PATHCTL_BATCHED=relabel=KIND,relabelmin=0, which every configuration of
// checkBatched starts from) for every relabelling and direction, every
// distance type under bfs and three under the others, against the
// oracles: full rows through Run in blocks of 1, 2, 33, 70 and every
// source against ref.Dijkstra (leaves, minimums, phases and orders as in
// TestBatchedAgainstOracles; with predecessors the graph keeps its
// numbering), the stats layout through RunStats against the CPU, and
// narrowed blocks (targets, cutoff) against the CPU. Dyadic float weights
// have exact sums, so they also run the float reductions
// (plan.Config.ExactFloats); uniform ones do not. The seed is printed.
func TestBatchedRelabelled(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, kind := range relabelKinds {
		for _, dk := range distKinds {
			if kind != plan.RelabelBFS && dk.name != "int32" && dk.name != "float32" && dk.name != "float64-uniform" {
				continue // every type once; the orders on three
			}
			for _, undirected := range []bool{false, true} {
				n := 300
				o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
					Dyadic: !dk.uniform, Duplicates: n / 10}
				edges, _ := testgraphs.Random(rng, o)
				g, err := graph.Build(edges, graph.BuildOptions{Undirected: undirected, DistType: dk.typ})
				if err != nil {
					t.Fatal(err)
				}
				sources := pickSources(rng, n)
				t.Run(fmt.Sprintf("%s/%s/undirected=%v", kind, dk.name, undirected), func(t *testing.T) {
					t.Setenv(batchedEnv, "relabel="+string(kind)+",relabelmin=0")
					checkRelabelled(t, e, g)
					checkBatchedAgainstDijkstra(t, e, g, sources)
					checkRelabelledStats(t, e, g, sources)
				})
			}
		}
		// R-MAT: hubs and leaves, one block of every source in phases.
		el, err := gen.RMAT(10, 8, 3, gen.WithWeights(1, 20))
		g := undirectedGraph(t, el, err)
		t.Run(fmt.Sprintf("%s/rmat", kind), func(t *testing.T) {
			t.Setenv(batchedEnv, "relabel="+string(kind)+",relabelmin=0,order=id")
			checkRelabelled(t, e, g)
			checkBatchedAgainstDijkstra(t, e, g, allVertices(g.NumVertices))
			checkRelabelledStats(t, e, g, allVertices(g.NumVertices))
		})
	}
}

// checkRelabelled checks that a runner prepared under the environment's
// settings relabels g on its first block (and not with predecessors), and
// that a runner whose first block is below RelabelMinSources never does.
func checkRelabelled(t *testing.T, e *Engine, g *graph.CSR) {
	t.Helper()
	for _, withPred := range []bool{false, true} {
		r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Auto, WithPredecessors: withPred})
		if err != nil {
			t.Fatal(err)
		}
		b := graph.NewBlock([]graph.VertexID{0}, g.NumVertices, r.DistType(), withPred)
		if err := r.Run(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if relabelled := r.relabel.perm != nil; relabelled == withPred && g.NumVertices > 1 {
			t.Fatalf("with predecessors %v: relabelled %v", withPred, relabelled)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := defaultBatchedConfig()
	cfg.RelabelMinSources = 2
	r, err := e.prepare(context.Background(), g, graph.Request{Algorithm: Batched}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, sources := range [][]graph.VertexID{{0}, allVertices(g.NumVertices)} {
		b := graph.NewBlock(sources, g.NumVertices, r.DistType(), false)
		if err := r.Run(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if r.relabel.perm != nil {
			t.Fatal("relabelled after a first block of one source, below RelabelMinSources")
		}
	}
}

// checkRelabelledStats compares RunStats of auto (the batched kernel under
// the environment's settings) with the CPU's, and narrowed runs (targets,
// a cutoff) with the CPU's cells.
func checkRelabelledStats(t *testing.T, e *Engine, g *graph.CSR, sources []graph.VertexID) {
	t.Helper()
	req := graph.Request{Algorithm: graph.Auto}
	want, absSum, absHarm := cpuStats(t, g, graph.Request{Algorithm: graph.Dijkstra}, sources)
	r, err := e.Prepare(context.Background(), g, req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.RunStats(context.Background(), sources)
	if err != nil {
		t.Fatal(err)
	}
	compareStats(t, got, want, absSum, absHarm)
	if r.relabel.perm == nil && g.NumVertices > 1 {
		t.Fatal("RunStats did not relabel the graph")
	}
	full := graph.NewBlock(sources[:1], g.NumVertices, r.DistType(), false)
	if err := r.Run(context.Background(), full); err != nil {
		t.Fatal(err)
	}
	row := cellsOf(full)
	for _, shape := range []struct{ targets, cutoff bool }{{true, false}, {true, true}, {false, true}} {
		q := narrowQuery(newSeed(t), g.NumVertices, row, shape.targets, shape.cutoff)
		q.Algorithm = graph.Auto
		checkNarrowed(t, e, g, q, sources[:min(len(sources), 40)])
	}
}

// TestBatchedEnvSettings checks that PATHCTL_BATCHED changes the default
// configuration and that a bad setting fails the configuration's check
// (Prepare's), naming the variable.
func TestBatchedEnvSettings(t *testing.T) {
	t.Setenv(batchedEnv, "relabel=rcm,order=id")
	c := defaultBatchedConfig()
	if err := c.Check(); err != nil || c.Relabel != plan.RelabelRCM || c.Order != plan.OrderID {
		t.Errorf("relabel=rcm,order=id: %v, relabel %q, order %q", err, c.Relabel, c.Order)
	}
	t.Setenv(batchedEnv, "relabel=sideways")
	if err := defaultBatchedConfig().Check(); err == nil || !strings.Contains(err.Error(), batchedEnv) || !strings.Contains(err.Error(), "sideways") {
		t.Errorf("a bad setting: err = %v, want one naming %s and the value", err, batchedEnv)
	}
	t.Setenv(batchedEnv, "")
	if c := defaultBatchedConfig(); c.Check() != nil || c.Relabel != plan.RelabelNone {
		t.Errorf("an empty setting changed the default: %+v", c.Config)
	}
}

// TestBatchedSlices runs the batched kernel with its groups in slices of
// one group (PATHCTL_BATCHED=slicemb=0.0001: every slice's rounds alone,
// the last-change word reset between them), alone and on a relabelled
// graph, against ref.Dijkstra (full rows, blocks of 1 to every source, a
// partial last group) and the CPU's stats.
func TestBatchedSlices(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, setting := range []string{"slicemb=0.0001", "slicemb=0.0001,relabel=rcm,relabelmin=0"} {
		for _, dk := range distKinds {
			if dk.name != "int32" && dk.name != "float32" && dk.name != "float64-uniform" {
				continue
			}
			for _, n := range []int{300, 777} {
				o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
					Dyadic: !dk.uniform, Duplicates: n / 10}
				edges, _ := testgraphs.Random(rng, o)
				g, err := graph.Build(edges, graph.BuildOptions{Undirected: n == 300, DistType: dk.typ})
				if err != nil {
					t.Fatal(err)
				}
				sources := pickSources(rng, n)
				t.Run(fmt.Sprintf("%s/%s/n=%d", setting, dk.name, n), func(t *testing.T) {
					t.Setenv(batchedEnv, setting)
					checkBatchedAgainstDijkstra(t, e, g, sources)
					want, absSum, absHarm := cpuStats(t, g, graph.Request{Algorithm: graph.Dijkstra}, sources)
					r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Auto})
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					got, err := r.RunStats(context.Background(), sources)
					if err != nil {
						t.Fatal(err)
					}
					compareStats(t, got, want, absSum, absHarm)
				})
			}
		}
	}
}
