package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestTakeSlot checks the choice of result slot with copies that land when
// the test says so; no device needed.
func TestTakeSlot(t *testing.T) {
	job := func(seq uint64, landed bool) *copyJob {
		j := &copyJob{seq: seq, done: make(chan struct{})}
		if landed {
			close(j.done)
		}
		return j
	}
	r := &Runner{}
	if s := r.buf.takeSlot(); s != &r.buf.slots[0] {
		t.Fatal("both slots idle: did not take slot 0")
	}
	r.buf.slots[0].busy = job(1, false)
	if s := r.buf.takeSlot(); s != &r.buf.slots[1] {
		t.Fatal("slot 0 in flight: did not take slot 1")
	}
	r.buf.slots[0].busy = job(1, true)
	r.buf.slots[1].busy = job(2, false)
	if s := r.buf.takeSlot(); s != &r.buf.slots[0] || s.busy != nil {
		t.Fatal("slot 0 landed: did not take it, or kept its job")
	}
	// Both in flight: Start waits for the older copy, whichever slot it is.
	for _, older := range []int{0, 1} {
		jobs := [2]*copyJob{job(7, false), job(7, false)}
		jobs[older].seq = 6
		r.buf.slots[0].busy, r.buf.slots[1].busy = jobs[0], jobs[1]
		go func() {
			time.Sleep(20 * time.Millisecond)
			close(jobs[older].done)
		}()
		s := r.buf.takeSlot()
		if s != &r.buf.slots[older] || s.busy != nil {
			t.Fatalf("both in flight, slot %d older: took slot %v", older, s == &r.buf.slots[0])
		}
		select {
		case <-jobs[older].done:
		default:
			t.Fatal("took a slot whose copy had not landed")
		}
		if r.buf.slots[1-older].busy != jobs[1-older] {
			t.Fatal("the newer copy's slot was touched")
		}
	}
}

// TestPendingWait checks that Wait joins the errors of every chunk's copy,
// waits for each, and says the same when called again; no device needed.
func TestPendingWait(t *testing.T) {
	a := &copyJob{done: make(chan struct{}), copyTime: 2 * time.Millisecond, moveTime: time.Millisecond}
	b := &copyJob{done: make(chan struct{}), err: errors.New("gpu: copy failed"), copyTime: 3 * time.Millisecond}
	p := &Pending{jobs: []*copyJob{a, b}}
	close(a.done)
	go func() {
		time.Sleep(10 * time.Millisecond)
		close(b.done)
	}()
	for range 2 {
		if err := p.Wait(); err == nil || !strings.Contains(err.Error(), "copy failed") {
			t.Fatalf("Wait = %v, want the failed copy's error", err)
		}
	}
	if p.CopyTime() != 5*time.Millisecond || p.MoveTime() != time.Millisecond {
		t.Errorf("CopyTime %v, MoveTime %v: want the sums 5ms and 1ms", p.CopyTime(), p.MoveTime())
	}
	if err := (&Pending{}).Wait(); err != nil {
		t.Errorf("empty Pending: Wait = %v", err)
	}
}

// pendingBlock is a block started and not yet waited for.
type pendingBlock struct {
	at int // its first row in the whole
	b  *graph.Block
	p  *Pending
}

// startAhead runs sources through r in blocks whose sizes cycle through
// sizes, keeping up to ahead blocks started beyond the oldest not yet
// waited for; with ahead < 0 it starts every block first and waits for
// them last to first. It returns one block holding every row.
func startAhead(t *testing.T, r *Runner, n int, sources []graph.VertexID, sizes []int, ahead int, withPred bool) *graph.Block {
	t.Helper()
	return startWith(t, r, n, sources, sizes, ahead, withPred, func(_, _ int, b *graph.Block) (*Pending, error) {
		return r.Start(context.Background(), b)
	})
}

// startWith is startAhead with start(lo, hi, b) starting the block b of
// sources[lo:hi].
func startWith(t *testing.T, r *Runner, n int, sources []graph.VertexID, sizes []int, ahead int, withPred bool,
	start func(lo, hi int, b *graph.Block) (*Pending, error)) *graph.Block {
	t.Helper()
	all := graph.NewBlock(sources, n, r.buf.blockType(), withPred)
	var queue []pendingBlock
	wait := func(pb pendingBlock) {
		t.Helper()
		if err := pb.p.Wait(); err != nil {
			t.Fatalf("Wait(rows %d..): %v", pb.at, err)
		}
		checkValidity(t, pb.b)
		if err := r.UnpinHost(distBytesOf(pb.b)); err != nil {
			t.Fatal(err)
		}
		copyRows(all, pb.b, pb.at)
	}
	for lo, i := 0, 0; lo < len(sources); i++ {
		hi := min(lo+sizes[i%len(sizes)], len(sources))
		b := graph.NewBlock(sources[lo:hi], n, r.buf.blockType(), withPred)
		poison(b)
		// Room for the bitmap the device builds, poisoned; every other
		// block pinned, so that its rows land without a stage.
		b.Valid = bytes.Repeat([]byte{0xa5}, (len(b.Sources)*n+7)/8)
		if i%2 == 0 {
			if err := r.PinHost(distBytesOf(b)); err != nil {
				t.Fatal(err)
			}
		}
		p, err := start(lo, hi, b)
		if err != nil {
			t.Fatalf("Start(sources %d..%d): %v", lo, hi, err)
		}
		queue = append(queue, pendingBlock{at: lo, b: b, p: p})
		if ahead >= 0 && len(queue) > ahead {
			wait(queue[0])
			queue = queue[1:]
		}
		lo = hi
	}
	for len(queue) > 0 {
		last := len(queue) - 1
		if ahead >= 0 {
			last = 0
		}
		wait(queue[last])
		queue = slices.Delete(queue, last, last+1)
	}
	return all
}

