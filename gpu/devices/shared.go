package devices

// A server's GPUs: one device shared by the runs of many graphs (Shared),
// or, over several devices, one engine per device, each query on one of
// them (Pool).

import (
	"errors"
	"io"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// Shared is one GPU device for the runs of many graphs (graph.SharedGPU),
// as a server holds it: the device is opened by the first run that wants
// it and stays open until Close, so later runs skip opening it (a quarter
// of a second on an H100). Runs on it take turns, one at a time. Where the
// device cannot open, that error is kept: auto runs use the CPU without
// looking again, gpu runs fail with it. The zero value opens device 0.
type Shared struct {
	// open opens the device (nil: device 0 of the driver).
	open func() (graph.GPUDevice, error)

	once sync.Once
	e    graph.GPUDevice
	err  error
	// turn is held by the run using the device, and by Close.
	turn sync.Mutex
	// forget guards e for the methods that must not wait for a run's turn
	// (Forget, TryAcquire, GraphUploads, KeptBytes): whatever sets e
	// holds it.
	forget sync.Mutex
}

var _ graph.SharedGPU = (*Shared)(nil)

var errSharedClosed = errors.New("devices: the shared GPU engine is closed")

// Acquire opens the device on first use and waits for the turn; call
// release once the run is done with it.
func (s *Shared) Acquire() (graph.GPUDevice, func(), error) {
	s.once.Do(func() {
		open := s.open
		if open == nil {
			open = func() (graph.GPUDevice, error) { return Driver{}.Open(0) }
		}
		e, err := open()
		s.forget.Lock()
		s.e, s.err = e, err
		s.forget.Unlock()
	})
	if s.err != nil {
		return nil, nil, s.err
	}
	s.turn.Lock()
	if s.e == nil {
		s.turn.Unlock()
		return nil, nil, errSharedClosed
	}
	return s.e, s.turn.Unlock, nil
}

// TryAcquire takes the turn where the device is open and no run holds it
// this instant; it never opens the device, and never waits.
func (s *Shared) TryAcquire() (graph.GPUDevice, func(), bool) {
	s.forget.Lock()
	e := s.e
	s.forget.Unlock()
	if e == nil || !s.turn.TryLock() {
		return nil, nil, false
	}
	if s.e != e { // closed meanwhile
		s.turn.Unlock()
		return nil, nil, false
	}
	return e, s.turn.Unlock, true
}

// Opened reports whether the device is open.
func (s *Shared) Opened() bool {
	s.turn.Lock()
	defer s.turn.Unlock()
	return s.e != nil
}

// Forget frees the device copy kept of csr, at once or, where a run is
// using it, when that run ends; later runs upload it again. It does not
// wait for the turn. Forgetting a graph not kept does nothing.
func (s *Shared) Forget(csr *graph.CSR) error {
	s.forget.Lock()
	defer s.forget.Unlock()
	if s.e == nil {
		return nil
	}
	return s.e.DropCSR(csr)
}

// GraphUploads is the number of times the device copied a graph's CSR
// from host memory, 0 before it opened.
func (s *Shared) GraphUploads() int64 {
	s.forget.Lock()
	defer s.forget.Unlock()
	if s.e == nil {
		return 0
	}
	return s.e.GraphUploads()
}

// KeptBytes is the device memory of the CSRs kept now, 0 before the
// device opened.
func (s *Shared) KeptBytes() int64 {
	s.forget.Lock()
	defer s.forget.Unlock()
	if s.e == nil {
		return 0
	}
	return s.e.KeptBytes()
}

// Close waits for the run using the device, if any, and closes it, which
// frees every CSR kept on it; later runs find it closed. Closing a device
// never opened does nothing.
func (s *Shared) Close() error {
	s.once.Do(func() { s.err = errSharedClosed }) // never opened: stays so
	s.turn.Lock()
	defer s.turn.Unlock()
	s.forget.Lock()
	e := s.e
	s.e = nil
	s.forget.Unlock()
	if e == nil {
		return nil
	}
	return e.Close()
}

// Pool is the GPU engines of a server over several devices
// (graph.GPUPool), as pathctl serve holds them: opened by the first run
// that wants a GPU, kept until Close. Each run takes one idle device and
// runs whole on it, waiting while every device is busy; with as many
// concurrent runs as devices (serve's --max-concurrent default), none
// waits. Devices that fail to open are left out; where none opens, that
// error is kept: auto runs use the CPU without looking again, gpu runs
// fail with it.
type Pool struct {
	ordinals []int
	open     func(ordinal int) (graph.Engine, error)

	once    sync.Once
	engines []graph.Engine
	err     error
	idle    chan int      // indices of engines no run holds
	done    chan struct{} // closed by Close
	close   sync.Once
}

var _ graph.GPUPool = (*Pool)(nil)

var errPoolClosed = errors.New("devices: the GPU pool is closed")

// NewPool returns the pool of devices (nil: every device), or nil where a
// server needs none: devices is device 0 alone, or every device of a
// machine with at most one. A server without a pool shares one device
// (Shared).
func NewPool(devices []int) *Pool {
	return Driver{}.newPool(devices)
}

func (d Driver) newPool(devices []int) *Pool {
	if devices == nil {
		n, err := d.Count()
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
	return &Pool{ordinals: devices, open: d.engine, done: make(chan struct{})}
}

// Slots is how many runs a server on devices (nil: every device) can give
// a GPU of its own at once: the devices named, or counted; 1 where there
// is no GPU.
func Slots(devices []int) int {
	if devices != nil {
		return len(devices)
	}
	n, err := Driver{}.Count()
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Size is the number of devices of the pool.
func (p *Pool) Size() int { return len(p.ordinals) }

// openAll opens every device once.
func (p *Pool) openAll() {
	var errs []error
	for _, d := range p.ordinals {
		e, err := p.open(d)
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

// Acquire opens the devices on first use and waits for an idle one; call
// release when the run is done with it.
func (p *Pool) Acquire() (eng graph.Engine, release func(), err error) {
	select {
	case <-p.done:
		return nil, nil, errPoolClosed
	default:
	}
	p.once.Do(p.openAll)
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
func (p *Pool) Close() error {
	if p == nil {
		return nil
	}
	var errs []error
	p.close.Do(func() {
		close(p.done)
		p.once.Do(func() { p.err = errPoolClosed }) // never opened: stays so
		for range p.engines {
			i := <-p.idle
			if c, ok := p.engines[i].(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
	})
	return errors.Join(errs...)
}
