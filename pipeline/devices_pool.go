package pipeline

// A server's GPUs: one engine per device, each query on one of them.

import (
	"errors"
	"io"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// GPUPool is the GPU engines of a server over several devices
// (Options.GPUs), as pathctl serve holds them: opened by the first run
// that wants a GPU, kept until Close. Each run takes one idle device and
// runs whole on it, waiting while every device is busy; with as many
// concurrent runs as devices (serve's --max-concurrent default), none
// waits. Devices that fail to open are left out; where none opens, that
// error is kept: auto runs use the CPU without looking again, gpu runs
// fail with it. A nil *GPUPool is no pool.
type GPUPool struct {
	ordinals []int
	hooks    deviceHooks

	once    sync.Once
	engines []graph.Engine
	err     error
	idle    chan int      // indices of engines no run holds
	done    chan struct{} // closed by Close
	close   sync.Once
}

var errPoolClosed = errors.New("pipeline: the GPU pool is closed")

// NewGPUPool returns the pool of devices (nil: every device), or nil
// where a server needs none: devices is device 0 alone, or every device
// of a machine with at most one. A server without a pool shares one
// engine (SharedGPU).
func NewGPUPool(devices []int) *GPUPool {
	return newGPUPool(devices, gpuDevices)
}

func newGPUPool(devices []int, hooks deviceHooks) *GPUPool {
	if devices == nil {
		n, err := hooks.count()
		if err != nil || n <= 1 {
			return nil
		}
		devices = make([]int, n)
		for i := range devices {
			devices[i] = i
		}
	}
	if len(devices) == 1 && devices[0] == 0 {
		return nil
	}
	return &GPUPool{ordinals: devices, hooks: hooks, done: make(chan struct{})}
}

// DeviceSlots is how many runs a server on devices (nil: every device)
// can give a GPU of its own at once: the devices named, or counted; 1
// where there is no GPU.
func DeviceSlots(devices []int) int {
	if devices != nil {
		return len(devices)
	}
	n, err := gpuDevices.count()
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Size is the number of devices of the pool.
func (p *GPUPool) Size() int { return len(p.ordinals) }

// open opens every device once.
func (p *GPUPool) open() {
	var errs []error
	for _, d := range p.ordinals {
		e, err := p.hooks.open(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.engines = append(p.engines, e)
	}
	if len(p.engines) == 0 {
		p.err = errors.Join(errs...)
		return
	}
	p.idle = make(chan int, len(p.engines))
	for i := range p.engines {
		p.idle <- i
	}
}

// acquire opens the devices on first use and waits for an idle one; call
// release when the run is done with it.
func (p *GPUPool) acquire() (eng graph.Engine, release func(), err error) {
	select {
	case <-p.done:
		return nil, nil, errPoolClosed
	default:
	}
	p.once.Do(p.open)
	if p.err != nil {
		return nil, nil, p.err
	}
	select {
	case i := <-p.idle:
		return p.engines[i], func() { p.idle <- i }, nil
	case <-p.done:
		return nil, nil, errPoolClosed
	}
}

// Close waits for the runs holding a device and closes every engine;
// later runs find the pool closed.
func (p *GPUPool) Close() error {
	if p == nil {
		return nil
	}
	var errs []error
	p.close.Do(func() {
		close(p.done)
		p.once.Do(func() { p.err = errPoolClosed }) // never opened: stays so
		for range p.engines {
			i := <-p.idle
			errs = append(errs, closeEngineErr(p.engines[i]))
		}
	})
	return errors.Join(errs...)
}

// closeEngineErr closes an engine that holds a device (an io.Closer).
func closeEngineErr(e graph.Engine) error {
	if c, ok := e.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// poolEngine chooses the engine of a run of a server with a pool: auto
// and gpu take one idle device of it.
func poolEngine(opt Options, tune string, sources int) (graph.Engine, func(), error) {
	var release func()
	eng, err := chooseEngine(opt, sources, func() (graph.Engine, error) {
		e, r, err := opt.GPUs.acquire()
		if err != nil {
			return nil, err
		}
		release = r
		return tuned(e, tune), nil
	})
	if err != nil {
		if release != nil {
			release()
		}
		return nil, nil, err
	}
	if release == nil {
		release = func() {}
	}
	return eng, release, nil
}
