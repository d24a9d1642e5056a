package gpu

import (
	"context"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestDevicesList checks that Devices describes every device DeviceCount
// counts.
func TestDevicesList(t *testing.T) {
	n, err := DeviceCount()
	if err != nil {
		t.Skip("no CUDA device: " + err.Error())
	}
	devs, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != n {
		t.Fatalf("Devices lists %d devices, DeviceCount says %d", len(devs), n)
	}
	for i, d := range devs {
		if d.Ordinal != i || d.Name == "" || d.TotalMemory <= 0 || d.ComputeMajor < 7 || d.Multiprocessors <= 0 {
			t.Errorf("device %d: %+v", i, d)
		}
	}
}

// TestPrepareFromSecondEngine opens two engines on device 0 (two worker
// threads on one context, as --devices 0,0 does) and prepares the graph on
// the second from the first's device copy: the second uploads nothing from
// the host, copies the CSR once, and its rows equal the first's and the
// oracle's, for weighted and hop-counting algorithms, on a graph uploaded
// by the first and on one it built (BuildCSRResident).
func TestPrepareFromSecondEngine(t *testing.T) {
	first := openEngine(t)
	second := openEngine(t)
	rng := newSeed(t)
	edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 333, M: 1500, Kind: testgraphs.Int, MinWeight: 0, MaxWeight: 20, Dyadic: true})
	hostBuilt, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deviceBuilt, err := first.BuildCSRResident(context.Background(), edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sources := pickSources(rng, hostBuilt.NumVertices)
	want := oracle(t, hostBuilt, sources, ref.Dijkstra[int32])
	hops := oracle(t, hostBuilt, sources, ref.BFS)
	for _, c := range []struct {
		name string
		g    *graph.CSR
	}{{"uploaded", hostBuilt}, {"built-on-device", deviceBuilt}} {
		for _, alg := range []graph.Algorithm{graph.Dijkstra, graph.Edge, graph.BFSLevel, graph.Auto} {
			t.Run(c.name+"/"+string(alg), func(t *testing.T) {
				req := graph.Request{Algorithm: alg}
				r1, err := first.Prepare(context.Background(), c.g, req)
				if err != nil {
					t.Fatal(err)
				}
				defer r1.Close()
				uploads, copies := second.GraphUploads(), second.CSRCopies()
				r2, err := second.PrepareFrom(context.Background(), c.g, req, r1, Tuning{})
				if err != nil {
					t.Fatal(err)
				}
				defer r2.Close()
				if got := second.GraphUploads() - uploads; got != 0 {
					t.Errorf("the second engine uploaded the graph %d times", got)
				}
				if got := second.CSRCopies() - copies; got != 1 {
					t.Errorf("the second engine copied the graph %d times, want 1", got)
				}
				b1 := runBlocks(t, r1, c.g.NumVertices, sources, 64, false)
				b2 := runBlocks(t, r2, c.g.NumVertices, sources, 64, false)
				if !sameBlock(b1, b2, false) {
					t.Fatal("rows of the engine that copied the graph differ from the first's")
				}
				if alg == graph.BFSLevel {
					checkRows(t, c.g, b2, hops, nil)
				} else {
					checkRows(t, c.g, b2, want, nil)
				}
			})
		}
	}
}
