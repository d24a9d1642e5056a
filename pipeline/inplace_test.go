//go:build linux

package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/sys/unix"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// rangePinner is a HostPinner that keeps the ranges it pins, so that a
// fake device can check that a copy's destination is pinned (in one range
// or in ranges side by side, as the GPU runner accepts), and refuses the
// range that starts failAt bytes past base (-1 for none).
type rangePinner struct {
	mu      sync.Mutex
	pinned  map[uintptr]int // start address → length
	calls   int
	base    uintptr
	failAt  int
	unpins  int
	overlap bool // a range was pinned twice
}

func (p *rangePinner) PinHost(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	lo := uintptr(unsafe.Pointer(&b[0]))
	if p.failAt >= 0 && lo == p.base+uintptr(p.failAt) {
		return errors.New("fake: out of lockable memory")
	}
	for at, n := range p.pinned {
		if lo < at+uintptr(n) && at < lo+uintptr(len(b)) {
			p.overlap = true
		}
	}
	p.pinned[lo] = len(b)
	return nil
}

func (p *rangePinner) UnpinHost(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	lo := uintptr(unsafe.Pointer(&b[0]))
	if p.pinned[lo] != len(b) {
		return errors.New("unpinning what is not pinned")
	}
	delete(p.pinned, lo)
	p.unpins++
	return nil
}

