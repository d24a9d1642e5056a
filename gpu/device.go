package gpu

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Device attributes read through cuDeviceGetAttribute.
const (
	attrMultiprocessorCount = 16
	attrComputeMajor        = 75
	attrComputeMinor        = 76
)

// maxKernelArgs bounds the parameters of one launch.
const maxKernelArgs = 16

var (
	initOnce sync.Once
	initErr  error
)

// initDriver loads the driver library and runs cuInit once per process.
func initDriver() (*driver, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	initOnce.Do(func() {
		switch r := d.cuInit(0); r {
		case Success:
		case ResultNoDevice:
			initErr = fmt.Errorf("gpu: %w: cuInit returned %s (%d)", ErrNoDevice, r.Name(), int32(r))
		default:
			initErr = r.Err("cuInit")
		}
	})
	if initErr != nil {
		return nil, initErr
	}
	return d, nil
}

// device drives one GPU. Every driver call that needs its context runs on one
// goroutine locked to its OS thread, where the context is current; other
// goroutines hand it work through do.
type device struct {
	d       *driver
	ordinal int
	handle  int32
	ctx     uintptr
	module  uintptr
	// funcs holds the function of every kernel of kernelTable, in its
	// order: resolved when the image is loaded, or, with lazyKernels, on
	// the kernel's first launch (guarded by funcMu).
	funcs  []uintptr
	funcMu sync.Mutex
	// opened is where openDevice's time went.
	opened OpenTimes
	// argBlock is pinned host memory holding a launch's parameter values
	// (8-byte slots) followed by the table of pointers to them.
	argBlock unsafe.Pointer
	// start and stop time the last launch.
	start, stop uintptr
	// lastKernel is the duration of the last launch, by CUDA events.
	lastKernel time.Duration
	// copyStream is a non-blocking stream for the device-to-host copies of
	// results (overlap.go): it runs beside the kernels, which stay on the
	// legacy default stream 0, and never waits for them except through
	// computeDone, an event recorded on stream 0 after a block's kernels.
	copyStream  uintptr
	computeDone uintptr
	// peerStream is a non-blocking stream for copies between devices
	// (copyDevice): cuMemcpyPeer would wait for the work of both devices'
	// default streams, so a device could not take rows while it computes.
	// (Cut in 2 or 4 pieces on as many streams, R-MAT 18's copies took as
	// long; docs/benchmarks-history.md, "The shared hub rows sent as they come".)
	peerStream uintptr
	// copier lands the copies queued on copyStream (copier.go).
	copier copier
	// pins are the ranges of host memory PinHost registered (hostpin.go).
	pins hostPins
	// ctxMu is held for reading by driver calls made off the device
	// goroutine (onContext) and for writing by close, so that the context
	// outlives them.
	ctxMu sync.RWMutex

	work chan func()
	mu   sync.Mutex // guards closed and sends on work
	quit bool

	live atomic.Int64 // device bytes allocated and not yet freed
}

// openDevice starts the worker of device ordinal, retains its primary
// context and loads the kernel image.
func openDevice(ordinal int) (*device, error) {
	start := time.Now()
	d, err := initDriver()
	if err != nil {
		return nil, err
	}
	driverTime := time.Since(start)
	var count int32
	if err := d.cuDeviceGetCount(&count).Err("cuDeviceGetCount"); err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, fmt.Errorf("gpu: %w: cuDeviceGetCount found 0 devices", ErrNoDevice)
	}
	if ordinal < 0 || ordinal >= int(count) {
		return nil, fmt.Errorf("gpu: device %d does not exist (%d found)", ordinal, count)
	}
	dv := &device{d: d, ordinal: ordinal, work: make(chan func())}
	ready := make(chan error, 1)
	go dv.loop(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	dv.opened.Driver = driverTime
	return dv, nil
}

// loop is the device's goroutine. It never unlocks its OS thread, so the
// thread ends with the goroutine and no other goroutine inherits the context.
func (dv *device) loop(ready chan<- error) {
	runtime.LockOSThread()
	err := dv.setup()
	ready <- err
	if err != nil {
		return
	}
	for f := range dv.work {
		f()
	}
}

