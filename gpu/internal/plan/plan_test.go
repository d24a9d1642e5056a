package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// planGraphs are the graphs of the plan's tests: an undirected R-MAT graph
// (many leaves), a directed one (minimums only) and a grid (every other
// vertex derivable, and a mesh: one phase by default).
func planGraphs(t testing.TB) map[string]*graph.CSR {
	t.Helper()
	el, err := gen.RMAT(9, 4, 5, gen.WithWeights(1, 9))
	rmat := undirectedGraph(t, el, err)
	el, err = gen.RMAT(9, 4, 6, gen.WithWeights(0, 9))
	if err != nil {
		t.Fatal(err)
	}
	edges, err := el.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	directed, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	el, err = gen.Grid(17, 23, 7, gen.WithWeights(1, 20))
	grid := undirectedGraph(t, el, err)
	return map[string]*graph.CSR{"rmat": rmat, "directed": directed, "grid": grid}
}

// TestPlanDerivesEveryRow checks the batched kernel's source plan on the
// host: computing the planned sources' rows with Dijkstra into their
// planned rows (later phases from their seeds, corrected), then applying
// the minimum derivations and the leaves' derivations in their two passes
// as batched_mins and batched_derive do, must give every block row its
// source's distances. Blocks hold every vertex, a scattered subset
// (parents outside the block, a source asked twice) or one source; orders
// and phase counts vary.
func TestPlanDerivesEveryRow(t *testing.T) {
	t.Parallel()
	el, err := gen.RMAT(9, 4, 5, gen.WithWeights(1, 9))
	rmat := undirectedGraph(t, el, err)
	leaves := 0
	for v := range rmat.NumVertices {
		if _, _, ok := leafParent(rmat, int32(v)); ok {
			leaves++
		}
	}
	if leaves < rmat.NumVertices/20 {
		t.Fatalf("only %d leaves of %d vertices: the test graph does not exercise the plan", leaves, rmat.NumVertices)
	}
	for name, g := range planGraphs(t) {
		for _, variant := range []string{"cluster", "", "bfs", "cluster/3 phases", "cluster/4 phases", "cluster/hub rows' phases"} {
			order, phases, _ := strings.Cut(variant, "/")
			cfg := DefaultConfig()
			cfg.Order = Order(order)
			switch phases {
			case "":
				cfg.Phases = nil
			case "3 phases":
				cfg.Phases = []float64{0.7}
			case "4 phases":
				cfg.Phases = []float64{0.6, 0.8}
			case "hub rows' phases":
				cfg = cfg.HubPlan()
			}
			cfg.PhasesWeighted = cfg.Phases
			t.Run(fmt.Sprintf("%s/%q", name, variant), func(t *testing.T) {
				t.Parallel()
				checkPlanRows(t, g, cfg, name, len(cfg.Phases))
			})
		}
	}
}

func checkPlanRows(t *testing.T, g *graph.CSR, cfg Config, name string, laterPhases int) {
	n := g.NumVertices
	rng := rand.New(rand.NewPCG(3, 4))
	pg := NewGraph(g)
	for _, k := range []int{n, 200, 1} {
		src := make([]int32, k)
		for i, v := range rng.Perm(n)[:k] {
			src[i] = int32(v)
		}
		if k == 200 {
			src[1] = src[0] // a source asked twice gets both rows
		}
		before := slices.Clone(src)
		plan, err := pg.Plan(src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(src, before) {
			t.Fatalf("k=%d: the plan reordered the caller's sources", k)
		}
		if plan.Rows == nil {
			if k > BatchWidth {
				t.Fatalf("k=%d: no plan", k)
			}
			continue
		}
		if k == n && len(plan.Mins) < n/5 {
			t.Errorf("%d of %d sources derived by minimums", len(plan.Mins), n)
		}
		if k == n && name == "rmat" && len(plan.Cuts) != 1+laterPhases {
			t.Errorf("phase ends %v, want %d phases", plan.Cuts, 2+laterPhases)
		}
		if k == n && name != "grid" && len(plan.Cuts) == 0 {
			t.Errorf("one phase for every source")
		}
		if k == n && name == "grid" && len(plan.Cuts) != 0 {
			t.Errorf("a mesh split into phases %v", plan.Cuts)
		}
		rows := applyPlan(t, g, k, plan)
		for i, s := range src {
			want, err := ref.Dijkstra[int32](g, s)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rows[i], want) {
				t.Fatalf("k=%d: row %d (source %d) differs from Dijkstra", k, i, s)
			}
		}
	}
}

