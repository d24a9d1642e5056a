package pipeline

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestOpenEarlyRelease checks the CLI's one call for the devices opened
// beside the read: OpenEarly opens the first device where the rule says
// so (and leaves an opening the caller set alone), marks it for the exit
// after ExitAfter, and Release ends what no graph took, so that a take
// after it fails.
func TestOpenEarlyRelease(t *testing.T) {
	cpuOpt := LoadOptions{Engine: "cpu"}
	if e := OpenEarly(&cpuOpt, 1<<30); cpuOpt.Device != nil || cpuOpt.OtherDevices != nil {
		t.Errorf("engine cpu: OpenEarly set %v, %v; want nothing opened", cpuOpt.Device, cpuOpt.OtherDevices)
	} else {
		e.Release()
	}
	for _, exits := range []bool{false, true} {
		opt := LoadOptions{Engine: "gpu", Devices: []int{0}, ExitAfter: exits}
		e := OpenEarly(&opt, 1<<30)
		if opt.Device == nil {
			t.Fatalf("exits %v: engine gpu: no opening", exits)
		}
		if opt.OtherDevices != nil {
			t.Errorf("exits %v: one device: other devices opened", exits)
		}
		opt.Device.mu.Lock()
		leaves := opt.Device.exiting
		opt.Device.mu.Unlock()
		if leaves != exits {
			t.Errorf("exits %v: the opening leaves its engine to the exit: %v", exits, leaves)
		}
		e.Release()
		if e, _, _, err := opt.Device.take(); !errors.Is(err, errOpeningTaken) {
			if e != nil {
				e.Close()
			}
			t.Errorf("exits %v: take after Release: %v, want errOpeningTaken", exits, err)
		}
		e.Release() // twice: nothing more
	}
	// An opening the caller began (at process start) is the caller's.
	began := OpenDeviceWith(func() (graph.GPUDevice, error) { return nil, errors.New("fake: no device") })
	defer began.GiveUp()
	opt := LoadOptions{Engine: "gpu", Device: began}
	OpenEarly(&opt, 1<<30).Release()
	if opt.Device != began {
		t.Errorf("OpenEarly replaced the caller's opening")
	}
	if began.mu.Lock(); began.taken {
		t.Errorf("Release ended the caller's opening")
	}
	began.mu.Unlock()
}

// TestGraphRelease checks that Release on a graph without a device, left
// to the exit or not, does nothing but succeed.
func TestGraphRelease(t *testing.T) {
	for _, exits := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 19))
		g, err := LoadGraph(randomTable(rng, 20, 40, testgraphs.Int), LoadOptions{ExitAfter: exits})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Release(); err != nil || g.HoldsDevice() {
			t.Errorf("exits %v: Release = %v, holds a device %v", exits, err, g.HoldsDevice())
		}
	}
}