// covers reports whether b lies wholly in pinned ranges.
func (p *rangePinner) covers(b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, end := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[0]))+uintptr(len(b))
	for at < end {
		found := false
		for lo, n := range p.pinned {
			if at >= lo && at < lo+uintptr(n) {
				at, found = lo+uintptr(n), true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// inPlaceDevice is a fake GPU runner: a ResidentRunner that pins host
// memory, whose rows (fakeAsync's) have unreachable cells, and whose
// Start checks that a block whose rows lie in the output is pinned there
// before its copy, as the device needs.
type inPlaceDevice struct {
	*fakeResident
	*rangePinner
	values []byte // the output's rows, once known

	mu        sync.Mutex
	inOutput  int // blocks whose rows were the output's
	unpinned  int // of those, blocks not pinned at their Start
	elsewhere int
}

func (d *inPlaceDevice) ComputeResident(ctx context.Context, sources []graph.VertexID) (graph.ResidentBlock, error) {
	rb, err := d.fakeResident.ComputeResident(ctx, sources)
	if err != nil {
		return nil, err
	}
	return inPlaceDeviceBlock{rb, d}, nil
}

type inPlaceDeviceBlock struct {
	graph.ResidentBlock
	d *inPlaceDevice
}

func (b inPlaceDeviceBlock) Start(ctx context.Context, lo, hi int, out *graph.Block) (graph.Waiter, error) {
	d := b.d
	dist := arrow.GetBytes(out.Dist.([]int32))
	in := len(d.values) > 0 && uintptr(unsafe.Pointer(&dist[0])) >= uintptr(unsafe.Pointer(&d.values[0])) &&
		uintptr(unsafe.Pointer(&dist[0])) < uintptr(unsafe.Pointer(&d.values[0]))+uintptr(len(d.values))
	d.mu.Lock()
	switch {
	case in && !d.covers(dist):
		d.inOutput++
		d.unpinned++
	case in:
		d.inOutput++
	default:
		d.elsewhere++
	}
	d.mu.Unlock()
	w, err := b.ResidentBlock.Start(ctx, lo, hi, out)
	if err != nil {
		return nil, err
	}
	return unreachableWaiter{w, out}, nil
}

// unreachableWaiter makes every cell (s, v) with (s+v)%7 == 3 unreachable
// once the fake rows have landed.
type unreachableWaiter struct {
	graph.Waiter
	out *graph.Block
}

func (w unreachableWaiter) Wait() error {
	if err := w.Waiter.Wait(); err != nil {
		return err
	}
	d, n := w.out.Dist.([]int32), w.out.NumVertices
	for r, s := range w.out.Sources {
		for v := range n {
			if (int(s)+v)%7 == 3 {
				d[r*n+v] = graph.Infinity[int32]()
			}
		}
	}
	return nil
}

// writeInPlaceMatrix runs a matrix of total rows over n vertices through
// runBlocks with dev into a new memfd written with writes, the output's
// rows offered to the run where writes is MatrixWritesInPlace, and
// returns the file's bytes and the run's log.
func writeInPlaceMatrix(t *testing.T, dev *inPlaceDevice, n, total, chunk int, blocks []SourceBlock, writes string) ([]byte, string) {
	t.Helper()
	fd, err := unix.MemfdCreate("pathctl-inplace-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("no memfd here: %v", err)
	}
	f := os.NewFile(uintptr(fd), "memfd")
	defer f.Close()
	ints := make([]int64, n)
	for i := range ints {
		ints[i] = int64(100 + i)
	}
	builder := arrowio.NewResultBuilder(arrowio.LayoutMatrix, &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ints}, graph.DistInt32, false, nil)
	w, err := arrowio.CreateResult(fmt.Sprintf("/proc/self/fd/%d", fd), builder.Schema(),
		arrowio.WriteOptions{Format: "arrow", MatrixRows: total, MatrixWrites: writes})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	opt := Options{Layout: arrowio.LayoutMatrix, Log: &log, MatrixValues: w.MatrixValues(), inPlaceChunk: chunk}
	if (opt.MatrixValues != nil) != (writes == arrowio.MatrixWritesInPlace) {
		t.Fatalf("matrix writes %s: MatrixValues offered = %v", writes, opt.MatrixValues != nil)
	}
	dev.values = opt.MatrixValues
	if len(dev.values) > 0 {
		dev.rangePinner.base = uintptr(unsafe.Pointer(&dev.values[0]))
	}
	sched := schedule{residentMax: total, computeMax: total}
	sched.buildRecords = func(blk *graph.Block) ([]arrow.RecordBatch, error) {
		var out []arrow.RecordBatch
		err := builder.Block(blk, func(r arrow.RecordBatch) error { r.Retain(); out = append(out, r); return nil })
		return out, err
	}
	err = runBlocks(context.Background(), fakeGraph(t, n), dev, opt, sched, allSources(total), blocks, func(res blockResult) error {
		defer res.release()
		for _, r := range res.records {
			if err := w.Write(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
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
	return data, log.String()
}

// TestMatrixRowsInPlace runs a matrix with unreachable cells through the
// block pool's path (the writer copies every row into its mapping) and
// through the output's own rows registered with a fake pinning device
// (MatrixWritesInPlace), in registration chunks cut inside rows, and
// checks: the files are the same bytes; every block's rows were the
// output's, pinned before the device's copy; no range was pinned twice;
// every chunk was unpinned by the end. Where the device refuses the
// second chunk, the blocks from there on take memory of their own, the
// log says so, and the file is still the same bytes.
func TestMatrixRowsInPlace(t *testing.T) {
	const n, piece, total = 37, 3, 30 // rows of 148 bytes; 10 host blocks
	const chunk = 1000                // 5 chunks, cut inside rows
	blocks := splitBlocks(PlanBlocks(total, 1, 0, total), piece)
	newDev := func(failAt int) *inPlaceDevice {
		return &inPlaceDevice{
			fakeResident: &fakeResident{fakeAsync: newFakeAsync(n, 2*len(blocks)), tooLarge: -1, startFail: -1},
			rangePinner:  &rangePinner{pinned: map[uintptr]int{}, failAt: failAt},
		}
	}
	base := runtime.NumGoroutine()
	plain := newDev(-1)
	want, _ := writeInPlaceMatrix(t, plain, n, total, chunk, blocks, arrowio.MatrixWritesPrefill)
	if plain.inOutput != 0 || plain.rangePinner.calls > blockPoolMax {
		t.Fatalf("without MatrixValues: %d blocks in the output, %d pins", plain.inOutput, plain.rangePinner.calls)
	}

	dev := newDev(-1)
	got, log := writeInPlaceMatrix(t, dev, n, total, chunk, blocks, arrowio.MatrixWritesInPlace)
	if !bytes.Equal(got, want) {
		t.Errorf("in place: a file of %d bytes differing from the copied one (%d bytes)", len(got), len(want))
	}
	if dev.inOutput != len(blocks) || dev.elsewhere != 0 || dev.unpinned != 0 {
		t.Errorf("in place: %d blocks in the output (%d not pinned at their copy), %d elsewhere; want all %d pinned in the output",
			dev.inOutput, dev.unpinned, dev.elsewhere, len(blocks))
	}
	chunks := (total*n*4 + chunk - 1) / chunk
	if dev.rangePinner.calls != chunks || dev.unpins != chunks || len(dev.pinned) != 0 || dev.overlap {
		t.Errorf("in place: %d pins, %d unpins, %d left pinned, overlap %v; want %d each, none left",
			dev.rangePinner.calls, dev.unpins, len(dev.pinned), dev.overlap, chunks)
	}
	if !strings.Contains(log, fmt.Sprintf("in place: %d blocks copied by the device straight into the output's rows, 0 through memory of their own", len(blocks))) {
		t.Errorf("in place: the log does not count the blocks:\n%s", log)
	}

	refused := newDev(chunk)
	got, log = writeInPlaceMatrix(t, refused, n, total, chunk, blocks, arrowio.MatrixWritesInPlace)
	if !bytes.Equal(got, want) {
		t.Errorf("registration refused: a file of %d bytes differing from the copied one (%d bytes)", len(got), len(want))
	}
	// Chunk 0 holds rows 0..6 (1000 bytes): only blocks [0,3) and [3,6)
	// lie wholly in it, and they too fall back once the refusal is seen.
	if refused.inOutput > 2 || refused.unpinned != 0 || refused.inOutput+refused.elsewhere != len(blocks) {
		t.Errorf("registration refused: %d blocks in the output (%d unpinned), %d elsewhere; want at most 2 in the output, the rest elsewhere",
			refused.inOutput, refused.unpinned, refused.elsewhere)
	}
	if len(refused.pinned) != 0 {
		t.Errorf("registration refused: %d ranges left pinned", len(refused.pinned))
	}
	if !strings.Contains(log, "could not be page-locked (fake: out of lockable memory)") {
		t.Errorf("registration refused: the log does not say so:\n%s", log)
	}
	for _, d := range []*inPlaceDevice{plain, dev, refused} {
		d.checkAllWaited(t, base)
	}
}
