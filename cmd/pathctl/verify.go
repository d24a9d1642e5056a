package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/pipeline"
)

func verifyCommand(e *env) *cli.Command {
	flags := append(inputFlags(), computeFlags(pipeline.Auto)...)
	flags = append(flags,
		&cli.IntFlag{Name: "samples", Value: 16, Usage: "number of sources to sample, 0 for every source"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the source sample"},
		&cli.StringFlag{Name: "sources", Usage: "comma-separated source ids instead of a sample"},
		&cli.BoolFlag{Name: "with-predecessors", Usage: "also check predecessors by property"},
		&cli.StringFlag{Name: "layout", Value: "pairs", Usage: "pairs: check every distance of the sampled sources; stats: run the stats layout as run does and check each sampled source's row (reachable, eccentricity, sum, closeness, harmonic)"},
	)
	return &cli.Command{
		Name:      "verify",
		Usage:     "compare an engine and algorithm with a serial oracle on sampled sources; exit 1 on any mismatch",
		ArgsUsage: "EDGES",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			var notice io.Writer
			if !c.Bool("quiet") {
				notice = e.stderr
			}
			params, err := readComputeParams(c, notice)
			if err != nil {
				return err
			}
			samples := c.Int("samples")
			if samples < 0 {
				return usagef("--samples %d: want the number of sources to check, or 0 for every source", samples)
			}
			layout, err := arrowio.ParseLayout(c.String("layout"))
			if err != nil || layout == arrowio.LayoutMatrix {
				return usagef("--layout %q: verify checks the pairs or the stats layout", c.String("layout"))
			}
			if layout == arrowio.LayoutStats && c.Bool("with-predecessors") {
				return usagef("--with-predecessors checks the pairs layout; the stats layout has no predecessors")
			}
			sources, err := parseSources(c.String("sources"), "")
			if err != nil {
				return err
			}
			g, err := loadGraph(e, c)
			if err != nil {
				return err
			}
			opt := pipeline.Options{
				Query:     pipeline.Query{Algorithm: params.algo, Layout: layout, Sources: sources, WithPredecessors: c.Bool("with-predecessors"), Delta: params.delta},
				Resources: pipeline.Resources{Engine: c.String("engine"), Threads: params.threads, MemBudget: params.mem, MaxBlock: params.maxBlock, Devices: params.devices, Tune: params.tune},
			}
			if !c.Bool("quiet") {
				opt.Notice = e.stderr
			}
			q, err := pipeline.Prepare(g, opt)
			if err != nil {
				return err
			}
			rep, err := pipeline.Verify(e.ctx, q, samples, c.Uint64("seed"))
			if err != nil {
				return err
			}
			if rep.Mismatches > 0 {
				return fmt.Errorf("verify: %d of %d checks differ from the oracle (engine %s, algorithm %s); first: %s",
					rep.Mismatches, rep.Pairs, rep.Engine, rep.Algorithm, rep.First)
			}
			if !c.Bool("quiet") {
				what := "distances"
				if layout == arrowio.LayoutStats {
					what = "stats values"
				}
				every := ""
				if sources == nil && (samples == 0 || samples >= g.NumVertices()) {
					every = " (every source)"
				}
				fmt.Fprintf(e.stdout, "ok: %d %s from %d sources%s match the serial oracle (engine %s, algorithm %s)\n",
					rep.Pairs, what, len(rep.Sources), every, rep.Engine, rep.Algorithm)
			}
			return nil
		},
	}
}