func (dv *device) setup() (err error) {
	d := dv.d
	start := time.Now()
	if err := d.cuDeviceGet(&dv.handle, int32(dv.ordinal)).Err("cuDeviceGet"); err != nil {
		return err
	}
	if err := d.cuDevicePrimaryCtxRetain(&dv.ctx, dv.handle).Err("cuDevicePrimaryCtxRetain"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			dv.teardown()
		}
	}()
	if err := d.cuCtxSetCurrent(dv.ctx).Err("cuCtxSetCurrent"); err != nil {
		return err
	}
	if len(kernelImage) == 0 {
		return errors.New("gpu: the kernel image is empty; run gpu/kernels/build.sh")
	}
	dv.opened.Context = time.Since(start)
	start = time.Now()
	if err := d.cuModuleLoadData(&dv.module, unsafe.Pointer(&kernelImage[0])).Err("cuModuleLoadData"); err != nil {
		return err
	}
	if lazyKernels {
		dv.funcs = make([]uintptr, len(kernelTable))
	} else if dv.funcs, err = resolveKernels(d, dv.module); err != nil {
		return err
	}
	dv.opened.Kernels = time.Since(start)
	if err := d.cuEventCreate(&dv.start, 0).Err("cuEventCreate"); err != nil {
		return err
	}
	if err := d.cuEventCreate(&dv.stop, 0).Err("cuEventCreate"); err != nil {
		return err
	}
	size := uint64(maxKernelArgs * 16)
	if err := d.cuMemHostAlloc(&dv.argBlock, size, 0).Err("cuMemHostAlloc"); err != nil {
		return err
	}
	if err := d.cuStreamCreate(&dv.copyStream, streamNonBlocking).Err("cuStreamCreate"); err != nil {
		return err
	}
	if err := d.cuStreamCreate(&dv.peerStream, streamNonBlocking).Err("cuStreamCreate"); err != nil {
		return err
	}
	if err := d.cuEventCreate(&dv.computeDone, eventDisableTiming).Err("cuEventCreate"); err != nil {
		return err
	}
	dv.copier.start(dv)
	return nil
}

// Flags of cuStreamCreate and cuEventCreate.
const (
	// streamNonBlocking (CU_STREAM_NON_BLOCKING) keeps a stream from
	// synchronising with the legacy default stream.
	streamNonBlocking = 1
	// eventDisableTiming (CU_EVENT_DISABLE_TIMING) makes an event cheaper to
	// record and wait for when nobody reads its time.
	eventDisableTiming = 2
)

// teardown releases what setup took, on the device goroutine.
func (dv *device) teardown() error {
	d := dv.d
	dv.copier.stop()
	var errs []error
	errs = append(errs, dv.pins.unpinAll(dv.d))
	if dv.computeDone != 0 {
		errs = append(errs, d.cuEventDestroy_v2(dv.computeDone).Err("cuEventDestroy_v2"))
		dv.computeDone = 0
	}
	if dv.copyStream != 0 {
		errs = append(errs, d.cuStreamDestroy_v2(dv.copyStream).Err("cuStreamDestroy_v2"))
		dv.copyStream = 0
	}
	if dv.peerStream != 0 {
		errs = append(errs, d.cuStreamDestroy_v2(dv.peerStream).Err("cuStreamDestroy_v2"))
		dv.peerStream = 0
	}
	if dv.argBlock != nil {
		errs = append(errs, d.cuMemFreeHost(dv.argBlock).Err("cuMemFreeHost"))
		dv.argBlock = nil
	}
	for _, ev := range []*uintptr{&dv.start, &dv.stop} {
		if *ev != 0 {
			errs = append(errs, d.cuEventDestroy_v2(*ev).Err("cuEventDestroy_v2"))
			*ev = 0
		}
	}
	if dv.module != 0 {
		errs = append(errs, d.cuModuleUnload(dv.module).Err("cuModuleUnload"))
		dv.module = 0
	}
	if dv.ctx != 0 {
		errs = append(errs, d.cuCtxSetCurrent(0).Err("cuCtxSetCurrent"))
		errs = append(errs, d.cuDevicePrimaryCtxRelease_v2(dv.handle).Err("cuDevicePrimaryCtxRelease_v2"))
		dv.ctx = 0
	}
	return errors.Join(errs...)
}

// errClosed is returned by work handed to a closed device.
var errClosed = errors.New("gpu: engine closed")

// do runs f on the device goroutine and returns its error.
func (dv *device) do(f func() error) error {
	dv.mu.Lock()
	if dv.quit {
		dv.mu.Unlock()
		return errClosed
	}
	errc := make(chan error, 1)
	dv.work <- func() { errc <- f() }
	dv.mu.Unlock()
	return <-errc
}

// close tears the context down and ends the goroutine.
func (dv *device) close() error {
	return dv.end(dv.teardown)
}

// abandon ends the device's use without tearing its context down, for a
// process about to exit: the exit releases the context, the module and
// every allocation at once, where teardown frees them one by one. It waits
// for the work queued on the device, so that an error of it is still
// reported, ends the device goroutine, and makes later work fail with
// errClosed; close does nothing after it.
func (dv *device) abandon() error {
	return dv.end(func() error { return dv.d.cuCtxSynchronize().Err("cuCtxSynchronize") })
}

