// Command pathctl computes shortest paths on graphs stored as Arrow,
// Parquet, CSV or DIMACS edge tables, on a GPU where one is usable and on
// every CPU core otherwise. Run `pathctl help` for the commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"

	"github.com/pathctl/pathctl/internal/trace"
)

func main() {
	// Lazy module loading (CUDA 11.7+ drivers, the default of Linux drivers
	// since 12.2) loads a kernel's code when it is first resolved, and the
	// GPU engine resolves each kernel on its first launch: the device opens
	// without loading the kernels a run does not launch. The driver reads
	// the variable at cuInit; a value the user set is kept.
	if _, set := os.LookupEnv("CUDA_MODULE_LOADING"); !set {
		os.Setenv("CUDA_MODULE_LOADING", "LAZY")
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	outputs := &outputPaths{}
	quitOnSignal(outputs, os.Stderr, os.Exit)
	if os.Getenv("PATHCTL_TRACE") == "1" {
		trace.Enable() // the timeline of each step on stderr (internal/trace)
	}
	stopProfile := startCPUProfile(os.Getenv("PATHCTL_CPUPROFILE"), os.Stderr)
	code := mainWith(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr, startOptions{exits: true, outputs: outputs})
	stopProfile()
	if code == 0 && os.Getenv(doneLineEnv) == "1" {
		// Everything is written and closed: what is left is the exit,
		// where the driver tears a device's state down (0.12 s on an
		// H100), which the caller need not wait for.
		fmt.Fprintln(os.Stderr, doneLine)
	}
	stop()
	os.Exit(code)
}

// The Python package sets PATHCTL_DONE_LINE=1 for its runs: a run that
// succeeded then prints doneLine last on stderr, before the exit, and the
// package reads a result written into a memfd or its own memory as soon as
// it sees the line, reaping the process in the background.
const (
	doneLineEnv = "PATHCTL_DONE_LINE"
	doneLine    = "pathctl: done"
)

// startCPUProfile writes a CPU profile of the whole process to path (the
// environment variable PATHCTL_CPUPROFILE, for finding where a run's time
// goes on a machine without other tools; `go tool pprof -top FILE` reads
// it). An empty path, or one that cannot be created, profiles nothing;
// the latter says so.
func startCPUProfile(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathctl: note: PATHCTL_CPUPROFILE: %v; not profiling\n", err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