// TestPlanWithinCutoff checks the plan under a cutoff as the kernels
// apply it (applyPlanWithin: no relaxation past the cutoff, every seed,
// minimum and derivation clipped): every block row must equal its
// source's Dijkstra row clipped at the cutoff, for cutoffs of 0 (the
// directed graph has zero weights), below, near and past the typical
// distance, with two and four phases, blocks of every vertex and of a
// scattered subset.
func TestPlanWithinCutoff(t *testing.T) {
	t.Parallel()
	for name, g := range planGraphs(t) {
		for _, phases := range [][]float64{nil, {0.6, 0.8}} {
			cfg := DefaultConfig()
			cfg.Phases, cfg.PhasesWeighted, cfg.SeedsOnMeshes = phases, phases, true
			for _, cut := range []int32{0, 5, 12, 37, graph.Infinity[int32]()} {
				t.Run(fmt.Sprintf("%s/phases=%v/cutoff=%d", name, phases, cut), func(t *testing.T) {
					t.Parallel()
					n := g.NumVertices
					rng := rand.New(rand.NewPCG(uint64(cut), 7))
					for _, k := range []int{n, 200} {
						src := make([]int32, k)
						for i, v := range rng.Perm(n)[:k] {
							src[i] = int32(v)
						}
						plan, err := Plan(g, src, cfg)
						if err != nil {
							t.Fatal(err)
						}
						if k == n && name != "grid" && len(plan.Cuts) != 1+len(phases) {
							t.Fatalf("phase ends %v, want %d phases", plan.Cuts, 2+len(phases))
						}
						rows := applyPlanWithin(t, g, k, plan, cut, Resident{})
						for i, s := range src {
							want, err := ref.Dijkstra[int32](g, s)
							if err != nil {
								t.Fatal(err)
							}
							for v, d := range want {
								if d > cut {
									want[v] = graph.Infinity[int32]()
								}
							}
							if !slices.Equal(rows[i], want) {
								t.Fatalf("k=%d: row %d (source %d) differs from Dijkstra clipped at %d", k, i, s, cut)
							}
						}
					}
				})
			}
		}
	}
}

// TestPlanReductions checks what each switch of Config leaves out of the
// kernel on the undirected R-MAT graph, one block of every source: nothing
// with every reduction off, leaves alone derive from their parents,
// minimums alone derive an independent set, and floats derive nothing.
func TestPlanReductions(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["rmat"]
	n := g.NumVertices
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	base := DefaultConfig()
	base.Seeds = 0
	off := base
	off.Leaves, off.Mins = false, false
	p, err := Plan(g, all, off)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sources) != n || len(p.Derive)+len(p.Mins) != 0 || !slices.Equal(sorted(p.Sources), all) {
		t.Errorf("no reductions: %d kernel sources of %d, %d derived", len(p.Sources), n, len(p.Derive)+len(p.Mins))
	}
	leaves := base
	leaves.Mins = false
	p, err = Plan(g, all, leaves)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Derive) == 0 || len(p.Mins) != 0 || len(p.Sources)+len(p.Derive) != n || p.Passes[1] != 0 {
		t.Errorf("leaves alone: %d kernel sources, %d leaves (passes %v), %d minimums", len(p.Sources), len(p.Derive), p.Passes, len(p.Mins))
	}
	for _, d := range p.Derive {
		if par, _, ok := leafParent(g, d.Leaf); !ok || all[d.Src] != par || d.Dst != d.Leaf {
			t.Fatalf("derivation %+v is not of a leaf from its parent's row", d)
		}
	}
	mins := base
	mins.Leaves = false
	p, err = Plan(g, all, mins)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Mins) == 0 || len(p.Derive) != 0 || len(p.Sources)+len(p.Mins) != n {
		t.Errorf("minimums alone: %d kernel sources, %d minimums, %d leaves", len(p.Sources), len(p.Mins), len(p.Derive))
	}
	left := map[int32]bool{}
	for _, m := range p.Mins {
		left[m.Source] = true
	}
	for _, m := range p.Mins {
		if int(m.Count) != g.OutDegree(m.Source) || m.Count > minsMaxDegree {
			t.Fatalf("minimum of %d reads %d arcs of %d", m.Source, m.Count, g.OutDegree(m.Source))
		}
		for _, a := range p.MinArcs[m.First : m.First+m.Count] {
			if left[g.Targets[a.Arc]] {
				t.Fatalf("minimum of %d reads %d, itself derived", m.Source, g.Targets[a.Arc])
			}
		}
	}
	el, err := gen.RMAT(9, 4, 5, gen.WithFloatWeights(0.5, 9))
	fl := undirectedGraph(t, el, err)
	if p, err = Plan(fl, all[:fl.NumVertices], DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if len(p.Derive)+len(p.Mins)+len(p.Cuts) != 0 {
		t.Errorf("float weights: %d leaves, %d minimums, phases %v; floats derive nothing", len(p.Derive), len(p.Mins), p.Cuts)
	}
}

