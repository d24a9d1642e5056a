package pipeline

// The betweenness layouts on the GPU engine: the run's engine prepares a
// runner for the full rows (auto's kernel over weights, bfs over hops),
// and where it is a graph.BetweennessRunner the sources go through it in
// blocks sized by the device's budget, their sums (per vertex, or per arc
// for edge-betweenness) added in block order; over several devices each
// block is shared among them (gpu/devices/betweenness.go). Otherwise (the
// CPU engine asked or chosen) the CPU engine computes the layout
// (betweenness.go).

import (
	"context"
	"fmt"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// betweennessOnGPU computes q's raw betweenness sums on the GPU engine:
// per vertex (cpu.Engine.Betweenness' meaning), or per arc for
// edge-betweenness (cpu.Engine.EdgeBetweenness'). ok is false where the
// run does not take the GPU or its runner cannot: the CPU engine then
// computes them, and why was said on opt.Log (auto) or opt.Notice (gpu
// asked for).
func betweennessOnGPU(ctx context.Context, q *Prepared) (raw []float64, sum *Summary, ok bool, err error) {
	g, opt, sources := q.g, q.opt, q.sources
	if opt.Engine == "cpu" {
		return nil, nil, false, nil
	}
	say := opt.Log
	if opt.Engine == "gpu" {
		say = opt.Notice
	}
	eng, release, err := runEngine(g, opt, len(sources))
	if err != nil {
		return nil, nil, false, err
	}
	defer release()
	if eng.Name() != "gpu" {
		return nil, nil, false, nil // auto's choice, said by chooseEngine
	}
	req := graph.Request{Algorithm: opt.Algorithm, Threads: opt.Threads}
	if q.hops && !req.Algorithm.CountsHops() {
		req.Algorithm = graph.BFS
	}
	runner, err := eng.Prepare(ctx, g.CSR, req)
	if err != nil {
		return nil, nil, false, g.explain(err)
	}
	defer runner.Close()
	br, can := runner.(graph.BetweennessRunner)
	if !can {
		fmt.Fprintf(say, "pathctl: note: betweenness runs on the CPU engine: the devices' runners have no Brandes passes\n")
		return nil, nil, false, nil
	}
	if why := br.BetweennessSupported(); why != nil {
		fmt.Fprintf(say, "pathctl: note: betweenness runs on the CPU engine: %v\n", why)
		return nil, nil, false, nil
	}
	// Blocks as large as the device holds: each block's rows are computed
	// together (the batched kernel derives rows from its other sources).
	edges := opt.Layout == arrowio.LayoutEdgeBetweenness
	fixed, per := br.BetweennessBytes(edges)
	budget := opt.MemBudget
	if b, isB := eng.(graph.Budgeter); isB && budget <= 0 {
		budget = b.DeviceBudget()
	}
	if budget <= 0 {
		budget = DefaultMemBudget
	}
	// Over several devices a block is shared among them (each part of one
	// device's budget), so it holds a device's sources for each.
	devices := 1
	if d, isGroup := eng.(graph.DeviceGroup); isGroup && d.Devices() > 1 {
		devices = d.Devices()
	}
	block, err := betweennessBlock(budget, fixed, per, devices, len(sources), opt.MaxBlock)
	if err != nil {
		return nil, nil, false, err
	}
	n := g.NumVertices()
	sum = &Summary{Engine: "gpu", Algorithm: "betweenness (Brandes, " + describe(runner, req.Algorithm) + " rows)",
		Sources: int64(len(sources)), Pairs: int64(len(sources)) * int64(n)}
	run := func(block []graph.VertexID) ([]float64, error) {
		return br.RunBetweenness(ctx, block, opt.Betweenness.Endpoints)
	}
	if edges {
		sum.Algorithm = "edge " + sum.Algorithm
		run = func(block []graph.VertexID) ([]float64, error) { return br.RunEdgeBetweenness(ctx, block) }
	}
	fmt.Fprintf(opt.Log, "pathctl: engine gpu, %s, %d sources in blocks of up to %d, %d vertices, %d arcs\n",
		sum.Algorithm, len(sources), block, n, g.CSR.NumEdges())
	start := time.Now()
	raw = make([]float64, n)
	if edges {
		raw = make([]float64, g.CSR.NumEdges())
	}
	for lo := 0; lo < len(sources); lo += block {
		hi := min(lo+block, len(sources))
		part, err := run(sources[lo:hi])
		if err != nil {
			return nil, nil, false, g.explain(err)
		}
		for v, x := range part {
			raw[v] += x
		}
		sum.Blocks++
		if opt.Progress != nil {
			opt.Progress(int64(hi), int64(len(sources)))
		}
	}
	fmt.Fprintf(opt.Log, "pathctl: betweenness of %d sources on the device in %s\n", len(sources), time.Since(start).Round(time.Millisecond))
	return raw, sum, true, nil
}

// betweennessBlock is the sources of a betweenness block on devices
// devices of budget bytes each, of which the passes take fixed bytes and
// every source per more: at most numSources and maxBlock (where positive),
// at least one. A budget below one source is an ErrInvalid error.
func betweennessBlock(budget, fixed, per int64, devices, numSources, maxBlock int) (int, error) {
	if budget < fixed+per {
		return 0, fmt.Errorf("%w: memory budget of %d bytes is below the %d bytes one source of betweenness needs (%d of them whatever the block)",
			ErrInvalid, budget, fixed+per, fixed)
	}
	block := int(min((budget-fixed)/per*int64(devices), int64(numSources)))
	if maxBlock > 0 {
		block = min(block, maxBlock)
	}
	return max(block, 1), nil
}
