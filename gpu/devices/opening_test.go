package devices

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestOtherDevices checks, with fake openings, that the devices past the
// first (of the list given, or of every device counted) begin to open in
// the background, each once; that take hands each opening over once and
// has none for the first device or one not asked for; and that the
// caller's GiveUp leaves the openings alone once a graph kept them.
func TestOtherDevices(t *testing.T) {
	for _, c := range []struct {
		name    string
		devices []int
		count   int
		want    []int
	}{
		{"every device", nil, 3, []int{1, 2}},
		{"listed", []int{2, 0, 2, 3}, 8, []int{0, 3}},
		{"one device", nil, 1, nil},
	} {
		var mu sync.Mutex
		var opened []int
		open := func(d int) (graph.GPUDevice, error) {
			mu.Lock()
			opened = append(opened, d)
			mu.Unlock()
			return nil, fmt.Errorf("fake open of %d", d)
		}
		o := openOthers(c.devices, func() (int, error) { return c.count, nil }, open)
		o.Keep()
		o.GiveUp() // kept by a graph: nothing
		for _, d := range c.want {
			_, ok, err := o.Take(d)
			if !ok || err == nil || err.Error() != fmt.Sprintf("fake open of %d", d) {
				t.Errorf("%s: take(%d) = %v, %v; want the fake opening's error", c.name, d, ok, err)
			}
			if _, ok, _ := o.Take(d); ok {
				t.Errorf("%s: device %d taken twice", c.name, d)
			}
		}
		first := FirstDevice(c.devices)
		if _, ok, _ := o.Take(first); ok {
			t.Errorf("%s: an opening of the first device %d", c.name, first)
		}
		if _, ok, _ := o.Take(7); ok && !slices.Contains(c.want, 7) {
			t.Errorf("%s: an opening of device 7, not asked for", c.name)
		}
		if err := o.close(); err != nil {
			t.Errorf("%s: close: %v", c.name, err)
		}
		mu.Lock()
		slices.Sort(opened)
		if !slices.Equal(opened, c.want) {
			t.Errorf("%s: opened %v, want %v", c.name, opened, c.want)
		}
		mu.Unlock()
	}

	// No count (no driver): nothing opens, nothing to take.
	o := openOthers(nil, func() (int, error) { return 0, errors.New("no driver") }, func(int) (graph.GPUDevice, error) {
		t.Error("opened a device without a count")
		return nil, nil
	})
	if _, ok, _ := o.Take(1); ok {
		t.Error("an opening without a device count")
	}
	if err := o.Close(); err != nil {
		t.Error(err)
	}
	var none *Others
	none.GiveUp()
	none.LeaveToExit()
	if _, ok, err := none.Take(1); ok || err != nil || none.Close() != nil || none.End(true) != nil || none.End(false) != nil {
		t.Error("the nil Others is not inert")
	}
}