// end runs last on the device goroutine, then ends the goroutine, so that
// later work fails with errClosed; ending an ended device returns nil.
func (dv *device) end(last func() error) error {
	dv.ctxMu.Lock()
	defer dv.ctxMu.Unlock()
	err := dv.do(last)
	dv.mu.Lock()
	if !dv.quit {
		dv.quit = true
		close(dv.work)
	}
	dv.mu.Unlock()
	if errors.Is(err, errClosed) {
		return nil
	}
	return err
}

// The methods below run on the device goroutine (inside do).

// devBuf is device memory.
type devBuf struct {
	ptr  uint64
	size int64
}

// alloc takes size bytes of device memory; size 0 gives a null buffer.
func (dv *device) alloc(size int64) (devBuf, error) {
	if size <= 0 {
		return devBuf{}, nil
	}
	var p uint64
	if allocFault != nil && allocFault(size) {
		return devBuf{}, fmt.Errorf("%w (asked for %d bytes)", ResultOutOfMemory.Err("cuMemAlloc_v2"), size)
	}
	if err := dv.d.cuMemAlloc_v2(&p, uint64(size)).Err("cuMemAlloc_v2"); err != nil {
		return devBuf{}, fmt.Errorf("%w (asked for %d bytes)", err, size)
	}
	dv.live.Add(size)
	return devBuf{ptr: p, size: size}, nil
}

// free returns b's memory and clears b.
func (dv *device) free(b *devBuf) error {
	if b.ptr == 0 {
		return nil
	}
	err := dv.d.cuMemFree_v2(b.ptr).Err("cuMemFree_v2")
	dv.live.Add(-b.size)
	*b = devBuf{}
	return err
}

// upload copies the bytes of host into a new device buffer.
func (dv *device) upload(host []byte) (devBuf, error) {
	b, err := dv.alloc(int64(len(host)))
	if err != nil || b.ptr == 0 {
		return b, err
	}
	if err := dv.d.cuMemcpyHtoD_v2(b.ptr, unsafe.Pointer(&host[0]), uint64(len(host))).Err("cuMemcpyHtoD_v2"); err != nil {
		dv.free(&b)
		return devBuf{}, err
	}
	return b, nil
}

// function returns the kernel called name, resolved at setup or, with
// lazyKernels, here on its first use, and its entry in kernelTable.
func (dv *device) function(name string) (uintptr, *kernelEntry, error) {
	i, ok := kernelIndex[name]
	if !ok {
		return 0, nil, fmt.Errorf("gpu: no kernel %s in the kernel table (gpu/kernels_gen.go)", name)
	}
	dv.funcMu.Lock()
	defer dv.funcMu.Unlock()
	if dv.funcs[i] == 0 {
		f, err := resolveKernel(dv.d, dv.module, name)
		if err != nil {
			return 0, nil, err
		}
		dv.funcs[i] = f
	}
	return dv.funcs[i], &kernelTable[i], nil
}

// launchAsync queues kernel name on grid blocks of threadsPerBlock threads
// on the default stream and returns without waiting; errors of the kernel
// itself show at the next synchronising call. Arguments are as for launch
// (the driver copies their values when the launch is queued, so the
// argument block may be reused at once).
func (dv *device) launchAsync(name string, grid int, args ...any) error {
	if grid <= 0 {
		return nil
	}
	if grid > math.MaxInt32 {
		return fmt.Errorf("gpu: %s: grid of %d blocks is too large", name, grid)
	}
	if len(args) > maxKernelArgs {
		return fmt.Errorf("gpu: %s: %d kernel arguments, at most %d", name, len(args), maxKernelArgs)
	}
	f, k, err := dv.function(name)
	if err != nil {
		return err
	}
	if len(args) != len(k.params) {
		return argCountError(k, len(args))
	}
	slots := unsafe.Slice((*uint64)(dv.argBlock), maxKernelArgs)
	table := unsafe.Slice((*unsafe.Pointer)(unsafe.Add(dv.argBlock, maxKernelArgs*8)), maxKernelArgs)
	for i, a := range args {
		v, ok := argSlot(k.params[i].kind, a)
		if !ok {
			return argTypeError(k, i, a)
		}
		slots[i] = v
		table[i] = unsafe.Pointer(&slots[i])
	}
	r := dv.d.cuLaunchKernel(f, uint32(grid), 1, 1, threadsPerBlock, 1, 1, 0, 0, unsafe.Pointer(&table[0]), nil)
	if err := r.Err("cuLaunchKernel " + name); err != nil {
		return err
	}
	return debugCheck(dv, name)
}

