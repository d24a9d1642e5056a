package gpu

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
)

// fakeCopyDriver stands in for the driver calls of the copy path
// (queueCopy, the copier, releaseSlots), so that they run without a
// device: device memory is a table of Go slices at made-up addresses, and
// copies happen when they are queued. It logs the calls and can fail one
// call by name.
type fakeCopyDriver struct {
	mu     sync.Mutex
	dev    map[uint64][]byte // device buffers by address
	host   map[unsafe.Pointer][]byte
	events int
	live   map[uintptr]bool // events created and not destroyed
	calls  []string
	fail   string // the call that fails, with CUDA_ERROR_INVALID_VALUE
}

func (f *fakeCopyDriver) call(name string) Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	if name == f.fail {
		return ResultInvalidValue
	}
	return Success
}

// devAlloc places b on the fake device.
func (f *fakeCopyDriver) devAlloc(b []byte) devBuf {
	f.mu.Lock()
	defer f.mu.Unlock()
	addr := uint64(0x10000 * (len(f.dev) + 1))
	f.dev[addr] = b
	return devBuf{ptr: addr, size: int64(len(b))}
}

func newFakeCopyDevice() (*device, *fakeCopyDriver) {
	f := &fakeCopyDriver{dev: map[uint64][]byte{}, host: map[unsafe.Pointer][]byte{}, live: map[uintptr]bool{}}
	d := &driver{}
	d.cuCtxSetCurrent = func(uintptr) Result { return Success }
	d.cuEventCreate = func(ev *uintptr, _ uint32) Result {
		if r := f.call("cuEventCreate"); r != Success {
			return r
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.events++
		*ev = uintptr(f.events)
		f.live[*ev] = true
		return Success
	}
	d.cuEventDestroy_v2 = func(ev uintptr) Result {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.live, ev)
		return Success
	}
	d.cuEventRecord = func(uintptr, uintptr) Result { return f.call("cuEventRecord") }
	d.cuStreamWaitEvent = func(uintptr, uintptr, uint32) Result { return f.call("cuStreamWaitEvent") }
	d.cuStreamSynchronize = func(uintptr) Result { return f.call("cuStreamSynchronize") }
	d.cuEventSynchronize = func(uintptr) Result { return f.call("cuEventSynchronize") }
	d.cuEventElapsedTime = func(ms *float32, _, _ uintptr) Result {
		*ms = 1.5
		return f.call("cuEventElapsedTime")
	}
	d.cuMemHostAlloc = func(p *unsafe.Pointer, size uint64, _ uint32) Result {
		if r := f.call("cuMemHostAlloc"); r != Success {
			return r
		}
		b := make([]byte, size)
		*p = unsafe.Pointer(&b[0])
		f.mu.Lock()
		f.host[*p] = b
		f.mu.Unlock()
		return Success
	}
	d.cuMemFreeHost = func(p unsafe.Pointer) Result {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.host[p]; !ok {
			return ResultInvalidValue
		}
		delete(f.host, p)
		return Success
	}
	d.cuMemcpyDtoHAsync_v2 = func(dst unsafe.Pointer, src uint64, size uint64, _ uintptr) Result {
		if r := f.call("cuMemcpyDtoHAsync_v2"); r != Success {
			return r
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for base, b := range f.dev {
			if src >= base && src+size <= base+uint64(len(b)) {
				copy(unsafe.Slice((*byte)(dst), size), b[src-base:])
				return Success
			}
		}
		return ResultInvalidValue
	}
	d.cuMemHostRegister_v2 = func(unsafe.Pointer, uint64, uint32) Result { return f.call("cuMemHostRegister_v2") }
	d.cuMemHostUnregister = func(unsafe.Pointer) Result { return f.call("cuMemHostUnregister") }
	dv := &device{d: d, copyStream: 77, computeDone: 99}
	dv.copier.start(dv)
	return dv, f
}

// TestCopyPathWithFakeDriver queues copies of several blocks of rows (with
// predecessors) through the two slots without a device, and checks that
// every block lands whole and in place, that a failed queue leaves
// the slot idle with nothing queued, that a failed copy is Wait's error,
// and that releaseSlots frees every stage and event.
func TestCopyPathWithFakeDriver(t *testing.T) {
	dv, f := newFakeCopyDevice()
	defer dv.copier.stop()
	const n = 6
	// int64 distances, so that a mix-up of the distance and predecessor
	// parts of the stage shows.
	r := fakeRunner(dv, n, graph.DistInt64)
	// Each slot's device rows hold 5 sources' worth of distances and
	// predecessors; a block of k sources fills the first k rows.
	for i := range r.buf.slots {
		r.buf.slots[i].dist = f.devAlloc(make([]byte, 5*n*8))
		r.buf.slots[i].pred = f.devAlloc(make([]byte, 5*n*4))
	}
	fill := func(s *resultSlot, block, k int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		dist := unsafe.Slice((*int64)(unsafe.Pointer(&f.dev[s.dist.ptr][0])), 5*n)
		pred := unsafe.Slice((*int32)(unsafe.Pointer(&f.dev[s.pred.ptr][0])), 5*n)
		for c := range k * n {
			dist[c] = int64(1000*block + c)
			pred[c] = int32(-1000*block - c)
		}
	}
	var pendings []*Pending
	var outs []*graph.Block
	for block, k := range []int{3, 5, 1, 4, 2} {
		out := graph.NewBlock(make([]graph.VertexID, k), n, graph.DistInt64, true)
		s := r.buf.takeSlot()
		fill(s, block, k)
		dist, _ := sliceBytes(out.Dist)
		j, err := r.buf.queueCopy(s, copyOut{dist: dist, pred: asBytes(out.Pred)})
		if err != nil {
			t.Fatalf("block %d: queueCopy: %v", block, err)
		}
		pendings = append(pendings, &Pending{jobs: []*copyJob{j}})
		outs = append(outs, out)
	}
	for block, p := range pendings {
		if err := p.Wait(); err != nil {
			t.Fatalf("block %d: Wait: %v", block, err)
		}
		if p.CopyTime() <= 0 {
			t.Errorf("block %d: CopyTime %v", block, p.CopyTime())
		}
		d := outs[block].Dist.([]int64)
		for c := range d {
			if d[c] != int64(1000*block+c) || outs[block].Pred[c] != graph.VertexID(-1000*block-c) {
				t.Fatalf("block %d cell %d: dist %d pred %d", block, c, d[c], outs[block].Pred[c])
			}
		}
	}

	// A copy that cannot be queued: error, slot idle, copy stream drained.
	f.fail = "cuMemcpyDtoHAsync_v2"
	f.calls = nil
	s := r.buf.takeSlot()
	out := graph.NewBlock(make([]graph.VertexID, 2), n, graph.DistInt64, false)
	dist, _ := sliceBytes(out.Dist)
	if _, err := r.buf.queueCopy(s, copyOut{dist: dist}); err == nil || !strings.Contains(err.Error(), "cuMemcpyDtoHAsync_v2") {
		t.Fatalf("queueCopy with a failing copy: err = %v", err)
	}
	if s.busy != nil || !slices.Contains(f.calls, "cuStreamSynchronize") {
		t.Errorf("failed queueCopy left the slot busy (%v) or the copy stream unsynchronised (calls %v)", s.busy != nil, f.calls)
	}

	// A copy that fails on the copy stream: Wait says so.
	f.fail = "cuEventSynchronize"
	j, err := r.buf.queueCopy(r.buf.takeSlot(), copyOut{dist: dist})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Pending{jobs: []*copyJob{j}}).Wait(); err == nil || !strings.Contains(err.Error(), "cuEventSynchronize") {
		t.Errorf("Wait after a failed copy = %v", err)
	}
	f.fail = ""

	if err := r.buf.releaseSlots(); err != nil {
		t.Fatal(err)
	}
	if len(f.host) != 0 || len(f.live) != 0 {
		t.Errorf("after releaseSlots: %d pinned stages and %d events left", len(f.host), len(f.live))
	}
	for i := range r.buf.slots {
		if r.buf.slots[i].busy != nil || r.buf.slots[i].stage.p != nil {
			t.Errorf("slot %d not idle and empty after releaseSlots", i)
		}
	}
	dv.copier.stop()
	if _, err := r.buf.queueCopy(&r.buf.slots[0], copyOut{dist: dist}); !errors.Is(err, errClosed) {
		t.Errorf("queueCopy after the copier stopped: err = %v", err)
	}
}

