// Package recovered turns a panic in a goroutine of a request into an
// error of that request, so that a bug reached by one input (a server's
// one query) cannot end the process that serves the others.
//
// A goroutine that runs part of a request defers Catch with its error:
//
//	go func() {
//		var err error
//		defer func() { errc <- err }()
//		defer recovered.Catch(&err)
//		err = work()
//	}()
//
// A goroutine whose caller waits for it (a worker of a parallel loop)
// defers Keep into a Panic and its caller calls Panic.Repanic once it has
// waited, so that the panic reaches the caller's own Catch (or the gRPC
// handler's recover) rather than ending the process from the worker.
package recovered

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// Error is a panic recovered into an error: its message is the panic's
// value, and Stack the goroutine's stack where it panicked.
type Error struct {
	Value any
	Stack string
}

func (e *Error) Error() string {
	return fmt.Sprintf("internal error: panic: %v", e.Value)
}

// FirstFrame is the function the panic happened in, as the stack names
// it (the frame below the last "panic(" line), for a one-line report; ""
// where the stack does not say.
func (e *Error) FirstFrame() string {
	lines := strings.Split(e.Stack, "\n")
	frame := ""
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic(") {
			continue
		}
		frame = ""
		// function and file lines alternate; the runtime's own frames
		// (runtime.goPanicIndex) sit between the panic and its cause
		for j := i + 2; j < len(lines); j += 2 {
			if f := strings.TrimSpace(lines[j]); !strings.HasPrefix(f, "runtime.") {
				frame = f
				break
			}
		}
	}
	return frame
}

// Catch recovers a panic of the goroutine that defers it and stores it in
// *err as an *Error (replacing what *err held). It must be deferred
// directly: recover only stops a panic from a deferred call.
func Catch(err *error) {
	if p := recover(); p != nil {
		*err = asError(p)
	}
}

func asError(p any) *Error {
	if e, ok := p.(*Error); ok { // repanicked from a worker: keep its stack
		return e
	}
	return &Error{Value: p, Stack: string(debug.Stack())}
}

// Panic holds the first panic of a group of workers.
type Panic struct {
	once sync.Once
	err  *Error
}

// Keep recovers a panic of the worker that defers it into p (the first
// one only; the others are dropped). It must be deferred directly.
func (p *Panic) Keep() {
	if v := recover(); v != nil {
		e := asError(v)
		p.once.Do(func() { p.err = e })
	}
}

// Repanic panics again, in the caller's goroutine, with the panic a
// worker kept, if any. Call it once every worker is done.
func (p *Panic) Repanic() {
	if p.err != nil {
		panic(p.err)
	}
}
