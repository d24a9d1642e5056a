package main

import (
	"flag"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// The device opens at process start, before the flags are parsed and the
// input read, where the command line alone says that the run may use the
// GPU: creating the context and loading the kernels (about 220 ms on an
// H100) then overlap everything before the CSR build instead of starting
// with the read. Where the command line cannot say (a sources file, flags
// this pre-parse does not follow), the device opens as before, beside the
// read, once the flags are parsed (earlyDevices.Begin).

// startOptions are what main knows of the process that tests calling Main
// do not.
type startOptions struct {
	// exits says that the process exits as soon as Main returns: a GPU
	// context is then left to the exit to release (gpu.Engine.Abandon)
	// instead of torn down piece by piece after the run.
	exits bool
	// openDevice opens the device at process start; nil opens device 0.
	openDevice func() (graph.GPUDevice, error)
	// outputs records the result files written, for quitOnSignal.
	outputs *outputPaths
}

// gpuCommands are the commands whose graph may be built and run on the GPU
// (a LoadGraph with the engine flag): bench and serve open their engines
// themselves, and the rest run on the CPU.
var gpuCommands = map[string]bool{"run": true, "sssp": true, "bfs": true, "path": true}

// opensAtStart reports whether args, as prepareArgs returned them, ask for
// a run whose graph LoadGraph may build on the GPU (pipeline.OpensEarly):
// run, sssp, bfs or path, without --help, with an engine other than cpu,
// and with sources many enough for auto (or every source, on an input
// large enough or of unknown size). It parses the command's flags on their
// own, without running anything; any flag it cannot follow says no.
func opensAtStart(app *cli.App, args []string) bool {
	if len(args) < 2 || !gpuCommands[args[1]] {
		return false
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.Name == args[1] {
			cmd = c
		}
	}
	if cmd == nil {
		return false
	}
	set := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range cmd.Flags {
		if f.Apply(set) != nil {
			return false
		}
	}
	// prepareArgs keeps runs of one-letter flags (-qv) whole.
	var tokens []string
	for _, a := range args[2:] {
		if names, ok := shortFlags(cmd, a); ok && len(names) > 1 && !strings.HasPrefix(a, "--") {
			for _, n := range names {
				tokens = append(tokens, "-"+n)
			}
			continue
		}
		tokens = append(tokens, a)
	}
	// -h and --help are not among the flags: asking for help fails here.
	if set.Parse(tokens) != nil || set.NArg() != 1 {
		return false
	}
	sources := 0 // every vertex
	switch cmd.Name {
	case "sssp", "bfs", "path":
		sources = 1
	case "run":
		if set.Lookup("sources-file").Value.String() != "" {
			return false // counted once the flags are parsed
		}
		if list := set.Lookup("sources").Value.String(); list != "" {
			ids, err := parseSources(list, "")
			if err != nil {
				return false
			}
			sources = len(ids)
		}
	}
	engine := set.Lookup("engine").Value.String()
	return pipeline.OpensEarly(pipeline.LoadOptions{Engine: engine, Sources: sources}, inputBytes(set.Arg(0)))
}
