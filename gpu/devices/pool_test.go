package devices

import (
	"errors"
	"testing"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// TestNewGPUPool checks when a server gets a pool: several devices, or one
// other than device 0.
func TestNewGPUPool(t *testing.T) {
	hooks := func(n int) Driver { return fakeDevices(make([]*fakeDevice, n)...) }
	for _, c := range []struct {
		devices []int
		count   int
		size    int // 0: no pool
	}{
		{nil, 1, 0}, {nil, 0, 0}, {nil, 3, 3}, {[]int{0}, 4, 0}, {[]int{1}, 4, 1}, {[]int{0, 0}, 1, 2},
	} {
		p := hooks(c.count).newPool(c.devices)
		switch {
		case c.size == 0 && p != nil:
			t.Errorf("devices %v of %d: a pool of %d", c.devices, c.count, p.Size())
		case c.size > 0 && (p == nil || p.Size() != c.size):
			t.Errorf("devices %v of %d: pool %v, want %d devices", c.devices, c.count, p, c.size)
		}
	}
	if err := (*Pool)(nil).Close(); err != nil {
		t.Errorf("closing no pool: %v", err)
	}
}

// TestGPUPoolHandsOutIdleDevices checks that runs get different devices,
// that a run waits while every device is busy, and that Close waits for
// the runs and refuses later ones.
func TestGPUPoolHandsOutIdleDevices(t *testing.T) {
	devs := []*fakeDevice{newFakeDevice(), newFakeDevice()}
	p := fakeDevices(devs...).newPool([]int{0, 1})
	a, releaseA, err := p.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	b, releaseB, err := p.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two runs got the same device")
	}
	got := make(chan graph.Engine)
	go func() {
		e, release, err := p.Acquire()
		if err != nil {
			t.Error(err)
		}
		got <- e
		release()
	}()
	select {
	case <-got:
		t.Fatal("a third run got a device while both were busy")
	case <-time.After(50 * time.Millisecond):
	}
	releaseB()
	if e := <-got; e != b {
		t.Error("the waiting run did not get the device released")
	}
	closed := make(chan error)
	go func() { closed <- p.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while a run held a device")
	case <-time.After(50 * time.Millisecond):
	}
	releaseA()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Acquire(); !errors.Is(err, errPoolClosed) {
		t.Errorf("acquire after Close: %v", err)
	}
}

// TestGPUPoolRunsEachQueryOnOneDevice runs queries through a pool: each
// runs whole on one device and equals the CPU engine's result; a pool
// whose devices do not open sends auto to the CPU and fails gpu.
func TestGPUPoolRunsEachQueryOnOneDevice(t *testing.T) {
	g := devicesTestGraph(t, 5, 100, 500)
	defer g.Close()
	want, err := collectText(t, g, pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}, Resources: pipeline.Resources{Engine: "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	devs := []*fakeDevice{newFakeDevice(), newFakeDevice()}
	p := fakeDevices(devs...).newPool(nil)
	defer p.Close()
	for range 3 {
		for _, d := range devs {
			d.chunks = nil
		}
		got, err := collectText(t, g, pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}, Resources: pipeline.Resources{Engine: "gpu", GPUs: p, MaxBlock: 10}})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("pooled run differs:\n%s", firstDiff(got, want))
		}
		if a, b := len(devs[0].seen()), len(devs[1].seen()); (a == 0) == (b == 0) {
			t.Errorf("a query ran %d blocks on device 0 and %d on device 1, want every block on one", a, b)
		}
	}

	broken := Driver{open: func(d int) (graph.Engine, error) { return nil, errors.New("fake: no such device") }}.newPool([]int{0, 1})
	if _, err := collectText(t, g, pipeline.Options{Resources: pipeline.Resources{Engine: "gpu", GPUs: broken}}); !errors.Is(err, pipeline.ErrUnavailable) {
		t.Errorf("gpu run on a pool that does not open: %v, want ErrUnavailable", err)
	}
	if _, err := collectText(t, g, pipeline.Options{Resources: pipeline.Resources{Engine: "auto", GPUs: broken}}); err != nil {
		t.Errorf("auto run on a pool that does not open: %v, want the CPU's result", err)
	}
}
