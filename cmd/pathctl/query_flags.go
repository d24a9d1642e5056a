package main

// The flags of queries narrower than all pairs (design.md, "Queries
// narrower than all pairs"): --targets, --targets-file, --cutoff,
// --k-nearest, --nearest, --reverse and --with-paths on pathctl run.

import (
	"errors"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/pipeline"
)

// queryFlags narrow the answer of pathctl run.
func queryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "targets", Usage: "comma-separated target ids: only these columns (matrix: the sources × targets matrix in this order)"},
		&cli.StringFlag{Name: "targets-file", Usage: "file of target ids, one per line"},
		&cli.Float64Flag{Name: "cutoff", Usage: "distances above `D` count as unreachable; searches stop past it (default: none)"},
		&cli.BoolFlag{Name: "with-paths", Usage: "add a path column (the ids from source to target) to the pairs layout, in csv one field of ids joined by ';'; refused when the output would exceed --max-output"},
		&cli.StringFlag{Name: "max-output", Value: "1GiB", Usage: "the largest estimated output --with-paths may write, in bytes or with a unit: 512MiB, 8GB"},
		&cli.BoolFlag{Name: "nearest", Usage: "layout nearest: every vertex's distance to the nearest of --sources, and which (one multi-source run)"},
		&cli.BoolFlag{Name: "reverse", Usage: "distances to the sources along incoming arcs: rows (source s, target v, d(v → s))"},
		&cli.IntFlag{Name: "k-nearest", Usage: "per source the `K` nearest other vertices (ties by vertex order), pairs with a rank column (default: every vertex, no rank)"},
	}
}

// applyQueryFlags puts the query flags of c into opt, refusing values no
// graph could answer.
func applyQueryFlags(c *cli.Context, opt *pipeline.Options) error {
	if c.IsSet("targets") || c.IsSet("targets-file") {
		targets, err := parseIDs("targets", c.String("targets"), c.String("targets-file"))
		if err != nil {
			return err
		}
		opt.Targets = targets
	}
	if c.IsSet("cutoff") {
		d := c.Float64("cutoff")
		if math.IsNaN(d) || d < 0 {
			return usagef("--cutoff %v: the cutoff is a distance of 0 or more", d)
		}
		opt.Cutoff, opt.HasCutoff = d, true
	}
	if t := c.String("matrix-type"); t != "" {
		switch t {
		case pipeline.MatrixFloat, "int32", "int64", "float32", "float64":
		default:
			return usagef("--matrix-type %s: want float, int32, int64, float32 or float64", t)
		}
		if opt.Layout != arrowio.LayoutMatrix {
			return usagef("--matrix-type %s: the value type of the matrix layout; give --layout matrix", t)
		}
		opt.MatrixType = t
	}
	opt.Reverse = c.Bool("reverse")
	opt.WithPaths = c.Bool("with-paths")
	maxOutput, err := sizeFlag(c, "max-output")
	if err != nil {
		return err
	}
	if maxOutput == 0 {
		return usagef("--max-output %s: want a size above 0", c.String("max-output"))
	}
	opt.MaxOutput = maxOutput
	if c.Bool("nearest") {
		if c.IsSet("layout") && opt.Layout != arrowio.LayoutNearest {
			return usagef("--nearest is the nearest layout; it does not go with --layout %s", opt.Layout)
		}
		if opt.Sources == nil {
			return usagef("--nearest needs --sources or --sources-file: the sources are what each vertex's nearest is chosen from")
		}
		opt.Layout = arrowio.LayoutNearest
	}
	if c.IsSet("k-nearest") {
		k := c.Int("k-nearest")
		if k <= 0 {
			return usagef("--k-nearest %d: K is 1 or more", k)
		}
		opt.K = k
	}
	return nil
}

// queryError names the flag of a request error the pipeline found in the
// source or query flags' values of c on g. An unknown target is put on
// the flag that gave it: the pipeline reports the first unknown id, and
// parseIDs puts the ids of --targets before those of --targets-file, so
// the id is one of --targets exactly when one of them is not a vertex of
// g.
//
// An unknown source of run is put on --sources-file or --sources, which
// cannot both be given (--source names its one id already).
func queryError(c *cli.Context, g *pipeline.Graph, err error) error {
	if errors.Is(err, pipeline.ErrUnknownSource) {
		if file := c.String("sources-file"); file != "" {
			return usagef("--sources-file %s: %v", file, err)
		}
		if c.String("sources") != "" {
			return usagef("--sources: %v", err)
		}
		return err
	}
	if errors.Is(err, pipeline.ErrUnknownTarget) {
		if file := c.String("targets-file"); file != "" && !unknownListed(g, c.String("targets")) {
			return usagef("--targets-file %s: %v", file, err)
		}
		return usagef("--targets: %v", err)
	}
	var mt *pipeline.MatrixTypeError
	if errors.As(err, &mt) {
		return usagef("--matrix-type %s: %s", mt.Type, mt.Reason)
	}
	if errors.Is(err, pipeline.ErrPathsTooLarge) {
		return usagef("--with-paths: %v, or raise --max-output", err)
	}
	return err
}

// unknownListed says whether an id of the comma-separated list is not a
// vertex of g.
func unknownListed(g *pipeline.Graph, list string) bool {
	ids, _ := parseIDs("targets", list, "") // parsed once already: no error
	for _, id := range ids {
		if _, err := g.Table.Vertices.Lookup(id); err != nil {
			return true
		}
	}
	return false
}