// TestStartThenFinish checks that a plan started and finished in two
// steps, with the first phase packed before finish runs, equals the plan
// made at once, and that finish leaves the first phase's words alone.
func TestStartThenFinish(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["rmat"]
	all := make([]int32, g.NumVertices)
	for i := range all {
		all[i] = int32(i)
	}
	pg := NewGraph(g)
	whole, err := pg.Plan(all, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	started, finish, err := pg.Start(all, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if finish == nil || started.NumPhases() < 2 {
		t.Fatalf("one block of every source of R-MAT: %d phases, finish %v", started.NumPhases(), finish != nil)
	}
	first := started.Pack(0, 1, false)
	firstWords := slices.Clone(first.Words)
	finish()
	if !reflect.DeepEqual(started, whole) {
		t.Errorf("Start then finish differs from Plan")
	}
	if again := started.Pack(0, 1, false); !slices.Equal(again.Words, firstWords) {
		t.Errorf("finish changed the first phase's sources or rows")
	}
}

// TestPlanRefuses checks that an invalid configuration or a source outside
// the graph is an error naming what is wrong, before any planning.
func TestPlanRefuses(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["grid"]
	for _, c := range []struct {
		name    string
		change  func(*Config)
		sources []int32
		want    string
	}{
		{"order", func(c *Config) { c.Order = "random" }, []int32{0}, `unknown source order "random"`},
		{"seeds", func(c *Config) { c.Seeds = 1.5 }, []int32{0}, "seeds share 1.5"},
		{"phases", func(c *Config) { c.PhasesWeighted = []float64{-0.1} }, []int32{0}, "weighted phase share -0.1"},
		{"chunk", func(c *Config) { c.ClusterChunk = 0 }, []int32{0}, "cluster chunk of 0 rows"},
		{"scale", func(c *Config) { c.DeltaScale = -1 }, []int32{0}, "threshold step scale -1"},
		{"sparse", func(c *Config) { c.Sparse = 33 }, []int32{0}, "sparse expansions of up to 33"},
		{"cutoff reach", func(c *Config) { c.CutoffReach = 2 }, []int32{0}, "cutoff reach share 2"},
		{"source", func(*Config) {}, []int32{0, int32(g.NumVertices)}, fmt.Sprintf("source %d outside [0, %d)", g.NumVertices, g.NumVertices)},
		{"negative source", func(*Config) {}, []int32{-1}, "source -1 outside"},
	} {
		cfg := DefaultConfig()
		c.change(&cfg)
		_, err := Plan(g, c.sources, cfg)
		if err == nil || !strings.HasPrefix(err.Error(), "plan: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one naming %q", c.name, err, c.want)
		}
	}
	if err := DefaultConfig().Check(); err != nil {
		t.Errorf("DefaultConfig: %v", err)
	}
}

// applyPlan computes a block of k rows as the batched kernel and its
// derivation kernels would under plan, with Dijkstra standing in for the
// kernel, failing where the plan computes a row twice, leaves one out, or
// reads a row before it is final.
func applyPlan(t *testing.T, g *graph.CSR, k int, plan *Block) [][]int32 {
	return applyPlanWithin(t, g, k, plan, graph.Infinity[int32](), Resident{})
}

// applyPlanWithin is applyPlan with a cutoff as the kernels apply it: the
// first phase's rows clipped at cut (the kernel never relaxes past it),
// later phases seeded with the seeds above cut unreachable and corrected
// without relaxing past cut, and every minimum and derivation clipped.
func applyPlanWithin(t *testing.T, g *graph.CSR, k int, plan *Block, cut int32, res Resident) [][]int32 {
	t.Helper()
	n := g.NumVertices
	weights := graph.WeightsOf[int32](g)
	inf := graph.Infinity[int32]()
	clip := func(d int64) int32 {
		if d > int64(cut) {
			return inf
		}
		return int32(d)
	}
	dijkstra := func(s int32) []int32 {
		d, err := ref.Dijkstra[int32](g, s)
		if err != nil {
			t.Fatal(err)
		}
		for v := range d {
			d[v] = clip(int64(d[v]))
		}
		return d
	}
	// The block's k rows, then the resident rows (the kernel's rows
	// clipped at the cutoff, as the runner computes them).
	rows := make([][]int32, max(k, int(res.FirstRow)+len(res.Vertices)))
	for i, v := range res.Vertices {
		rows[int(res.FirstRow)+i] = dijkstra(v)
	}
	if plan.Rows == nil && len(plan.Derive)+len(plan.Mins)+len(plan.Copies) > 0 {
		t.Fatal("a plan that derives or copies rows leaves Rows nil (the sources' own rows)")
	}
	phase1 := len(plan.Sources)
	bounds := append(slices.Clone(plan.Cuts), len(plan.Sources))
	if len(plan.Cuts) > 0 {
		phase1 = plan.Cuts[0]
		if len(plan.Seeds) != len(plan.Sources)-phase1 {
			t.Fatalf("%d seeds for %d sources after the first phase", len(plan.Seeds), len(plan.Sources)-phase1)
		}
		if !slices.IsSorted(bounds) || bounds[0] <= 0 || slices.Contains(bounds[1:], bounds[0]) {
			t.Fatalf("phase ends %v over %d sources", bounds, len(plan.Sources))
		}
	}
	if plan.SeedFirst {
		if len(plan.Cuts) > 0 || len(plan.Seeds) != len(plan.Sources) {
			t.Fatalf("first phase seeded in %d phases, %d seeds for %d sources", len(plan.Cuts)+1, len(plan.Seeds), len(plan.Sources))
		}
		phase1 = 0
	}
	phaseOf := func(i int) int { // the phase of kernel source i
		p, _ := slices.BinarySearch(bounds, i+1)
		return p
	}
	seeded := phase1 // the index in Seeds of the first seeded source
	for i, s := range plan.Sources {
		var d []int32
		if i < phase1 {
			d = dijkstra(s)
		} else {
			seed := plan.Seeds[i-seeded]
			if seed.Source != s || seed.Dst != plan.Rows[i] {
				t.Fatalf("seed %d is for source %d row %d, want %d row %d", i-seeded, seed.Source, seed.Dst, s, plan.Rows[i])
			}
			d = make([]int32, n)
			for v := range d {
				best := int64(inf)
				for _, a := range plan.MinArcs[seed.First : seed.First+seed.Count] {
					from := rows[a.Row]
					if a.Row >= int32(k) {
						if from == nil {
							t.Fatalf("seed of source %d reads row %d past the block, which is not resident", s, a.Row)
						}
					} else if j := slices.Index(plan.Rows, a.Row); from == nil || j < 0 || phaseOf(j) >= phaseOf(i) {
						t.Fatalf("seed of source %d reads row %d, which no earlier phase computes", s, a.Row)
					}
					if from[v] != inf {
						best = min(best, int64(from[v])+int64(weights[a.Arc]))
					}
				}
				d[v] = clip(best)
			}
			correctWithin(g, s, d, cut)
		}
		if rows[plan.Rows[i]] != nil {
			t.Fatalf("row %d computed twice", plan.Rows[i])
		}
		rows[plan.Rows[i]] = d
	}
	for _, c := range plan.Copies {
		if c.Src < int32(k) || rows[c.Src] == nil {
			t.Fatalf("row %d copies row %d, which is not resident", c.Dst, c.Src)
		}
		if c.Dst >= int32(k) || rows[c.Dst] != nil {
			t.Fatalf("a copy writes row %d, past the block or computed", c.Dst)
		}
		rows[c.Dst] = slices.Clone(rows[c.Src])
	}
	computed := slices.Clone(rows) // what the minimums may read
	for _, m := range plan.Mins {
		out := make([]int32, n)
		for v := range out {
			best := int64(inf)
			for _, a := range plan.MinArcs[m.First : m.First+m.Count] {
				from := computed[a.Row]
				if from == nil {
					t.Fatalf("minimum of source %d reads row %d, which the kernel does not compute", m.Source, a.Row)
				}
				if from[v] != inf {
					best = min(best, int64(from[v])+int64(weights[a.Arc]))
				}
			}
			out[v] = clip(best)
			if v == int(m.Source) {
				out[v] = 0
			}
		}
		if rows[m.Dst] != nil {
			t.Fatalf("row %d computed and derived", m.Dst)
		}
		rows[m.Dst] = out
	}
	for pass, items := range [][]Derivation{plan.Derive[:plan.Passes[0]], plan.Derive[plan.Passes[0]:]} {
		for _, d := range items {
			from := rows[d.Src]
			out := make([]int32, n)
			for v := range out {
				switch {
				case v == int(d.Leaf):
					out[v] = 0
				case from[v] == inf:
					out[v] = from[v]
				default:
					out[v] = clip(int64(from[v]) + int64(weights[d.Arc]))
				}
			}
			if pass == 1 && d.Dst != d.Src {
				t.Fatalf("a second-pass derivation not in place")
			}
			if d.Dst >= int32(k) {
				t.Fatalf("a derivation writes row %d, past the block", d.Dst)
			}
			rows[d.Dst] = out
		}
	}
	return rows[:k]
}

// correctWithin is a later phase of the batched kernel on the host: label
// correcting from s alone over labels d that hold the seeds, relaxing no
// arc past cut.
func correctWithin(g *graph.CSR, s int32, d []int32, cut int32) {
	weights := graph.WeightsOf[int32](g)
	d[s] = 0
	queue := []int32{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for e := g.Offsets[u]; e < g.Offsets[u+1]; e++ {
			if v := g.Targets[e]; d[u]+weights[e] <= cut && d[u]+weights[e] < d[v] {
				d[v] = d[u] + weights[e]
				queue = append(queue, v)
			}
		}
	}
}

// TestPlanResidentRows checks plans beside resident rows (StartResident)
// as TestPlanDerivesEveryRow checks plans: every block row must equal its
// source's Dijkstra row, clipped at the cutoff where there is one, with
// the hubs' rows resident past a gap after the block's rows, in blocks of
// one phase (every source seeded from the hubs) and of several, scattered
// over the graph or holding hubs themselves. On the undirected R-MAT graph
// the resident rows must leave more sources out of the kernel than the
// same block without them.
func TestPlanResidentRows(t *testing.T) {
	t.Parallel()
	for name, g := range planGraphs(t) {
		n := g.NumVertices
		pg := NewGraph(g)
		hubs := pg.Hubs(n / 16)
		for i := 1; i < len(hubs); i++ {
			if g.OutDegree(graph.VertexID(hubs[i])) > g.OutDegree(graph.VertexID(hubs[i-1])) {
				t.Fatalf("%s: hub %d of degree above its predecessor's", name, i)
			}
		}
		phases := DefaultConfig()
		phases.Seeds, phases.SeedsOnMeshes, phases.SeedsMinShare, phases.Phases, phases.PhasesWeighted = 0.2, true, 0, []float64{0.6}, []float64{0.6}
		rng := rand.New(rand.NewPCG(5, 6))
		for _, k := range []int{n / 8, 200, 40} {
			src := make([]int32, k)
			for i, v := range rng.Perm(n)[:k] {
				src[i] = int32(v)
			}
			src[0] = hubs[0] // a hub in the block: its row copied
			for cname, cfg := range map[string]Config{"default": DefaultConfig(), "phases": phases} {
				for _, cut := range []int32{graph.Infinity[int32](), 12} {
					res := Resident{Vertices: hubs, FirstRow: int32(k) + 3}
					plan, finish, err := pg.StartResident(src, cfg, float64(cut), res)
					if err != nil {
						t.Fatal(err)
					}
					if finish != nil {
						finish()
					}
					if len(plan.Cuts) == 0 && !plan.SeedFirst {
						t.Errorf("%s/%s k=%d: a block of one phase beside resident rows is not seeded", name, cname, k)
					}
					if !slices.Contains(plan.Copies, Copy{0, res.FirstRow}) || slices.Contains(plan.Sources, hubs[0]) {
						t.Errorf("%s/%s k=%d: the hub in the block is not copied from its resident row: copies %v", name, cname, k, plan.Copies)
					}
					rows := applyPlanWithin(t, g, k, plan, cut, res)
					for i, s := range src {
						want, err := ref.Dijkstra[int32](g, s)
						if err != nil {
							t.Fatal(err)
						}
						for v := range want {
							if want[v] > cut {
								want[v] = graph.Infinity[int32]()
							}
						}
						if !slices.Equal(rows[i], want) {
							t.Fatalf("%s/%s k=%d cut=%d: row %d (source %d) differs from Dijkstra", name, cname, k, cut, i, s)
						}
					}
					if name != "rmat" || cut != graph.Infinity[int32]() {
						continue
					}
					alone, err := pg.Plan(src, cfg)
					if err != nil {
						t.Fatal(err)
					}
					if kernel := func(b *Block) int { return len(b.Sources) }; kernel(plan) >= kernel(alone) {
						t.Errorf("%s k=%d: %d kernel sources beside resident rows, %d without", cname, k, kernel(plan), kernel(alone))
					}
				}
			}
		}
	}
	if _, _, err := NewGraph(planGraphs(t)["rmat"]).StartResident([]int32{1, 2}, DefaultConfig(), math.Inf(1), Resident{Vertices: []int32{0}, FirstRow: 1}); err == nil ||
		!strings.Contains(err.Error(), "resident rows from row 1") {
		t.Errorf("resident rows over the block's: err = %v", err)
	}
}

// TestSeedFirstCapsArcs checks that a source of a first phase starts from
// at most seedFirstMaxArcs resident rows, and that the rows stay exact: a
// wheel whose centre reaches 100 resident spokes, the spokes joined in a
// ring, every block of one phase.
func TestSeedFirstCapsArcs(t *testing.T) {
	t.Parallel()
	const spokes = 100
	e := &graph.Edges{NumVertices: spokes + 2}
	for i := 1; i <= spokes; i++ {
		e.Src = append(e.Src, 0, graph.VertexID(i))
		e.Dst = append(e.Dst, graph.VertexID(i), graph.VertexID(i%spokes+1))
		e.IntWeights = append(e.IntWeights, int64(1+i%7), 3)
	}
	e.Src, e.Dst, e.IntWeights = append(e.Src, spokes), append(e.Dst, spokes+1), append(e.IntWeights, 2)
	g, err := graph.Build(e, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	res := Resident{FirstRow: 40}
	for v := int32(1); v <= spokes; v++ {
		res.Vertices = append(res.Vertices, v)
	}
	cfg := DefaultConfig()
	cfg.Order, cfg.Leaves, cfg.Mins = OrderBlock, false, false
	src := []int32{0, spokes + 1, 7, 50}
	plan, finish, err := NewGraph(g).StartResident(src, cfg, math.Inf(1), res)
	if err != nil || finish != nil {
		t.Fatalf("plan: %v, finish %v", err, finish != nil)
	}
	if !plan.SeedFirst || plan.Seeds[0].Source != 0 || plan.Seeds[0].Count != seedFirstMaxArcs {
		t.Fatalf("seeds %+v, want the centre's first %d arcs", plan.Seeds, seedFirstMaxArcs)
	}
	sameAsDijkstra(t, g, applyPlanWithin(t, g, len(src), plan, graph.Infinity[int32](), res), src, "seed first")
}

// TestPlanResidentOnly plans blocks whose every source has a resident row:
// all but one are copied, the one left is the kernel's (a launch needs a
// source), and every row equals Dijkstra's.
func TestPlanResidentOnly(t *testing.T) {
	t.Parallel()
	for name, g := range planGraphs(t) {
		pg := NewGraph(g)
		hubs := pg.Hubs(64)
		src := slices.Clone(hubs[10:40])
		slices.Reverse(src)
		res := Resident{Vertices: hubs, FirstRow: int32(len(src))}
		plan, finish, err := pg.StartResident(src, DefaultConfig(), math.Inf(1), res)
		if err != nil {
			t.Fatal(err)
		}
		if finish != nil {
			finish()
		}
		if len(plan.Copies) != len(src)-1 || len(plan.Sources) != 1 {
			t.Fatalf("%s: %d copies and %d kernel sources of %d resident sources, want %d and 1", name, len(plan.Copies), len(plan.Sources), len(src), len(src)-1)
		}
		sameAsDijkstra(t, g, applyPlanWithin(t, g, len(src), plan, graph.Infinity[int32](), res), src, name)
	}
}

// sameAsDijkstra fails t where rows[i] is not Dijkstra's row of src[i].
func sameAsDijkstra(t *testing.T, g *graph.CSR, rows [][]int32, src []int32, what string) {
	t.Helper()
	for i, s := range src {
		want, err := ref.Dijkstra[int32](g, s)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rows[i], want) {
			t.Fatalf("%s: row %d (source %d) differs from Dijkstra", what, i, s)
		}
	}
}
