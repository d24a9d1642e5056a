package main

// Signals. SIGINT (Ctrl-C), SIGTERM and SIGHUP (a closed terminal or SSH
// session; unless ignored from the start, as under nohup) cancel the
// command's context: a run stops at its next block or batch, its writers
// remove their temporary files, and the process exits 130. SIGQUIT is the
// signal for a stack dump, sent where a run seems stuck: Go's own handler
// dumps and exits at once, leaving every temporary output behind.
// quitOnSignal removes them instead (those of the outputs the command
// registered), dumps every goroutine's stack to stderr, and exits 131
// (128 + SIGQUIT), without waiting for the run to stop.

import (
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/pathctl/pathctl/arrowio"
)

// stopSignals are the signals that cancel the command's context (main's
// signal.NotifyContext). SIGHUP is left out where the process started with
// it ignored (nohup, trap "" HUP in a shell): notifying it would install a
// handler and undo that, and the command is meant to outlive its terminal.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// outputPaths are the result files a command is writing, whose temporary
// files a SIGQUIT removes. The zero value is ready; a nil *outputPaths
// (Main called by tests) records nothing.
type outputPaths struct {
	mu    sync.Mutex
	paths []string
}

// add records path ("" and "-" are ignored) before its writer is created.
func (o *outputPaths) add(path string) {
	if o == nil || path == "" || path == "-" {
		return
	}
	o.mu.Lock()
	o.paths = append(o.paths, path)
	o.mu.Unlock()
}

// removeTemporaries removes the temporary files of every recorded path
// (arrowio.RemoveTemporaries).
func (o *outputPaths) removeTemporaries() {
	if o == nil {
		return
	}
	o.mu.Lock()
	paths := append([]string(nil), o.paths...)
	o.mu.Unlock()
	for _, p := range paths {
		arrowio.RemoveTemporaries(p)
	}
}

// quitOnSignal handles SIGQUIT for the process's life: the temporary files
// of outputs are removed, the goroutines dumped to stderr as a panic would
// (debug level 2), the temporaries removed again (a writer may have
// created one meanwhile), and exit called with exitQuit.
func quitOnSignal(outputs *outputPaths, stderr io.Writer, exit func(int)) {
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGQUIT)
	go func() {
		<-quit
		outputs.removeTemporaries()
		io.WriteString(stderr, "pathctl: SIGQUIT: temporary output removed; goroutines:\n")
		pprof.Lookup("goroutine").WriteTo(stderr, 2)
		outputs.removeTemporaries()
		exit(exitQuit)
	}()
}