func distBytesOf(b *graph.Block) []byte {
	d, _ := sliceBytes(b.Dist)
	return d
}

// checkValidity checks the bitmap and null count the device left in a
// block with room for them (graph.Block.Valid) against its distances: for
// integer distances without predecessors it must have built them.
func checkValidity(t *testing.T, b *graph.Block) {
	t.Helper()
	var infs []bool
	switch d := b.Dist.(type) {
	case []int32:
		for _, x := range d {
			infs = append(infs, x == math.MaxInt32)
		}
	case []int64:
		for _, x := range d {
			infs = append(infs, x == math.MaxInt64)
		}
	}
	if infs == nil || b.Pred != nil {
		if b.ValidSet {
			t.Errorf("bitmap built for a %s block with predecessors %v", b.Type, b.Pred != nil)
		}
		return
	}
	if !b.ValidSet {
		t.Fatalf("no bitmap built for a block of %d sources", len(b.Sources))
	}
	nulls := 0
	for i, inf := range infs {
		if inf {
			nulls++
		}
		if got := b.Valid[i/8]>>(i%8)&1 == 1; got == inf {
			t.Fatalf("bitmap entry %d: valid %v, distance infinite %v", i, got, inf)
		}
	}
	if b.Nulls != nulls {
		t.Fatalf("null count %d, want %d", b.Nulls, nulls)
	}
}

// TestStartAheadAgainstOracles starts blocks ahead of their waits (one
// ahead, as the pipeline does; four ahead, more than the two result slots;
// every block before any wait, waited for last to first; two ahead from
// one resident device block of every source), with block sizes
// that change from one Start to the next (so buffers grow while copies are
// in flight), and checks every row against the serial oracles and against
// plain Runs of the same blocks.
func TestStartAheadAgainstOracles(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	n := 517
	for _, dk := range []distKind{distKinds[0], distKinds[3], distKinds[4]} {
		o := testgraphs.RandomOptions{N: n, M: 4 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20, Dyadic: true}
		edges, _ := testgraphs.Random(rng, o)
		g, err := graph.Build(edges, graph.BuildOptions{DistType: dk.typ})
		if err != nil {
			t.Fatal(err)
		}
		var sources []graph.VertexID
		for _, p := range rng.Perm(n)[:150] {
			sources = append(sources, graph.VertexID(p))
		}
		hops := oracle(t, g, sources, ref.BFS)
		var wantInt [][]int32
		var wantFloat [][]float64
		switch g.Type {
		case graph.DistInt32:
			wantInt = oracle(t, g, sources, ref.Dijkstra[int32])
		case graph.DistFloat64:
			wantFloat = oracle(t, g, sources, ref.Dijkstra[float64])
		default:
			t.Fatalf("no oracle for %s", g.Type)
		}
		algs := []graph.Algorithm{graph.BFS, graph.BFSLevel}
		if g.Weighted {
			algs = append(algs, Batched, graph.Dijkstra, graph.BellmanFord, graph.Edge)
		}
		for _, alg := range algs {
			for _, withPred := range []bool{false, true} {
				if withPred && !alg.HasPredecessors() {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/pred=%v", dk.name, alg, withPred), func(t *testing.T) {
					r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg, WithPredecessors: withPred})
					if err != nil {
						t.Fatal(err)
					}
					defer func() {
						if err := r.Close(); err != nil {
							t.Error(err)
						}
					}()
					sizes := []int{37, 1, 64, 5, 33}
					plain := runBlocks(t, r, n, sources, 37, withPred)
					for _, ahead := range []int{0, 1, 4, -1, 2} {
						var b *graph.Block
						if ahead == 2 { // one device block, its rows started piecewise
							res, err := r.ComputeResident(context.Background(), sources)
							if err != nil {
								t.Fatal(err)
							}
							b = startWith(t, r, n, sources, sizes, ahead, withPred, func(lo, hi int, b *graph.Block) (*Pending, error) {
								return res.Start(context.Background(), lo, hi, b)
							})
							if _, err := res.Start(context.Background(), 1, 3, graph.NewBlock(sources[2:4], n, r.DistType(), withPred)); err == nil {
								t.Error("Start of rows 1..3 into a block of other sources: no error")
							}
						} else {
							b = startAhead(t, r, n, sources, sizes, ahead, withPred)
						}
						samePred := !(alg == graph.BellmanFord && packsPredecessors(r.DistType()))
						if !sameBlock(plain, b, samePred) {
							t.Fatalf("%d ahead: rows differ from plain Runs", ahead)
						}
						if alg.CountsHops() {
							checkRows(t, g, b, hops, unitGraph(g))
							continue
						}
						if wantInt != nil {
							checkRows(t, g, b, wantInt, g)
						} else {
							checkRows(t, g, b, wantFloat, g)
						}
					}
				})
			}
		}
	}
}

