package devices

import (
	"errors"
	"testing"
	"time"

	"github.com/pathctl/pathctl/graph"
)

// TestEarly checks the CLI's one object for the devices opened before the
// graph needs them: nothing opens until asked; OpenFirst begins the first
// device at start and Begin leaves it alone (AtStart says which began
// it); an Early of an exiting process marks its openings for the exit;
// and Release gives up, without waiting, what no graph took, so that a
// Take after it fails.
func TestEarly(t *testing.T) {
	var none *Early
	none.OpenFirst(nil)
	none.Begin(nil)
	none.Release()
	if none.First() != nil || none.Others() != nil || none.AtStart() {
		t.Error("the nil Early opened something")
	}
	for _, exits := range []bool{false, true} {
		e := NewEarly(exits)
		if e.First() != nil || e.Others() != nil {
			t.Fatalf("exits %v: opened before asked", exits)
		}
		release := make(chan struct{})
		opened := 0
		e.OpenFirst(func() (graph.GPUDevice, error) {
			opened++
			<-release
			return nil, errors.New("fake: no device")
		})
		first := e.First()
		e.Begin([]int{0}) // one device: no others, and the first stays
		if e.First() != first || e.Others() != nil || !e.AtStart() {
			t.Errorf("exits %v: Begin after OpenFirst: first replaced %v, others %v, at start %v", exits, e.First() != first, e.Others(), e.AtStart())
		}
		op := first.(*Opening)
		op.mu.Lock()
		leaves := op.exiting
		op.mu.Unlock()
		if leaves != exits {
			t.Errorf("exits %v: the opening leaves its device to the exit: %v", exits, leaves)
		}
		done := make(chan struct{})
		go func() {
			e.Release()
			e.Release() // twice: nothing more
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("exits %v: Release waited for the open", exits)
		}
		if _, _, _, err := first.Take(); !errors.Is(err, graph.ErrOpeningTaken) {
			t.Errorf("exits %v: Take after Release: %v, want ErrOpeningTaken", exits, err)
		}
		close(release)
		<-op.done
		if opened != 1 {
			t.Errorf("exits %v: the first device opened %d times", exits, opened)
		}
	}
}
