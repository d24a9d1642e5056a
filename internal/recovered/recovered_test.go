package recovered

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func indexPastEnd(s []int, i int) int { return s[i] }

func TestCatch(t *testing.T) {
	run := func() (err error) {
		defer Catch(&err)
		indexPastEnd(nil, 3)
		return nil
	}
	err := run()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want a recovered panic", err)
	}
	if !strings.Contains(err.Error(), "index out of range [3] with length 0") {
		t.Errorf("message %q does not name the panic", err)
	}
	if f := e.FirstFrame(); !strings.Contains(f, "indexPastEnd") {
		t.Errorf("first frame %q, want indexPastEnd; stack:\n%s", f, e.Stack)
	}
}

// TestRepanic checks that a worker's panic reaches its caller's Catch with
// the worker's stack, and that the other workers finish.
func TestRepanic(t *testing.T) {
	run := func() (err error, finished int) {
		defer Catch(&err)
		var p Panic
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := range 4 {
			wg.Go(func() {
				defer p.Keep()
				if w == 2 {
					indexPastEnd(nil, w)
				}
				mu.Lock()
				finished++
				mu.Unlock()
			})
		}
		wg.Wait()
		p.Repanic()
		return nil, finished
	}
	err, _ := run()
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Stack, "indexPastEnd") {
		t.Fatalf("err = %v, want the worker's panic with its stack", err)
	}
	var p Panic
	p.Repanic() // nothing kept: no panic
}