// TestStartAheadHalved makes the device refuse buffers of more than 6
// sources, so that each block of 11 is halved once and runs as chunks of 6
// and 5, whose
// copies queue one after the other on the two slots, and starts blocks
// ahead of their waits.
func TestStartAheadHalved(t *testing.T) {
	e := openEngine(t)
	t.Cleanup(func() { allocFault = nil })
	rng := newSeed(t)
	n := 333
	edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: 3 * n, Kind: testgraphs.Int, MaxWeight: 20})
	g, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sources := allVertices(n)[:55]
	want := oracle(t, g, sources, ref.Dijkstra[int32])
	r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Dijkstra, WithPredecessors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l := layoutOf(graph.Dijkstra, r.DistType(), true)
	rowBytes := int64(n * max(l.dist, l.aux, l.flags, l.pred))
	allocFault = func(size int64) bool { return size > 6*rowBytes }
	for _, ahead := range []int{1, 3, -1} {
		b := startAhead(t, r, n, sources, []int{11}, ahead, true)
		checkRows(t, g, b, want, g)
	}
	if r.buf.fit != 6 {
		t.Errorf("fit = %d, want 6", r.buf.fit)
	}
}

// TestStartCancelledAndFailed checks that a cancelled context stops Start
// before anything runs, that a negative cycle fails Start without
// disturbing a block already in flight, that closing a runner with blocks
// not waited for lets their copies land first, and that no device memory
// is left.
func TestStartCancelledAndFailed(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	n := 121
	edges, cycle := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: 2 * n, Kind: testgraphs.Int, MinWeight: 6, MaxWeight: 30, Cycle: 5})
	g, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reach := oracle(t, g, allVertices(n), ref.BFS)
	var reaching, clear []graph.VertexID
	for s := range n {
		if reach[s][cycle[0]] != graph.Infinity[int32]() {
			reaching = append(reaching, graph.VertexID(s))
		} else {
			clear = append(clear, graph.VertexID(s))
		}
	}
	if len(clear) == 0 || len(reaching) == 0 {
		t.Skipf("drawn graph has %d sources clear of the cycle and %d reaching it", len(clear), len(reaching))
	}
	want := oracle(t, g, clear, ref.BellmanFord[int32])
	r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.BellmanFord, WithPredecessors: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := graph.NewBlock(clear, n, r.DistType(), true)
	poison(first)
	p1, err := r.Start(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if p, err := r.Start(ctx, graph.NewBlock(clear, n, r.DistType(), true)); !errors.Is(err, context.Canceled) || p != nil {
		t.Fatalf("Start after cancel = %v, %v; want nil, context.Canceled", p, err)
	}
	_, err = r.Start(context.Background(), graph.NewBlock(reaching, n, r.DistType(), true))
	var nc *graph.NegativeCycleError
	if !errors.As(err, &nc) || !slices.Contains(cycle, nc.Vertex) {
		t.Fatalf("Start from sources reaching the cycle: err = %v, want a *graph.NegativeCycleError on %v", err, cycle)
	}
	if err := p1.Wait(); err != nil {
		t.Fatalf("Wait for the block started before the failures: %v", err)
	}
	checkRows(t, g, first, want, g)

	// Two blocks in flight, never waited for, when the runner closes.
	second, third := graph.NewBlock(clear, n, r.DistType(), true), graph.NewBlock(clear, n, r.DistType(), true)
	poison(second)
	poison(third)
	p2, err := r.Start(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	p3, err := r.Start(context.Background(), third)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if live := e.LiveBytes(); live != 0 {
		t.Errorf("LiveBytes = %d after Close with two blocks in flight", live)
	}
	for _, p := range []*Pending{p3, p2} {
		if err := p.Wait(); err != nil {
			t.Fatalf("Wait after Close: %v", err)
		}
	}
	checkRows(t, g, second, want, g)
	checkRows(t, g, third, want, g)
	if _, err := r.Start(context.Background(), graph.NewBlock(clear, n, r.DistType(), true)); err == nil {
		t.Error("Start on a closed runner: no error")
	}
}
