package main

import (
	"context"
	"io"
)

// exitWithStdin returns a context that is cancelled, beside ctx, when
// stdin reaches its end or fails: `serve --exit-with-stdin` stops (as on
// SIGTERM) once the process that started it with a pipe on stdin is gone,
// however it died. pathctl.load in the Python package starts its engine
// process so, keeping the pipe's write end; the kernel closes it when
// Python exits, SIGKILL included. Whatever arrives on stdin is discarded.
func exitWithStdin(ctx context.Context, stdin io.Reader) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		_, _ = io.Copy(io.Discard, stdin)
	}()
	return ctx
}