// TestPinnedCopyGoesDirect pins a block's distances (PinHost) and checks
// that its copy lands straight in them, through no stage and with no move
// on the host, while an unpinned block's copy still moves through the
// stage; and that PinHost refuses overlapping memory and UnpinHost
// unregisters.
func TestPinnedCopyGoesDirect(t *testing.T) {
	dv, f := newFakeCopyDevice()
	defer dv.copier.stop()
	dv.work = make(chan func())
	go func() {
		for w := range dv.work {
			w()
		}
	}()
	defer close(dv.work)
	const n, k = 7, 3
	r := fakeRunner(dv, n, graph.DistInt32)
	for i := range r.buf.slots {
		r.buf.slots[i].dist = f.devAlloc(make([]byte, k*n*4))
	}
	dev := unsafe.Slice((*int32)(unsafe.Pointer(&f.dev[r.buf.slots[0].dist.ptr][0])), k*n)
	for c := range dev {
		dev[c] = int32(3*c + 1)
	}
	pinned := graph.NewBlock(make([]graph.VertexID, k), n, graph.DistInt32, false)
	plain := graph.NewBlock(make([]graph.VertexID, k), n, graph.DistInt32, false)
	pinnedBytes, _ := sliceBytes(pinned.Dist)
	if err := r.PinHost(pinnedBytes); err != nil {
		t.Fatal(err)
	}
	if err := r.PinHost(pinnedBytes[8:16]); err == nil {
		t.Error("PinHost of memory already pinned succeeded")
	}
	for _, tc := range []struct {
		name   string
		out    *graph.Block
		direct bool
	}{{"pinned", pinned, true}, {"plain", plain, false}} {
		dist, _ := sliceBytes(tc.out.Dist)
		s := &r.buf.slots[0]
		s.settle()
		j, err := r.buf.queueCopy(s, copyOut{dist: dist})
		if err != nil {
			t.Fatal(err)
		}
		if err := (&Pending{jobs: []*copyJob{j}}).Wait(); err != nil {
			t.Fatal(err)
		}
		if got := len(j.moves) == 0 && len(j.stage) == 0; got != tc.direct {
			t.Errorf("%s block: went direct = %v (moves %d, stage %d bytes), want %v", tc.name, got, len(j.moves), len(j.stage), tc.direct)
		}
		if !slices.Equal(tc.out.Dist.([]int32), dev) {
			t.Errorf("%s block: got %v, want %v", tc.name, tc.out.Dist, dev)
		}
	}
	f.calls = nil
	if err := r.UnpinHost(pinnedBytes); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.calls, "cuMemHostUnregister") || len(dv.pins.pins) != 0 || dv.pins.pinned(pinnedBytes) {
		t.Errorf("UnpinHost left %d pins (calls %v)", len(dv.pins.pins), f.calls)
	}
	if err := r.buf.releaseSlots(); err != nil {
		t.Fatal(err)
	}
}

