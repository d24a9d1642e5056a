package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/hierarchy"
	"github.com/pathctl/pathctl/pipeline"
)

// indexCommand is pathctl index EDGES -o FILE: the contraction hierarchy
// of the graph the input flags read, written as an index file that
// run --index reads back for the same edges and direction.
func indexCommand(e *env) *cli.Command {
	flags := append(inputFlags(),
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "the index `FILE` to write (replaced once complete)"},
		&cli.IntFlag{Name: "threads", Usage: "CPU threads of the build's parallel phase (default: every core)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on success"},
	)
	return &cli.Command{
		Name:      "index",
		Usage:     "build the contraction hierarchy of a graph (--algo ch) and write it to -o FILE for run --index",
		ArgsUsage: "EDGES",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			out := c.String("output")
			if out == "" || out == "-" {
				return usagef("-o %q: index writes a file", out)
			}
			if c.NArg() == 1 && sameFile(c.Args().First(), out) {
				return usagef("-o %s is the input file", out)
			}
			if c.Int("threads") < 0 {
				return usagef("--threads %d is negative", c.Int("threads"))
			}
			start := time.Now()
			g, err := loadGraph(e, c)
			if err != nil {
				return err
			}
			defer g.Close()
			if g.CSR.HasNegative() {
				return fmt.Errorf("%w: a contraction hierarchy needs non-negative weights", pipeline.ErrNegativeWeight)
			}
			h, err := hierarchy.Build(g.CSR, hierarchy.Options{Workers: c.Int("threads")})
			switch {
			case errors.Is(err, hierarchy.ErrInexact), errors.Is(err, hierarchy.ErrTooManyShortcuts):
				return usagef("index: %v; the search algorithms (--algo dijkstra) need no index", err)
			case err != nil:
				return err
			}
			if err := writeIndex(h, out); err != nil {
				return err
			}
			if !c.Bool("quiet") {
				fmt.Fprintf(e.stderr, "pathctl: wrote the hierarchy of %d vertices (%d arcs, %d shortcuts) to %s in %s\n",
					h.NumVertices(), h.Arcs(), h.Shortcuts(), out, time.Since(start).Round(time.Millisecond))
			}
			return nil
		},
	}
}

// writeIndex writes h to a temporary file beside path and renames it
// there once complete, so that no half-written index is left behind.
func writeIndex(h *hierarchy.Hierarchy, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	err = h.Write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("index: writing %s: %w", path, err)
	}
	return nil
}

// indexFlag is run's --index FILE.
func indexFlag() cli.Flag {
	return &cli.StringFlag{Name: "index", Usage: "the contraction hierarchy of the edges written by pathctl index `FILE`, used by --algo ch (auto then runs ch)"}
}

// routeCH puts a run of --algo ch, or of auto with --index, on the CPU
// engine before its graph is loaded (pipeline.RouteCH), so that no GPU is
// opened for it.
func routeCH(c *cli.Context, opt *pipeline.Options) error {
	if opt.Algorithm == pipeline.CH || (opt.Algorithm == pipeline.Auto && c.String("index") != "") {
		return pipeline.RouteCH(opt)
	}
	return nil
}

// readIndexFlag reads --index FILE for g into opt, checked against g's
// CSR: an index of other edges or another direction is a usage error. An
// early read (startIndexRead) gives the file decoded beside the graph;
// nil reads it now.
func readIndexFlag(c *cli.Context, g *pipeline.Graph, opt *pipeline.Options, early *indexRead) error {
	path := c.String("index")
	if path == "" {
		return nil
	}
	if opt.Algorithm != pipeline.Auto && opt.Algorithm != pipeline.CH {
		return usagef("--index serves --algo ch (or auto), not --algo %s", opt.Algorithm)
	}
	if early == nil {
		early = startIndexRead(path, false, false)
	}
	<-early.done
	h, err := early.h, early.err
	if err == nil {
		err = h.CheckGraph(g.CSR)
	}
	var open *os.PathError
	switch {
	case errors.As(err, &open):
		return usagef("--index: %v", err)
	case errors.Is(err, hierarchy.ErrMismatch):
		return usagef("--index %s was built for another graph or direction (%v)", path, err)
	case err != nil:
		return inputError{fmt.Errorf("--index %s: %w", path, err)}
	}
	opt.Index = h
	return nil
}

// indexRead is an --index file decoded in the background.
type indexRead struct {
	done chan struct{} // closed once h or err is set
	h    *hierarchy.Hierarchy
	err  error
}

// startIndexRead decodes the index at path in the background, so that it
// is read beside the graph's edges (the index of a million-vertex grid
// takes about as long as its edges). For a run of the GPU engine it then
// lays out the sweep the device's ch prepares from (of the reversed
// hierarchy for reverse), made once per hierarchy, while the graph loads.
func startIndexRead(path string, gpu, reverse bool) *indexRead {
	ir := &indexRead{done: make(chan struct{})}
	go func() {
		f, err := os.Open(path)
		if err == nil {
			ir.h, err = hierarchy.Decode(f)
			f.Close()
		}
		ir.err = err
		close(ir.done)
		if err == nil && gpu {
			h := ir.h
			if reverse {
				h = h.Reverse()
			}
			hierarchy.NewSweep(h) // its error is PrepareCH's to report
		}
	}()
	return ir
}

// startIndexFlag is startIndexRead for the run's --index, nil without one
// or where --algo does not use it (readIndexFlag says so).
func startIndexFlag(c *cli.Context, opt pipeline.Options) *indexRead {
	path := c.String("index")
	if path == "" || (opt.Algorithm != pipeline.Auto && opt.Algorithm != pipeline.CH) {
		return nil
	}
	return startIndexRead(path, opt.Engine == "gpu", opt.Reverse)
}
