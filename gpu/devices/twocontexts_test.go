package devices

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// TestTwoEnginesOneGPU runs the real multi-device path on one GPU: two
// engines on device 0 (--devices 0,0), the second taking the graph from the
// first's device copy, fed from one queue. Every layout (the k nearest
// selected on both devices among them) must equal the
// one-engine run's, row for row, on a graph built on the CPU and on one
// built on the GPU (whose engine is then the first device's).
func TestTwoEnginesOneGPU(t *testing.T) {
	if s := pipeline.GPUStatus(); !s.Available {
		t.Skip("no usable GPU: " + s.Reason)
	}
	rng := rand.New(rand.NewPCG(19, 2))
	cases := []struct {
		name string
		opt  pipeline.Options
	}{
		{"pairs", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs}}},
		{"pairs-pred", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs, WithPredecessors: true, Algorithm: graph.Dijkstra}}},
		{"matrix", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}}},
		{"matrix-delta", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix, Algorithm: graph.Delta}}},
		{"stats", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutStats}}},
		{"matrix-targets-cutoff", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix, Targets: []string{"7", "3", "599"}, Cutoff: 30, HasCutoff: true}}},
		{"bfs-matrix", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix, Algorithm: graph.BFSLevel}}},
		{"k-nearest", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs, K: 5}}},
		{"k-nearest-cutoff", pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutPairs, K: 5, Cutoff: 30, HasCutoff: true}}},
	}
	for _, build := range []string{"cpu", "gpu"} {
		for _, kind := range []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float32} {
			tbl := randomTable(rng, 700, 4000, kind)
			g, err := pipeline.LoadGraph(tbl, pipeline.LoadOptions{Engine: build})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				t.Run(build+"/"+kindName(kind)+"/"+c.name, func(t *testing.T) {
					one := c.opt
					one.Engine, one.Devices, one.MaxBlock = "gpu", []int{0}, 96
					want, err := collectText(t, g, one)
					if err != nil {
						t.Fatal(err)
					}
					var log bytes.Buffer
					two := c.opt
					two.Engine, two.Devices, two.MaxBlock, two.Log = "gpu", []int{0, 0}, 96, &log
					got, err := collectText(t, g, two)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("two engines differ from one:\n%s", firstDiff(got, want))
					}
					if !strings.Contains(log.String(), "2 devices") {
						t.Errorf("log does not show two devices:\n%s", log.String())
					}
					if c.opt.K > 0 && !strings.Contains(log.String(), "the k nearest selected by the engine") {
						t.Errorf("the k nearest not selected on the devices:\n%s", log.String())
					}
				})
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func kindName(k testgraphs.WeightKind) string {
	if k == testgraphs.Int {
		return "int"
	}
	return "float32"
}

// TestTwoEnginesOneGPUFiles writes the stats, matrix and pairs layouts
// through the writer of pathctl run from one engine on device 0 and from
// two (--devices 0,0, fed from one queue; the matrix and pairs in device
// blocks over both), with the blocks' size fixed, and checks that the
// files have the same bytes: the record batches are one device's host
// blocks whichever engine computed them.
func TestTwoEnginesOneGPUFiles(t *testing.T) {
	if s := pipeline.GPUStatus(); !s.Available {
		t.Skip("no usable GPU: " + s.Reason)
	}
	rng := rand.New(rand.NewPCG(19, 3))
	g, err := pipeline.LoadGraph(randomTable(rng, 1500, 9000, testgraphs.Int), pipeline.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, base := range []pipeline.Options{
		{Query: pipeline.Query{Layout: arrowio.LayoutStats}},
		{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}},
		{Query: pipeline.Query{Layout: arrowio.LayoutPairs}},
	} {
		t.Run(string(base.Layout), func(t *testing.T) {
			one := base
			one.Engine, one.Devices, one.MaxBlock = "gpu", []int{0}, 200
			want := writeRun(t, g, one, "one")
			var log bytes.Buffer
			two := base
			two.Engine, two.Devices, two.MaxBlock, two.Log = "gpu", []int{0, 0}, 200, &log
			got := writeRun(t, g, two, "two")
			if !bytes.Equal(got, want) {
				t.Errorf("two engines wrote %d bytes that differ from one engine's %d", len(got), len(want))
			}
			if !strings.Contains(log.String(), "2 devices") {
				t.Errorf("log does not show two devices:\n%s", log.String())
			}
		})
	}
}
