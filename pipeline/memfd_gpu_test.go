//go:build linux

package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sys/unix"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// runMatrixToMemfd runs the matrix layout of g with opt into a new memfd
// written with writes (as `pathctl run` does for the Python package), and
// returns the file's bytes.
func runMatrixToMemfd(t *testing.T, g *Graph, opt Options, writes string) []byte {
	t.Helper()
	fd, err := unix.MemfdCreate("pathctl-memfd-gpu", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("no memfd here: %v", err)
	}
	f := os.NewFile(uintptr(fd), "memfd")
	defer f.Close()
	opt.Layout = arrowio.LayoutMatrix
	q, err := Prepare(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	w, err := arrowio.CreateResult(fmt.Sprintf("/proc/self/fd/%d", fd), q.Schema(),
		arrowio.WriteOptions{Format: "arrow", MatrixRows: len(q.Sources()), MatrixWrites: writes})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Run(context.Background(), w.Write); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGPUMatrixToMemfd runs the matrix layout on the GPU into a memfd as
// the CLI writes it for a GPU run (MatrixWritesPrefill: the pages
// populated while the device computes, the rows copied in), on random
// directed graphs with unreachable pairs, with several block sizes, and
// checks: the file is the same bytes as the CPU engine's, and sampled
// rows equal the oracle's distances (internal/ref).
func TestGPUMatrixToMemfd(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 16))
	for trial := range 4 {
		n := 1500 + rng.IntN(2500)
		e := graph.Edges{NumVertices: n}
		for range n * 2 {
			e.Src = append(e.Src, int32(rng.IntN(n)))
			e.Dst = append(e.Dst, int32(rng.IntN(n)))
			e.IntWeights = append(e.IntWeights, int64(1+rng.IntN(100)))
		}
		v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
		for i := range n {
			v.Ints = append(v.Ints, int64(i))
		}
		g, err := LoadGraph(&arrowio.EdgeTable{Edges: e, Vertices: v, Name: "random"}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		maxBlock := []int{0, 1 + rng.IntN(n/3)}[trial%2]
		got := runMatrixToMemfd(t, g, Options{Resources: Resources{Engine: "gpu", MaxBlock: maxBlock, Devices: []int{0}}}, arrowio.MatrixWritesPrefill)
		cpu := runMatrixToMemfd(t, g, Options{Resources: Resources{Engine: "cpu"}}, arrowio.MatrixWritesPositional)
		if !bytes.Equal(got, cpu) {
			t.Fatalf("seed %d trial %d (n %d, max block %d): the GPU's %d bytes differ from the CPU engine's %d", seed, trial, n, maxBlock, len(got), len(cpu))
		}
		checkMatrixRowsAgainstOracle(t, g, got, rng, fmt.Sprintf("seed %d trial %d", seed, trial))
		g.Close()
	}
}

// checkMatrixRowsAgainstOracle reads the matrix file data (every vertex a
// source, in vertex order) and compares 20 random rows with the oracle.
func checkMatrixRowsAgainstOracle(t *testing.T, g *Graph, data []byte, rng *rand.Rand, what string) {
	t.Helper()
	r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator), ipc.WithBodySizeLimit(0))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRecords() != 1 {
		t.Fatalf("%s: %d record batches, want one", what, r.NumRecords())
	}
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	values := rec.Column(1).(*array.FixedSizeList).ListValues()
	n := g.NumVertices()
	for range 20 {
		s := rng.IntN(n)
		var want []int64
		switch g.CSR.Type {
		case graph.DistInt32:
			d, err := ref.Distances[int32](g.CSR, graph.VertexID(s))
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range d {
				want = append(want, int64(x))
			}
		case graph.DistInt64:
			d, err := ref.Distances[int64](g.CSR, graph.VertexID(s))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, d...)
		default:
			t.Fatalf("%s: distances of %s", what, g.CSR.Type)
		}
		for v := range n {
			i := s*n + v
			unreachable := want[v] == int64(graph.Infinity[int32]()) || want[v] == graph.Infinity[int64]()
			if values.IsNull(i) != unreachable {
				t.Fatalf("%s: row %d column %d: null %v, oracle %d", what, s, v, values.IsNull(i), want[v])
			}
			if unreachable {
				continue
			}
			var got int64
			switch a := values.(type) {
			case *array.Int32:
				got = int64(a.Value(i))
			case *array.Int64:
				got = a.Value(i)
			}
			if got != want[v] {
				t.Fatalf("%s: row %d column %d: %d, oracle %d", what, s, v, got, want[v])
			}
		}
	}
}

// TestGraphHoldsDevice: a graph loaded for the GPU keeps its device (the
// CLI then writes a matrix in memory on every core), one for the CPU none.
func TestGraphHoldsDevice(t *testing.T) {
	e := graph.Edges{NumVertices: 3, Src: []int32{0, 1}, Dst: []int32{1, 2}, IntWeights: []int64{1, 2}}
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{0, 1, 2}}
	cpu, err := LoadGraph(&arrowio.EdgeTable{Edges: e, Vertices: v, Name: "path"}, LoadOptions{Engine: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	if cpu.HoldsDevice() {
		t.Error("a graph loaded for the CPU holds a device")
	}
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	g, err := LoadGraph(&arrowio.EdgeTable{Edges: e, Vertices: v, Name: "path"}, LoadOptions{Engine: "gpu", Devices: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !g.HoldsDevice() {
		t.Errorf("a graph loaded for the GPU (built on %s) holds no device", g.BuiltOn())
	}
}
