package devices

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// deviceKinds are the fake devices' kinds the block tests run: Run only,
// AsyncRunner, StatsRunner, and both (the GPU's runner).
var deviceKinds = []struct {
	name         string
	async, stats bool
}{{"run", false, false}, {"async", true, false}, {"stats", false, true}, {"async-stats", true, true}}

// fakeDevicesOf returns n fake devices of a kind, each with budget
// bytes, behind one start gate (each computes part of the run).
func fakeDevicesOf(n int, async, stats bool, budget int64) []*fakeDevice {
	devs := make([]*fakeDevice, n)
	for i := range devs {
		devs[i] = newFakeDevice()
		devs[i].async, devs[i].stats, devs[i].budget = async, stats, budget
	}
	return devs
}

// writeRun runs opt on g and writes the result through the writer of
// pathctl run (an Arrow IPC file), returning the file's bytes.
func writeRun(t *testing.T, g *pipeline.Graph, opt pipeline.Options, name string) []byte {
	t.Helper()
	q, err := pipeline.Prepare(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	schema := q.Schema()
	path := filepath.Join(t.TempDir(), name+".arrow")
	w, err := arrowio.CreateResult(path, schema, arrowio.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Run(t.Context(), w.Write); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// perSource is the bytes per source of a fake device's runner for opt on g.
func perSource(t *testing.T, g *pipeline.Graph, opt pipeline.Options) int64 {
	t.Helper()
	algo := opt.Algorithm
	if algo == "" {
		algo = graph.Auto
	}
	r, err := newFakeDevice().Prepare(t.Context(), g.CSR, graph.Request{Algorithm: algo, WithPredecessors: opt.WithPredecessors})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.BytesPerSource()
}

// oneFakeDevice is the options of a run on one fake device alone, through
// the one-device path (a server's pool of one device hands it over as it
// is, as the GPU engine of a one-device run).
func oneFakeDevice(opt pipeline.Options, dev *fakeDevice) pipeline.Options {
	opt.Engine = "gpu"
	opt.GPUs = fakeDevices(newFakeDevice(), dev).newPool([]int{1})
	return opt
}

// TestDevicesFilesMatchOneDevice writes the stats, matrix and pairs
// layouts of one graph from one fake device and from two and three,
// through the writer of pathctl run, and checks that the files have the
// same bytes: the record batches are cut at the host blocks of one device
// whatever device computed them. The blocks are sized by the devices'
// budgets, as on the GPU, to 37 sources (a validity bitmap that does not
// start on a byte).
func TestDevicesFilesMatchOneDevice(t *testing.T) {
	g := devicesTestGraph(t, 7, 300, 1800)
	defer g.Close()
	layouts := []pipeline.Options{
		{Query: pipeline.Query{Layout: arrowio.LayoutStats}},
		{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}},
		{Query: pipeline.Query{Layout: arrowio.LayoutPairs}},
		{Query: pipeline.Query{Layout: arrowio.LayoutPairs, WithPredecessors: true, Algorithm: "dijkstra"}},
	}
	for _, kind := range deviceKinds {
		for _, base := range layouts {
			name := fmt.Sprintf("%s/%s/pred=%v", kind.name, base.Layout, base.WithPredecessors)
			t.Run(name, func(t *testing.T) {
				// The budget of 37 sources in the blocks one device keeps in flight.
				inFlight := int64(2)
				switch {
				case kind.stats && base.Layout == arrowio.LayoutStats:
					inFlight = 1
				case kind.async:
					inFlight = 3
				}
				budget := inFlight * 37 * perSource(t, g, base)
				one := fakeDevicesOf(1, kind.async, kind.stats, budget)[0]
				want := writeRun(t, g, oneFakeDevice(base, one), "one")
				if seen := one.seen(); len(seen) < 8 || slices.Max(seen) != 37 {
					t.Fatalf("one device ran blocks %v, want blocks of 37", seen)
				}
				for _, n := range []int{2, 3} {
					devs := gateAll(fakeDevicesOf(n, kind.async, kind.stats, budget)...)
					opt := base
					opt.Engine, opt.Devices, opt.Driver = "gpu", []int{0, 1, 2}[:n], fakeDevices(devs...)
					got := writeRun(t, g, opt, fmt.Sprint(n))
					if !bytes.Equal(got, want) {
						t.Errorf("%d devices wrote %d bytes that differ from one device's %d", n, len(got), len(want))
					}
					for i, d := range devs {
						if len(d.seen()) == 0 {
							t.Errorf("%d devices: device %d computed nothing", n, i)
						}
					}
				}
			})
		}
	}
}

// TestDevicesComputeWholeBlocks checks, on two equal fake devices, that
// every block a device computes has the size one device alone computes
// (the host block), but for the last block of the run (nine blocks on two
// devices: the last round's one block, cut into a range per device,
// TailCuts): a
// device that got a cut of every block would lose the batched kernel's
// block size (and with it its phases) on the GPU.
func TestDevicesComputeWholeBlocks(t *testing.T) {
	g := devicesTestGraph(t, 8, 400, 2400)
	defer g.Close()
	for _, kind := range deviceKinds {
		for _, layout := range []arrowio.Layout{arrowio.LayoutStats, arrowio.LayoutMatrix} {
			t.Run(kind.name+"/"+string(layout), func(t *testing.T) {
				inFlight := int64(2)
				switch {
				case kind.stats && layout == arrowio.LayoutStats:
					inFlight = 1
				case kind.async:
					inFlight = 3
				}
				const size = 45
				budget := inFlight * size * perSource(t, g, pipeline.Options{})
				one := fakeDevicesOf(1, kind.async, kind.stats, budget)[0]
				writeRun(t, g, oneFakeDevice(pipeline.Options{Query: pipeline.Query{Layout: layout}}, one), "one")
				blocks := one.seen() // in the order they started
				slices.Sort(blocks)
				last := 400 - 400/size*size
				if want := append([]int{last}, slices.Repeat([]int{size}, 400/size)...); !slices.Equal(blocks, want) {
					t.Fatalf("one device ran blocks %v, want %v", blocks, want)
				}

				devs := gateAll(fakeDevicesOf(2, kind.async, kind.stats, budget)...)
				opt := pipeline.Options{Query: pipeline.Query{Layout: layout}, Resources: pipeline.Resources{Engine: "gpu", Devices: []int{0, 1}, Driver: fakeDevices(devs...)}}
				writeRun(t, g, opt, "two")
				var whole, rest int
				var all []int
				for i, d := range devs {
					seen := d.seen()
					if len(seen) == 0 {
						t.Errorf("device %d computed nothing", i)
					}
					for _, rows := range seen {
						all = append(all, rows)
						if rows == size {
							whole++
						} else {
							rest += rows
						}
					}
				}
				// The last block is whole, or cut: its parts add up to it.
				if whole == len(blocks) && last == size {
					return
				}
				if whole != len(blocks)-1 || rest != last {
					slices.Sort(all)
					t.Errorf("two devices computed blocks %v; want %d of %d sources and the last (%d) whole or shared", all, len(blocks)-1, size, last)
				}
			})
		}
	}
}

// TestDevicesResidentBlocks runs the matrix and pairs layouts on fake
// devices that compute device blocks (graph.ResidentRunner, as the GPU's
// runner): each device computes a part of every device block as large as
// one device alone computes (rounded down to a multiple of 8), the files
// have one device's bytes, and a device that fails computing its part is
// left out, named, while the others finish the run.
func TestDevicesResidentBlocks(t *testing.T) {
	g := devicesTestGraph(t, 9, 400, 2400)
	defer g.Close()
	budget := 3 * 45 * perSource(t, g, pipeline.Options{}) // host blocks of 45, device blocks of 135
	resident := func(n int) []*fakeDevice {
		devs := fakeDevicesOf(n, true, false, budget)
		for _, d := range devs {
			d.resident = true
		}
		return devs
	}
	for _, layout := range []arrowio.Layout{arrowio.LayoutMatrix, arrowio.LayoutPairs} {
		t.Run(string(layout), func(t *testing.T) {
			one := resident(1)[0]
			want := writeRun(t, g, oneFakeDevice(pipeline.Options{Query: pipeline.Query{Layout: layout}}, one), "one")
			if seen := one.seen(); !slices.Equal(seen, []int{135, 135, 130}) {
				t.Fatalf("one device computed device blocks %v, want [135 135 130]", seen)
			}
			devs := resident(2)
			opt := pipeline.Options{Query: pipeline.Query{Layout: layout}, Resources: pipeline.Resources{Engine: "gpu", Devices: []int{0, 1}, Driver: fakeDevices(devs...)}}
			if got := writeRun(t, g, opt, "two"); !bytes.Equal(got, want) {
				t.Errorf("two devices wrote %d bytes that differ from one device's %d", len(got), len(want))
			}
			// Device blocks of whole host blocks, up to 2 × 128 sources:
			// 225 (parts of 120 and 105), then 175 (88 and 87).
			for i, want := range [][]int{{120, 88}, {105, 87}} {
				if seen := devs[i].seen(); !slices.Equal(seen, want) {
					t.Errorf("device %d computed parts %v, want %v", i, seen, want)
				}
			}

			devs = resident(3)
			devs[1].failAfter, devs[1].failWith = 0, errors.New("fake: CUDA_ERROR_ECC_UNCORRECTABLE")
			var notice bytes.Buffer
			opt = pipeline.Options{Query: pipeline.Query{Layout: layout}, Resources: pipeline.Resources{Engine: "gpu", Devices: []int{0, 1, 2}, Driver: fakeDevices(devs...)}, Notice: &notice}
			if got := writeRun(t, g, opt, "three"); !bytes.Equal(got, want) {
				t.Errorf("three devices, one failing, wrote %d bytes that differ from one device's %d", len(got), len(want))
			}
			if n := len(devs[1].seen()); n != 1 {
				t.Errorf("failed device ran %d blocks, want 1 (failed, none after)", n)
			}
			if !strings.Contains(notice.String(), "device gpu 1") || !strings.Contains(notice.String(), "ECC") {
				t.Errorf("notice %q does not name the device and its error", notice.String())
			}
		})
	}
}
