package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

func verifyCommand(e *env) *cli.Command {
	flags := append(inputFlags(), computeFlags(graph.Auto)...)
	flags = append(flags,
		&cli.IntFlag{Name: "samples", Value: 16, Usage: "number of sources to sample"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the source sample"},
		&cli.StringFlag{Name: "sources", Usage: "comma-separated source ids instead of a sample"},
		&cli.BoolFlag{Name: "with-predecessors", Usage: "also check predecessors by property"},
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
			sources, err := parseSources(c.String("sources"), "")
			if err != nil {
				return err
			}
			g, err := loadGraph(e, c)
			if err != nil {
				return err
			}
			opt := pipeline.Options{Algorithm: params.algo, Engine: c.String("engine"), Sources: sources,
				WithPredecessors: c.Bool("with-predecessors"), Delta: params.delta, Threads: params.threads}
			if !c.Bool("quiet") {
				opt.Notice = e.stderr
			}
			rep, err := pipeline.Verify(e.ctx, g, opt, c.Int("samples"), c.Uint64("seed"))
			if err != nil {
				return err
			}
			if rep.Mismatches > 0 {
				return fmt.Errorf("verify: %d of %d checks differ from the oracle (engine %s, algorithm %s); first: %s",
					rep.Mismatches, rep.Pairs, rep.Engine, rep.Algorithm, rep.First)
			}
			if !c.Bool("quiet") {
				fmt.Fprintf(e.stdout, "ok: %d distances from %d sources match the serial oracle (engine %s, algorithm %s)\n",
					rep.Pairs, len(rep.Sources), rep.Engine, rep.Algorithm)
			}
			return nil
		},
	}
}
