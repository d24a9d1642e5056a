package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/pipeline"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes, one mapping for every command.
const (
	exitOK          = 0
	exitError       = 1   // anything not below
	exitUsage       = 2   // a bad flag, argument or request
	exitInput       = 3   // bad input data: file, column, row named
	exitUnavailable = 4   // the requested engine cannot run here
	exitNegative    = 5   // negative weights for the algorithm, or a negative cycle
	exitInterrupted = 130 // Ctrl-C, SIGTERM or SIGHUP
	exitQuit        = 131 // SIGQUIT: goroutines dumped (signals.go)
)

// usageError marks errors in how the command was called.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// inputError marks errors in the input data.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }
func (e usageError) Unwrap() error { return e.error }

// exitCode maps an error to the process exit status.
func exitCode(err error) int {
	var ue usageError
	var ie inputError
	switch {
	case err == nil:
		return exitOK
	case pipeline.IsInterrupted(err):
		return exitInterrupted
	case errors.Is(err, pipeline.ErrNegativeWeight), errors.Is(err, pipeline.ErrNegativeCycle):
		return exitNegative
	case errors.Is(err, pipeline.ErrUnavailable):
		return exitUnavailable
	case errors.As(err, &ue), errors.Is(err, pipeline.ErrInvalid), errors.Is(err, arrowio.ErrSameColumn):
		return exitUsage
	case errors.As(err, &ie):
		return exitInput
	}
	return exitError
}

// env is what commands share: the streams and whether stderr is a terminal.
type env struct {
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	stderrIsTTY    bool
	stdoutIsTTY    bool
	// start is when Main began: the wall time of --verbose counts from it.
	start time.Time
	// devices are the GPU engines opened before the graph needs them:
	// since Main began where the command line asked for one (opening.go),
	// else beside the read (buildGraph); exits says that the process
	// exits when Main returns (startOptions).
	devices *earlyDevices
	exits   bool
	// outputs records the result files being written, whose temporary
	// files a SIGQUIT removes (signals.go); nil records nothing.
	outputs *outputPaths
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Main runs the CLI with args and returns the exit status. Tests call it in
// process.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainWith(ctx, args, stdin, stdout, stderr, startOptions{})
}

// mainWith is Main for a process as opt describes it (main's: one that
// exits when it returns).
func mainWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, opt startOptions) int {
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr,
		stderrIsTTY: isTerminal(stderr), stdoutIsTTY: isTerminal(stdout), start: time.Now(), exits: opt.exits,
		outputs: opt.outputs, devices: newEarlyDevices(opt.exits)}
	// What no graph took is given up without waiting: a run on the CPU,
	// or one that failed before, does not wait for a device.
	defer e.devices.Release()
	app := App(e)
	args, err := prepareArgs(app, args)
	if err == nil && opensAtStart(app, args) {
		e.devices.OpenFirst(opt.openDevice)
	}
	if err == nil {
		err = app.RunContext(ctx, args)
	}
	if err == nil {
		return exitOK
	}
	if pipeline.IsInterrupted(err) {
		fmt.Fprintln(stderr, "pathctl: interrupted; "+interruptedOutput(err)) // dataset_space.go
	} else {
		fmt.Fprintf(stderr, "pathctl: %s\n", errorLine(err))
	}
	return exitCode(err)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// App builds the command tree.
func App(e *env) *cli.App {
	app := &cli.App{
		Name:    "pathctl",
		Usage:   "shortest paths on GPU and CPU for graphs in Arrow, Parquet and CSV",
		Version: version,
		Description: "pathctl reads an edge table (columns src, dst and an optional weight) and writes\n" +
			"distances as Arrow record batches: an IPC file, an IPC stream, Parquet or CSV.",
		Writer:    e.stdout,
		ErrWriter: e.stderr,
		Reader:    e.stdin,
		// Errors are printed once by Main with the right exit status.
		ExitErrHandler:         func(*cli.Context, error) {},
		HideHelpCommand:        false,
		UseShortOptionHandling: true,
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageError{err}
		},
		Commands: []*cli.Command{
			runCommand(e),
			ssspCommand(e, "sssp", "shortest paths from one source", pipeline.Auto),
			ssspCommand(e, "bfs", "hop counts from one source (breadth-first search)", pipeline.BFS),
			pathCommand(e),
			genCommand(e),
			verifyCommand(e),
			indexCommand(e),
			infoCommand(e),
			serveCommand(e),
			benchCommand(e),
		},
	}
	onUsageError(app.Commands, app.OnUsageError)
	tidyHelp(app.Commands)
	return app
}

// onUsageError sets f on every command and subcommand: a flag value that
// does not parse is a usage error wherever it is given.
func onUsageError(commands []*cli.Command, f cli.OnUsageErrorFunc) {
	for _, c := range commands {
		c.OnUsageError = f
		onUsageError(c.Subcommands, f)
	}
}
