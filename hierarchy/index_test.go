package hierarchy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"reflect"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

func indexBytes(t testing.TB, h *Hierarchy) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := h.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestIndexRoundTrip(t *testing.T) {
	rng := testgraphs.Rand(t, 10)
	for _, tg := range drawGraphs(t, rng)[:4] {
		h, err := Build(tg.g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		back, err := Read(bytes.NewReader(indexBytes(t, h)), tg.g)
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		if !reflect.DeepEqual(h, back) {
			t.Fatalf("%s: the hierarchy read back differs from the one written", tg.name)
		}
		checkHierarchy(t, rng, tg.name+"/read", tg.g, back, oracle(t, tg.g))
	}
	// Weights past 32 bits are written as int64.
	wide := testgraphs.RoadGrid(rng, 6, 7, 0.3, 0.1, 9)
	for i := range wide.IntWeights {
		wide.IntWeights[i] *= 1 << 33
	}
	g := mustBuildCSR(t, wide, false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.weightsFit32() {
		t.Fatal("weights of 2^33 and more fit in 32 bits")
	}
	back, err := Read(bytes.NewReader(indexBytes(t, h)), g)
	if err != nil || !reflect.DeepEqual(h, back) {
		t.Fatalf("wide weights: read back %v, equal %v", err, reflect.DeepEqual(h, back))
	}
	empty := mustBuildCSR(t, &graph.Edges{}, false)
	h, err = Build(empty, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(indexBytes(t, h)), empty); err != nil {
		t.Fatalf("empty graph: %v", err)
	}
}

func TestIndexRefusesOtherGraph(t *testing.T) {
	rng := testgraphs.Rand(t, 11)
	e := testgraphs.RoadGrid(rng, 6, 6, 0.3, 0, 9)
	g := mustBuildCSR(t, e, false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := indexBytes(t, h)
	// Same shape, one weight changed; the graph reversed; another size.
	e.IntWeights[0]++
	reweighted := mustBuildCSR(t, e, false)
	for name, other := range map[string]*graph.CSR{
		"reweighted": reweighted,
		"transposed": graph.Transpose(g),
		"smaller":    mustBuildCSR(t, testgraphs.RoadGrid(rng, 5, 6, 0.3, 0, 9), false),
	} {
		if got, err := Read(bytes.NewReader(data), other); !errors.Is(err, ErrMismatch) || got != nil {
			t.Errorf("%s graph: %v, want ErrMismatch", name, err)
		}
		// Decoded alone, the index is refused by CheckGraph.
		decoded, err := Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := decoded.CheckGraph(other); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s graph: CheckGraph %v, want ErrMismatch", name, err)
		}
		if err := decoded.CheckGraph(g); err != nil {
			t.Errorf("CheckGraph of the index's own graph: %v", err)
		}
	}
	if err := h.Reverse().Write(&bytes.Buffer{}); err == nil {
		t.Error("writing a reversed hierarchy: no error")
	}
}

func TestIndexRefusesCorrupt(t *testing.T) {
	rng := testgraphs.Rand(t, 12)
	g := mustBuildCSR(t, testgraphs.RoadGrid(rng, 5, 5, 0.3, 0.1, 9), false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := indexBytes(t, h)
	for cut := range len(data) {
		if _, err := Read(bytes.NewReader(data[:cut]), g); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("index cut at %d of %d bytes: %v, want ErrCorrupt", cut, len(data), err)
		}
	}
	for range 200 {
		bad := bytes.Clone(data)
		bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
		if _, err := Read(bytes.NewReader(bad), g); err == nil {
			t.Fatal("a damaged index was accepted")
		}
	}
	if _, err := Read(bytes.NewReader(append(bytes.Clone(data), 0)), g); !errors.Is(err, ErrCorrupt) {
		t.Errorf("index with a trailing byte: %v, want ErrCorrupt", err)
	}
}

// FuzzReadIndex checks that no input makes Read panic, and that whatever
// it accepts answers queries without panicking.
func FuzzReadIndex(f *testing.F) {
	g := mustBuildCSR(f, &graph.Edges{NumVertices: 4, Src: []int32{0, 1, 2, 3, 1}, Dst: []int32{1, 2, 3, 0, 3}, IntWeights: []int64{1, 2, 0, 4, 5}}, false)
	h, err := Build(g, Options{})
	if err != nil {
		f.Fatal(err)
	}
	valid := indexBytes(f, h)
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add([]byte(indexMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		queryIfRead(t, g, data)
		// The same bytes under a valid checksum reach the checks of the
		// layout's invariants.
		if len(data) >= 8 {
			signed := bytes.Clone(data)
			binary.LittleEndian.PutUint64(signed[len(signed)-8:], crc64.Checksum(signed[:len(signed)-8], crcTable))
			queryIfRead(t, g, signed)
		}
	})
}

// queryIfRead reads data as an index of g and, when Read accepts it, runs
// queries from every vertex.
func queryIfRead(t *testing.T, g *graph.CSR, data []byte) {
	got, err := Read(bytes.NewReader(data), g)
	if err != nil {
		return
	}
	row := make([]int64, g.NumVertices)
	for s := range g.NumVertices {
		if err := got.DistancesFrom(graph.VertexID(s), row); err != nil {
			t.Fatal(err)
		}
		if _, err := got.Distance(graph.VertexID(s), 0); err != nil {
			t.Fatal(err)
		}
		// A damaged hierarchy may refuse to unpack a path, never panic.
		got.PathOf(graph.VertexID(s), 0)
	}
	if _, err := got.Table([]graph.VertexID{0, 1}, []graph.VertexID{2, 3}); err != nil {
		t.Fatal(err)
	}
}
