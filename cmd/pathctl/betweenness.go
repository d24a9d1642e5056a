package main

import (
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/pipeline"
)

// betweennessFlags are run's options of the betweenness layout, with
// networkx's meaning (pipeline.BetweennessOptions).
func betweennessFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "normalized", Value: true, Usage: "layout betweenness: divide by the pairs a vertex may lie between, as networkx (--normalized=false: raw, undirected halved)"},
		&cli.BoolFlag{Name: "endpoints", Usage: "layout betweenness: count the ends of every path as lying on it"},
		&cli.IntFlag{Name: "k", Usage: "layout betweenness: from `N` sources sampled with --seed, scaled as networkx scales its k (default: every vertex)"},
		&cli.Uint64Flag{Name: "seed", Usage: "layout betweenness: seed of the --k sample; one seed draws the same sample on every surface (default: seed 0)"},
	}
}

// readBetweennessFlags checks the betweenness flags: given with another
// layout, or k below 1 or beside the sources, they are a usage error.
func readBetweennessFlags(c *cli.Context, layout arrowio.Layout) (pipeline.BetweennessOptions, error) {
	var bopt pipeline.BetweennessOptions
	if !layout.IsBetweenness() {
		for _, name := range []string{"normalized", "endpoints", "k", "seed"} {
			if c.IsSet(name) {
				return bopt, usagef("--%s is an option of --layout betweenness and edge-betweenness, not %s (the k nearest are --k-nearest)", name, layout)
			}
		}
		return bopt, nil
	}
	bopt.Unnormalized, bopt.Endpoints, bopt.Sample, bopt.Seed = !c.Bool("normalized"), c.Bool("endpoints"), c.Int("k"), c.Uint64("seed")
	switch {
	case c.IsSet("k") && bopt.Sample < 1:
		return bopt, usagef("--k %d: want 1 or more sampled sources (leave it out for every vertex)", bopt.Sample)
	case c.IsSet("k") && (c.IsSet("sources") || c.IsSet("sources-file")):
		return bopt, usagef("--k samples the sources; give --k or --sources, not both")
	case c.IsSet("seed") && !c.IsSet("k"):
		return bopt, usagef("--seed draws the --k sample; give --k too")
	}
	return bopt, nil
}

// loadEngine is where the graph of layout is built: on the CPU for the
// betweenness layouts, which the CPU engine answers whatever --engine says.
func loadEngine(engine string, layout arrowio.Layout) string {
	if layout.IsBetweenness() {
		return "cpu"
	}
	return engine
}
