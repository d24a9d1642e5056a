package benchsuite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// Run measures everything p asks for and returns the report; progress
// lines go to p.Log. It fails on the first row whose answer differs from
// the serial oracle, on a graph that cannot be read or generated, and
// with an error wrapping pipeline.ErrUnavailable when p.Engines names
// "gpu" and no GPU is usable.
func Run(ctx context.Context, p Params) (*Report, error) {
	p, err := p.withDefaults()
	if err != nil {
		return nil, err
	}
	log := p.Log
	rep := &Report{Machine: machineInfo(p.Version, p.Command)}

	// Which engines run: those of "auto" only where they are usable.
	gpuOK := false
	if slices.Contains(p.Engines, "gpu") || slices.Contains(p.Engines, "auto") {
		bw, err := p.MeasureDownload()
		switch {
		case err != nil && slices.Contains(p.Engines, "gpu"):
			return nil, fmt.Errorf("%w: bench: engine gpu: %v", pipeline.ErrUnavailable, err)
		case err != nil:
			rep.Machine.GPUReason = err.Error()
			fmt.Fprintf(log, "pathctl bench: GPU engine unavailable (%v); CPU rows only\n", err)
		default:
			gpuOK = true
			rep.Bandwidth = &bw.BytesPerSecond
			rep.Machine.GPU = bw.Device
			if bw.CUDADriver > 0 {
				rep.Machine.CUDADriver = fmt.Sprintf("%d.%d", bw.CUDADriver/1000, (bw.CUDADriver%1000)/10)
			}
			fmt.Fprintf(log, "pathctl bench: device-to-host %.1f GB/s (pinned)\n", bw.BytesPerSecond/1e9)
		}
	}
	var engines []string
	for _, name := range p.Engines {
		if name == "auto" {
			if gpuOK && !slices.Contains(engines, "gpu") {
				engines = append(engines, "gpu")
			}
			name = "cpu"
		}
		if !slices.Contains(engines, name) {
			engines = append(engines, name)
		}
	}
	// --algos chooses the GPU rows only: said, rather than ignored, where
	// none runs.
	if p.AlgosGiven && !slices.Contains(engines, "gpu") {
		why := "--engine " + strings.Join(p.Engines, ",")
		if rep.Machine.GPUReason != "" {
			why = "no GPU: " + rep.Machine.GPUReason
		}
		fmt.Fprintf(p.Notice, "pathctl bench: note: --algos chooses the algorithms of the GPU rows, and none runs (%s); the CPU rows run --cpu-algos %s\n",
			why, joinAlgos(p.CPUAlgos))
	}

	diskGraph := p.DiskGraph
	if diskGraph == "" {
		switch {
		case !slices.Contains(p.Graphs, "rmat16"):
			rep.DiskSkipped = "rmat16 is not among --graphs; --disk-graph NAME measures another"
		case !gpuOK:
			rep.DiskSkipped = "no GPU; --disk-graph rmat16 measures it on the CPU engine"
		default:
			diskGraph = "rmat16"
		}
	} else if diskGraph == "none" {
		rep.DiskSkipped = "--disk-graph none"
		diskGraph = ""
	}
	if diskGraph != "" && !slices.Contains(p.Graphs, diskGraph) && !slices.ContainsFunc(p.Graphs, func(s string) bool { return graphName(s) == diskGraph }) {
		return nil, paramsErrorf("disk graph %s is not among the graphs", diskGraph)
	}

	seen := map[string]bool{}
	for _, entry := range p.Graphs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g, bg, sg, err := loadGraph(entry, &p, gpuOK && slices.Contains(engines, "gpu"))
		if err != nil {
			return nil, err
		}
		if seen[bg.Name] {
			g.Close()
			return nil, paramsErrorf("graph %s appears twice", bg.Name)
		}
		seen[bg.Name] = true
		if rep.Bandwidth != nil {
			floor := float64(bg.Vertices) * float64(bg.Vertices) * float64(g.DistType().Size()) / *rep.Bandwidth
			bg.FloorSeconds = &floor
		}
		rep.Graphs = append(rep.Graphs, *bg)
		fmt.Fprintf(log, "pathctl bench: %s: %d vertices, %d arcs, CSR built on the %s in %.3f s\n", bg.Name, bg.Vertices, bg.Arcs, bg.BuiltOn, bg.LoadSeconds)
		err = func() error {
			defer g.Close()
			for _, eng := range engines {
				algos, sample := p.Algos, p.Sample
				if eng == "cpu" {
					algos, sample = p.CPUAlgos, p.CPUSample
				} else if sample == 0 {
					sample = sg.sample
				}
				for _, algo := range algos {
					row, err := runRow(ctx, g, bg, &p, eng, algo, sample)
					if err != nil {
						return err
					}
					rep.Rows = append(rep.Rows, *row)
					what := "every source"
					if row.Extrapolated {
						what = fmt.Sprintf("%d sources, extrapolated", row.Sources)
					}
					fmt.Fprintf(log, "pathctl bench:   %s %s: %.3f s (%s; %s); %d sources match the oracle\n",
						eng, algo, row.Seconds, what, row.Chosen, row.Checked)
				}
			}
			if bg.Name == diskGraph {
				eng := "cpu"
				if gpuOK {
					eng = "gpu"
				}
				d, err := benchDisk(ctx, g, bg, &p, eng)
				if err != nil {
					return err
				}
				rep.Disk = d
				fmt.Fprintf(log, "pathctl bench: disk: %s matrix, %s: Arrow %.1f MB/s, plain %.1f MB/s, %.0f %%\n",
					bg.Name, gen.HumanBytes(d.Bytes), d.ArrowRate/1e6, d.PlainRate/1e6, 100*d.Ratio)
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// runRow times one row and checks it against the oracle twice: the rows
// the timed run emits for the check sources (pipeline.RowCheck), and every
// distance of the check sources run again alone (p.Verify).
func runRow(ctx context.Context, g *pipeline.Graph, bg *GraphReport, p *Params, eng string, algo graph.Algorithm, sample int) (*Row, error) {
	n := g.NumVertices()
	sources := sampleSources(n, sample, p.Seed)
	// The check sources: the first of the sample, or drawn from every vertex.
	var check []graph.VertexID
	if sources != nil {
		check = sources[:min(p.Check, len(sources))]
	} else {
		check = pickSources(n, p.Check, p.Seed+1)
	}
	desc := fmt.Sprintf("%s, engine %s, algorithm %s", bg.Name, eng, algo)
	opt := pipeline.Options{
		Query:     pipeline.Query{Algorithm: algo, Layout: p.Layout, Sources: externalIDs(g, sources)},
		Resources: pipeline.Resources{Engine: eng, Threads: p.Threads, MemBudget: p.MemBudget, Devices: p.Devices, Tune: p.Tune},
	}
	checkIDs := externalIDs(g, check)
	if checkIDs == nil {
		checkIDs = []string{}
	}
	q, err := pipeline.Prepare(g, opt)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", desc, err)
	}
	rowCheck, err := pipeline.NewRowCheck(q, checkIDs)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: oracle: %w", desc, err)
	}
	sum, err := p.Run(ctx, q, rowCheck.Observe)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", desc, err)
	}
	if err := wrongAnswer(desc+" (timed run)", rowCheck.Report()); err != nil {
		return nil, err
	}
	if len(check) > 0 {
		vopt := pipeline.Options{Query: pipeline.Query{Algorithm: algo, Sources: checkIDs}, Resources: pipeline.Resources{Engine: eng, Threads: p.Threads, MemBudget: p.MemBudget, Devices: p.Devices, Tune: p.Tune}}
		vq, err := pipeline.Prepare(g, vopt)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: check run: %w", desc, err)
		}
		rep, err := p.Verify(ctx, vq, len(check), p.Seed)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: check run: %w", desc, err)
		}
		if err := wrongAnswer(desc, rep); err != nil {
			return nil, err
		}
	}
	k := int(sum.Sources)
	row := &Row{
		Graph: bg.Name, Engine: eng, Algorithm: string(algo), Chosen: sum.Algorithm, Layout: string(p.Layout),
		Vertices: n, Arcs: bg.Arcs, Sources: k, MeasuredSeconds: sum.Elapsed.Seconds(), Rows: sum.Rows,
		Extrapolated: k < n, Checked: len(check),
	}
	row.Seconds = row.MeasuredSeconds
	if row.Extrapolated && k > 0 {
		row.Seconds = row.MeasuredSeconds * float64(n) / float64(k)
	}
	if row.Seconds > 0 {
		row.PairsPerSecond = float64(n) * float64(n) / row.Seconds
		row.RelaxationsPerSecond = float64(bg.Arcs) * float64(n) / row.Seconds
	}
	return row, nil
}

