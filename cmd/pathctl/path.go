package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/pipeline"
)

// errNoPath is returned when --to is unreachable from --from.
var errNoPath = errors.New("no path")

// pathCommand prints one shortest path: the distance on the first line,
// then the ids from --from to --to, one per line.
func pathCommand(e *env) *cli.Command {
	flags := append(inputFlags(), computeFlags(pipeline.Auto)...)
	flags = append(flags,
		&cli.StringFlag{Name: "from", Required: true, Usage: "the source vertex id"},
		&cli.StringFlag{Name: "to", Required: true, Usage: "the target vertex id"},
		&cli.BoolFlag{Name: "reverse", Usage: "walk the arcs backwards (the path from --to to --from, read the other way)"},
		indexFlag(),
	)
	return &cli.Command{
		Name:      "path",
		Usage:     "one shortest path: the distance, then the vertex ids from --from to --to",
		ArgsUsage: "EDGES",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			algo, err := pipeline.ParseAlgorithm(c.String("algo"))
			if err != nil {
				return usagef("--algo: %v", err)
			}
			devices, err := pipeline.ParseDevices(c.String("devices"))
			if err != nil {
				return usagef("--devices %s: want all or device ordinals such as 0,1", c.String("devices"))
			}
			tune, err := readTune(c)
			if err != nil {
				return err
			}
			opt := pipeline.Options{
				Query:     pipeline.Query{Algorithm: algo, Sources: []string{c.String("from")}, Targets: []string{c.String("to")}, WithPaths: true, Reverse: c.Bool("reverse"), Delta: c.Float64("delta")},
				Resources: pipeline.Resources{Engine: c.String("engine"), Devices: devices, Threads: c.Int("threads"), Tune: tune},
			}
			if !c.Bool("quiet") {
				opt.Notice = e.stderr
			}
			if err := routeCH(c, &opt); err != nil { // ch: on the CPU, no device opened
				return err
			}
			// One source: auto builds and runs on the CPU; --engine gpu
			// on the device opened at start-up.
			g, err := readGraph(e, c, pipeline.LoadOptions{Engine: opt.Engine, Sources: 1, Tune: tune})
			if err != nil {
				return err
			}
			defer g.Close()
			if err := readIndexFlag(c, g, &opt, nil); err != nil {
				return err
			}
			q, err := pipeline.Prepare(g, opt)
			if err != nil {
				if errors.Is(err, pipeline.ErrUnknownTarget) {
					return usagef("--to: %v", err)
				}
				return usagef("--from: %v", err)
			}
			var lines []string
			_, err = q.Run(e.ctx, func(r arrow.RecordBatch) error {
				for i := 0; i < int(r.NumRows()); i++ {
					list := r.Column(int(r.NumCols()) - 1).(*array.List)
					lo, hi := list.ValueOffsets(i)
					lines = append(lines, r.Column(2).ValueStr(i))
					for j := lo; j < hi; j++ {
						lines = append(lines, list.ListValues().ValueStr(int(j)))
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if err := g.Release(); err != nil { // the exit releases a device at once (execute says why)
				return err
			}
			if len(lines) == 0 {
				return fmt.Errorf("%w from %s to %s", errNoPath, c.String("from"), c.String("to"))
			}
			_, err = fmt.Fprintln(e.stdout, strings.Join(lines, "\n"))
			return err
		},
	}
}
