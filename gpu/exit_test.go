package gpu

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestLazyKernelResolution checks function's lookup on a fake module: a
// kernel is resolved once, on first use, and one the image lacks fails as
// a *KernelError naming it (without lazyKernels, the open resolves them
// all and function only reads the table).
func TestLazyKernelResolution(t *testing.T) {
	calls := map[string]int{}
	d := fakeModule(map[string]bool{kernelTable[1].name: true}, Success)
	lookup := d.cuModuleGetFunction
	d.cuModuleGetFunction = func(fn *uintptr, m uintptr, name string) Result {
		calls[name]++
		return lookup(fn, m, name)
	}
	dv := &device{d: d, module: 1, funcs: make([]uintptr, len(kernelTable))}
	name := kernelTable[0].name
	for range 3 {
		f, k, err := dv.function(name)
		if err != nil || f == 0 || k.name != name {
			t.Fatalf("function(%s) = %v, %v, %v", name, f, k, err)
		}
	}
	if calls[name] != 1 {
		t.Errorf("%s looked up %d times, want once", name, calls[name])
	}
	var ke *KernelError
	if _, _, err := dv.function(kernelTable[1].name); !errors.As(err, &ke) || len(ke.Missing) != 1 || ke.Missing[0] != kernelTable[1].name {
		t.Errorf("a kernel the image lacks: %v, want a *KernelError naming %s", err, kernelTable[1].name)
	}
	if _, _, err := dv.function("no_such_kernel"); err == nil {
		t.Error("a name outside the table: no error")
	}
}

// TestEveryKernelResolves looks up every kernel of the table on the real
// image: with lazyKernels nothing else checks, before each kernel's first
// launch, that the image holds them all.
func TestEveryKernelResolves(t *testing.T) {
	e := openEngine(t)
	err := e.dev.do(func() error {
		for _, k := range kernelTable {
			if _, _, err := e.dev.function(k.name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ot := e.OpenTimes(); ot.Context <= 0 || ot.Kernels <= 0 {
		t.Errorf("OpenTimes %+v: the context and the kernels took no time", ot)
	}
}

// TestAbandon checks the exit path: after a run, Abandon returns without
// error, the engine refuses work as after Close, Close does nothing, and a
// new engine of the same process (which retains the same primary context)
// still computes the oracle's distances.
func TestAbandon(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Skip("no CUDA device: " + err.Error())
	}
	edges, _ := testgraphs.Random(rand.New(rand.NewPCG(3, 4)), testgraphs.RandomOptions{N: 200, M: 900, Kind: testgraphs.Int, MaxWeight: 9})
	g, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sources := []graph.VertexID{0, 7, 199}
	run := func(e *Engine) *graph.Block {
		t.Helper()
		r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Dijkstra})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b := graph.NewBlock(sources, g.NumVertices, r.DistType(), false)
		poison(b)
		if err := r.Run(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	run(e)
	if err := e.Abandon(); err != nil {
		t.Fatalf("Abandon: %v", err)
	}
	if _, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Dijkstra}); err == nil {
		t.Error("Prepare after Abandon: no error")
	}
	if err := e.Close(); err != nil {
		t.Errorf("Close after Abandon: %v", err)
	}
	if err := e.Abandon(); err != nil {
		t.Errorf("a second Abandon: %v", err)
	}
	again := openEngine(t)
	b := run(again)
	want := oracle(t, g, sources, ref.Dijkstra[int32])
	checkRows(t, g, b, want, nil)
}
