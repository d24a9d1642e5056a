package devices

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/pipeline"
)

// TestStatsInBlockOrder runs stats on a fake device whose runner orders
// the sources at random (graph.SourceOrderer, as the GPU runner does by
// the graph): the device sees the sources out of order, and the rows come
// out as the CPU engine's, in the caller's order, with and without chosen
// sources, on a device that reduces the stats itself or not. A pairs run
// is never reordered, nor a run on two devices but to put their hubs
// first (hubOrderer).
func TestStatsInBlockOrder(t *testing.T) {
	g := devicesTestGraph(t, 7, 150, 600)
	defer g.Close()
	some := []string{"149", "3", "77", "12", "140", "5", "6", "90", "100", "31", "32", "33"}
	for _, c := range []struct {
		name    string
		layout  arrowio.Layout
		sources []string
		devices []int
		hubs    bool
	}{
		{"stats/every", arrowio.LayoutStats, nil, []int{1}, false},
		{"stats/some", arrowio.LayoutStats, some, []int{1}, false},
		{"pairs/every", arrowio.LayoutPairs, nil, []int{1}, false},
		{"stats/two-devices", arrowio.LayoutStats, nil, []int{0, 1}, false},
		{"stats/two-devices-hubs", arrowio.LayoutStats, nil, []int{0, 1}, true},
		{"pairs/two-devices-hubs", arrowio.LayoutPairs, nil, []int{0, 1}, true},
	} {
		for _, stats := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stats-on-device=%v", c.name, stats), func(t *testing.T) {
				want, err := collectText(t, g, pipeline.Options{Query: pipeline.Query{Layout: c.layout, Sources: c.sources}, Resources: pipeline.Resources{Engine: "cpu"}})
				if err != nil {
					t.Fatal(err)
				}
				devs := []*fakeDevice{newFakeDevice(), newFakeDevice()}
				for i, d := range devs {
					d.stats, d.scramble, d.hubsFirst = stats, uint64(11+i), c.hubs
				}
				opt := pipeline.Options{Query: pipeline.Query{Layout: c.layout, Sources: c.sources}, Resources: pipeline.Resources{Engine: "gpu", Devices: c.devices, Driver: fakeDevices(devs...), MaxBlock: 5}}
				got, err := collectText(t, g, opt)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("stats run in block order differ from the CPU engine's:\n%s", firstDiff(got, want))
				}
				if len(devs[1].seen()) == 0 {
					t.Fatal("the fake device computed nothing")
				}
				if c.sources != nil {
					return // chosen sources come out of order as given
				}
				reordered := devs[0].unsorted.Load() || devs[1].unsorted.Load()
				if want := c.layout == arrowio.LayoutStats && (len(c.devices) == 1 || c.hubs); reordered != want {
					t.Errorf("%s run on %d devices: the devices saw sources out of order: %v, want %v", c.layout, len(c.devices), reordered, want)
				}
			})
		}
	}
}

// TestDevicesShareLine checks the --verbose line of a run on several
// devices: each device named, with the sources it computed (adding up to
// every source) and when its last chunk was done.
func TestDevicesShareLine(t *testing.T) {
	g := devicesTestGraph(t, 9, 120, 500)
	defer g.Close()
	for _, layout := range []arrowio.Layout{arrowio.LayoutStats, arrowio.LayoutPairs} {
		devs := gateAll(newFakeDevice(), newFakeDevice())
		var log strings.Builder
		opt := pipeline.Options{Query: pipeline.Query{Layout: layout}, Resources: pipeline.Resources{Engine: "gpu", Devices: []int{0, 1}, Driver: fakeDevices(devs...), MaxBlock: 16}, Log: &log}
		if _, err := collectText(t, g, opt); err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`device gpu (\d): (\d+) sources in (\d+) chunks, the last done at [0-9.]+[mµn]?s`)
		found := re.FindAllStringSubmatch(log.String(), -1)
		if len(found) != 2 {
			t.Fatalf("%s: %d device shares in the log, want 2:\n%s", layout, len(found), log.String())
		}
		total := 0
		for i, m := range found {
			k, _ := strconv.Atoi(m[2])
			if m[1] != strconv.Itoa(i) || k == 0 {
				t.Errorf("%s: share %q: want device %d with some sources", layout, m[0], i)
			}
			total += k
		}
		if total != g.NumVertices() {
			t.Errorf("%s: the devices computed %d sources, want %d", layout, total, g.NumVertices())
		}
	}
}

// TestStatsRunSized checks that a stats run on device runners that keep
// rows beside their blocks (graph.StatsRunSizer) tells every device the
// run's source count and its budget before the blocks: the device's own,
// or where the caller bounds the blocks (MaxBlock), less. Other layouts
// tell nothing.
func TestStatsRunSized(t *testing.T) {
	g := devicesTestGraph(t, 9, 150, 600)
	defer g.Close()
	n := int64(g.NumVertices())
	const budget = 1 << 30
	for _, c := range []struct {
		name     string
		layout   arrowio.Layout
		devices  []int
		maxBlock int
	}{
		{"stats/one", arrowio.LayoutStats, []int{1}, 0},
		{"stats/two", arrowio.LayoutStats, []int{0, 1}, 0},
		{"stats/two-small-blocks", arrowio.LayoutStats, []int{0, 1}, 5},
		{"pairs/two", arrowio.LayoutPairs, []int{0, 1}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			devs := []*fakeDevice{newFakeDevice(), newFakeDevice()}
			for _, d := range devs {
				d.stats, d.budget = true, budget
			}
			opt := pipeline.Options{Query: pipeline.Query{Layout: c.layout}, Resources: pipeline.Resources{Engine: "gpu", Devices: c.devices, Driver: fakeDevices(devs...), MaxBlock: c.maxBlock}}
			if _, err := collectText(t, g, opt); err != nil {
				t.Fatal(err)
			}
			for _, i := range c.devices {
				sized := devs[i].sized
				if c.layout != arrowio.LayoutStats {
					if len(sized) != 0 {
						t.Errorf("device %d sized for a %s run: %v", i, c.layout, sized)
					}
					continue
				}
				if len(sized) != 1 || sized[0][0] != n {
					t.Fatalf("device %d sized %v, want once for %d sources", i, sized, n)
				}
				if b := sized[0][1]; b <= 0 || b > budget || (c.maxBlock > 0) != (b < budget) {
					t.Errorf("device %d sized for a budget of %d (device's %d, blocks of at most %d)", i, b, int64(budget), c.maxBlock)
				}
			}
		})
	}
}