// TestCopyAcrossAdjoiningPins pins a block's distances as two ranges side
// by side, cut inside a row (as the pipeline pins the pages of an output
// mapping), and checks that the copy still goes direct, as one device
// copy per range, each wholly inside one registration, and lands whole;
// and that a block reaching past the pinned ranges goes through the stage.
func TestCopyAcrossAdjoiningPins(t *testing.T) {
	dv, f := newFakeCopyDevice()
	defer dv.copier.stop()
	dv.work = make(chan func())
	go func() {
		for w := range dv.work {
			w()
		}
	}()
	defer close(dv.work)
	type span struct{ lo, hi uintptr }
	var mu sync.Mutex
	var registered []span
	var direct []span // destinations of device copies outside any stage
	d := dv.d
	d.cuMemHostRegister_v2 = func(p unsafe.Pointer, size uint64, _ uint32) Result {
		mu.Lock()
		registered = append(registered, span{uintptr(p), uintptr(p) + uintptr(size)})
		mu.Unlock()
		return f.call("cuMemHostRegister_v2")
	}
	copyDtoH := d.cuMemcpyDtoHAsync_v2
	d.cuMemcpyDtoHAsync_v2 = func(dst unsafe.Pointer, src uint64, size uint64, s uintptr) Result {
		inStage := false
		f.mu.Lock()
		for p, b := range f.host {
			if uintptr(dst) >= uintptr(p) && uintptr(dst)+uintptr(size) <= uintptr(p)+uintptr(len(b)) {
				inStage = true
			}
		}
		f.mu.Unlock()
		if !inStage {
			mu.Lock()
			direct = append(direct, span{uintptr(dst), uintptr(dst) + uintptr(size)})
			mu.Unlock()
		}
		return copyDtoH(dst, src, size, s)
	}
	const n, k = 7, 3
	r := fakeRunner(dv, n, graph.DistInt32)
	for i := range r.buf.slots {
		r.buf.slots[i].dist = f.devAlloc(make([]byte, k*n*4))
	}
	dev := unsafe.Slice((*int32)(unsafe.Pointer(&f.dev[r.buf.slots[0].dist.ptr][0])), k*n)
	for c := range dev {
		dev[c] = int32(5*c + 2)
	}
	blk := graph.NewBlock(make([]graph.VertexID, k), n, graph.DistInt32, false)
	dist, _ := sliceBytes(blk.Dist)
	const cut = 4*n + 12 // inside the second row
	for _, b := range [][]byte{dist[cut:], dist[:cut]} {
		if err := r.PinHost(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.PinHost(dist[cut-4 : cut+4]); err == nil {
		t.Error("PinHost of a range across two pinned ones succeeded")
	}
	copyOnce := func(out []byte) *copyJob {
		t.Helper()
		s := &r.buf.slots[0]
		s.settle()
		j, err := r.buf.queueCopy(s, copyOut{dist: out})
		if err != nil {
			t.Fatal(err)
		}
		if err := (&Pending{jobs: []*copyJob{j}}).Wait(); err != nil {
			t.Fatal(err)
		}
		return j
	}
	j := copyOnce(dist)
	if len(j.moves) != 0 || len(j.stage) != 0 {
		t.Errorf("a block in two adjoining pinned ranges went through the stage (moves %d, stage %d bytes)", len(j.moves), len(j.stage))
	}
	if !slices.Equal(blk.Dist.([]int32), dev) {
		t.Errorf("got %v, want %v", blk.Dist, dev)
	}
	if len(direct) != 2 {
		t.Errorf("%d direct device copies, want one per pinned range (2)", len(direct))
	}
	for _, c := range direct {
		inOne := false
		for _, reg := range registered {
			inOne = inOne || (c.lo >= reg.lo && c.hi <= reg.hi)
		}
		if !inOne {
			t.Errorf("a device copy into [%#x, %#x) is not inside one registration %v", c.lo, c.hi, registered)
		}
	}
	if err := r.UnpinHost(dist[cut:]); err != nil {
		t.Fatal(err)
	}
	clear(blk.Dist.([]int32))
	if j := copyOnce(dist); len(j.moves) == 0 {
		t.Error("a block half in unpinned memory went direct")
	}
	if !slices.Equal(blk.Dist.([]int32), dev) {
		t.Errorf("through the stage: got %v, want %v", blk.Dist, dev)
	}
	if err := r.UnpinHost(dist[:cut]); err != nil {
		t.Fatal(err)
	}
	if len(dv.pins.pins) != 0 || len(dv.pins.pinning) != 0 {
		t.Errorf("%d pins and %d in flight left", len(dv.pins.pins), len(dv.pins.pinning))
	}
	if err := r.buf.releaseSlots(); err != nil {
		t.Fatal(err)
	}
}

// fakeRunner is a runner of a graph of n vertices and distances of type t
// on dv with nothing prepared: its buffers and copies only.
func fakeRunner(dv *device, n int, t graph.DistType) *Runner {
	r := &Runner{e: &Engine{dev: dv}, n: n, distType: t}
	r.buf.dv, r.buf.n, r.buf.distType = dv, n, t
	return r
}