// launch runs kernel name on grid blocks of threadsPerBlock threads and waits
// for it. args are in the kernel's parameter order, each of the Go type its
// parameter's kind asks (kernelTable): device pointers and unsigned values
// uint64, int int32, long long int64, double float64.
func (dv *device) launch(name string, grid int, args ...any) error {
	if grid <= 0 {
		return nil
	}
	// A kernel resolved on its first launch is loaded before the timing.
	if _, _, err := dv.function(name); err != nil {
		return err
	}
	if err := dv.d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	if err := dv.launchAsync(name, grid, args...); err != nil {
		return err
	}
	return dv.finishTimed(name)
}

// finishTimed ends a timed sequence of launches begun by recording
// dv.start: it records dv.stop, waits for the default stream (errors name
// the sequence's kernel) and leaves the device time in dv.lastKernel.
func (dv *device) finishTimed(name string) error {
	if err := dv.d.cuEventRecord(dv.stop, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	if err := dv.syncCompute(name); err != nil {
		return err
	}
	var ms float32
	if err := dv.d.cuEventElapsedTime(&ms, dv.start, dv.stop).Err("cuEventElapsedTime"); err != nil {
		return err
	}
	dv.lastKernel = time.Duration(float64(ms) * float64(time.Millisecond))
	return nil
}

// syncCompute waits for the work queued on the default stream 0 (kernels,
// memsets), naming in its error the kernel it waited for. It does not use
// cuCtxSynchronize, which would also wait for the result copies running on
// copyStream, the very overlap the copy stream is for.
func (dv *device) syncCompute(after string) error {
	return dv.d.cuStreamSynchronize(0).Err("cuStreamSynchronize after " + after)
}

// readBack copies size bytes at src into host memory at dst once the work
// queued on stream 0 is done (the rounds' control words, download). It waits
// with cuStreamSynchronize first: a synchronous cuMemcpyDtoH_v2 that
// waits for kernels holds the driver meanwhile, and another device's
// thread queueing a copy into this device (cuMemcpyPeerAsync) then blocks
// until the kernels end. Two H200s, one device running memory-bound
// kernels and reading 4 bytes every 11 ms, the other queueing 2 GiB
// (docs/benchmarks-history.md, "Peer copies held up by the other device's reads
// (BenchmarkPeerCopyWhileBusy)"): the call took 2.5-4.0 ms and the copy
// ran at 228-270 GB/s when the reads waited, 40-70 µs and 380-394 GB/s
// when the stream did.
func (dv *device) readBack(dst unsafe.Pointer, src, size uint64, after string) error {
	if err := dv.d.cuStreamSynchronize(0).Err("cuStreamSynchronize after " + after); err != nil {
		return err
	}
	return dv.d.cuMemcpyDtoH_v2(dst, src, size).Err("cuMemcpyDtoH_v2 after " + after)
}

// pinned is page-locked host memory, for fast device-to-host copies.
type pinned struct {
	p    unsafe.Pointer
	size int64
}

// ensurePinned grows h to at least size bytes.
func (dv *device) ensurePinned(h *pinned, size int64) error {
	if h.size >= size {
		return nil
	}
	if err := dv.freePinned(h); err != nil {
		return err
	}
	if err := dv.d.cuMemHostAlloc(&h.p, uint64(size), 0).Err("cuMemHostAlloc"); err != nil {
		return fmt.Errorf("%w (asked for %d bytes)", err, size)
	}
	h.size = size
	return nil
}

func (dv *device) freePinned(h *pinned) error {
	if h.p == nil {
		return nil
	}
	err := dv.d.cuMemFreeHost(h.p).Err("cuMemFreeHost")
	*h = pinned{}
	return err
}

// download copies size bytes at src into dst through the pinned stage.
func (dv *device) download(dst []byte, src uint64, stage *pinned) error {
	if len(dst) == 0 {
		return nil
	}
	if err := dv.ensurePinned(stage, int64(len(dst))); err != nil {
		return err
	}
	if err := dv.readBack(stage.p, src, uint64(len(dst)), "download"); err != nil {
		return err
	}
	parallelCopy(dst, unsafe.Slice((*byte)(stage.p), len(dst)))
	return nil
}

// parallelCopy copies src into dst with up to GOMAXPROCS goroutines: one
// core copies pinned memory at a fraction of what the device-to-host link
// delivers.
func parallelCopy(dst, src []byte) {
	const chunk = 8 << 20
	workers := min(runtime.GOMAXPROCS(0), (len(src)+chunk-1)/chunk)
	if workers <= 1 {
		copy(dst, src)
		return
	}
	per := (len(src) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(src); lo += per {
		hi := min(lo+per, len(src))
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}

// memInfo returns the free and total device memory.
func (dv *device) memInfo() (free, total int64, err error) {
	var f, t uint64
	if err := dv.d.cuMemGetInfo_v2(&f, &t).Err("cuMemGetInfo_v2"); err != nil {
		return 0, 0, err
	}
	return int64(f), int64(t), nil
}