// wrongAnswer turns a verifier's report with mismatches into the error
// that fails the bench.
func wrongAnswer(desc string, rep *pipeline.VerifyReport) error {
	if rep.Mismatches == 0 {
		return nil
	}
	return fmt.Errorf("bench: %s: wrong answer: %s (%d of %d checked values differ from the serial oracle)",
		desc, rep.First, rep.Mismatches, rep.Pairs)
}

// sampleSources draws k distinct vertices of n with seed, or returns nil
// (every source) when k is 0 or not below n.
func sampleSources(n, k int, seed uint64) []graph.VertexID {
	if k <= 0 || k >= n {
		return nil
	}
	return pickSources(n, k, seed)
}

// pickSources draws min(k, n) distinct vertices of n with seed.
func pickSources(n, k int, seed uint64) []graph.VertexID {
	rng := rand.New(rand.NewPCG(seed, 0x62656e6368))
	perm := rng.Perm(n)[:max(0, min(k, n))]
	out := make([]graph.VertexID, len(perm))
	for i, v := range perm {
		out[i] = graph.VertexID(v)
	}
	return out
}

// externalIDs names vs by their external ids; nil stays nil (every vertex).
func externalIDs(g *pipeline.Graph, vs []graph.VertexID) []string {
	if vs == nil {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = g.Table.Vertices.Format(v)
	}
	return out
}

// joinAlgos is algos as --algos writes them: comma-separated names.
func joinAlgos(algos []graph.Algorithm) string {
	names := make([]string, len(algos))
	for i, a := range algos {
		names[i] = string(a)
	}
	return strings.Join(names, ",")
}
