package gpu

// Host memory the device copies into directly (design.md, "Data flow").
//
// Results normally reach the caller's block through a pinned stage: the
// device copies into page-locked memory at the link's speed, and the
// copier moves the stage into the block on the host. For the matrix layout
// that move was the largest cost of a run (R-MAT 16 on an H100: 0.9 s of
// host copies for 0.17 s of device copies). A caller that reuses its
// blocks' arrays (package pipeline's block pool) page-locks them once with
// PinHost; a copy whose destination lies wholly in memory pinned that way
// goes straight into it, and nothing is moved on the host.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// hostPins are the ranges of host memory PinHost registered on a device
// (pins), and those being registered or unregistered outside the lock
// (pinning), both guarded by mu.
type hostPins struct {
	mu      sync.Mutex
	pins    []hostPin
	pinning []hostPin
}

// hostPin is a range of Go memory registered with the driver. keep holds
// the slice, so that the memory stays allocated while it is registered.
type hostPin struct {
	keep []byte
}

func (p hostPin) base() uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(p.keep))) }

// contains reports whether b lies wholly inside p.
func (p hostPin) contains(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return lo >= p.base() && lo+uintptr(len(b)) <= p.base()+uintptr(len(p.keep))
}

// overlaps reports whether p and b share a byte.
func (p hostPin) overlaps(b []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return len(b) > 0 && lo < p.base()+uintptr(len(p.keep)) && p.base() < lo+uintptr(len(b))
}

// pinned reports whether b lies wholly in memory registered by
// PinHost (in one range or in several that adjoin).
func (hp *hostPins) pinned(b []byte) bool { return hp.pieces(b) != nil }

// pieces cuts b, where it lies wholly in memory registered by
// PinHost, into pieces that each lie in one registered range, in order;
// nil where some byte of b is not pinned. A copy is queued per piece: a
// copy's destination must be one registration.
func (hp *hostPins) pieces(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	hp.mu.Lock()
	defer hp.mu.Unlock()
	var pieces [][]byte
	for rest := b; len(rest) > 0; {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(rest)))
		found := false
		for _, p := range hp.pins {
			if p.contains(rest[:1]) {
				n := min(len(rest), int(p.base()+uintptr(len(p.keep))-lo))
				pieces = append(pieces, rest[:n])
				rest = rest[n:]
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return pieces
}

// onContext runs f on a goroutine of its own, locked to an OS thread with
// the device's context current, and returns its error: driver calls that
// need the context but not the device goroutine (PinHost) then run while
// that goroutine waits for kernels. It fails with errClosed once the
// device is closing.
func (dv *device) onContext(f func() error) error {
	dv.ctxMu.RLock()
	defer dv.ctxMu.RUnlock()
	dv.mu.Lock()
	quit := dv.quit
	dv.mu.Unlock()
	if quit {
		return errClosed
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := dv.d.cuCtxSetCurrent(dv.ctx).Err("cuCtxSetCurrent"); err != nil {
			errc <- err
			return
		}
		err := f()
		errc <- errors.Join(err, dv.d.cuCtxSetCurrent(0).Err("cuCtxSetCurrent"))
	}()
	return <-errc
}

// dropPin removes p from pins.
func dropPin(pins []hostPin, p hostPin) []hostPin {
	for i, q := range pins {
		if q.base() == p.base() && len(q.keep) == len(p.keep) {
			return append(pins[:i], pins[i+1:]...)
		}
	}
	return pins
}

// unpinAll unlocks everything PinHost pinned (on the device goroutine, at
// teardown, once no copy runs).
func (hp *hostPins) unpinAll(d *driver) error {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	var errs []error
	for _, p := range hp.pins {
		errs = append(errs, d.cuMemHostUnregister(unsafe.Pointer(unsafe.SliceData(p.keep))).Err("cuMemHostUnregister"))
	}
	hp.pins = nil
	return errors.Join(errs...)
}

// pin is Runner.PinHost on dv.
func (hp *hostPins) pin(dv *device, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return dv.onContext(func() error {
		hp.mu.Lock()
		for _, p := range append(hp.pins, hp.pinning...) {
			if p.overlaps(b) {
				hp.mu.Unlock()
				return fmt.Errorf("gpu: PinHost: %d bytes overlap memory already pinned", len(b))
			}
		}
		me := hostPin{keep: b}
		hp.pinning = append(hp.pinning, me)
		hp.mu.Unlock()
		err := dv.d.cuMemHostRegister_v2(unsafe.Pointer(unsafe.SliceData(b)), uint64(len(b)), 0).Err("cuMemHostRegister_v2")
		hp.mu.Lock()
		defer hp.mu.Unlock()
		hp.pinning = dropPin(hp.pinning, me)
		if err != nil {
			return fmt.Errorf("%w (%d bytes)", err, len(b))
		}
		hp.pins = append(hp.pins, me)
		return nil
	})
}

// unpin is Runner.UnpinHost on dv.
func (hp *hostPins) unpin(dv *device, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	err := dv.onContext(func() error {
		hp.mu.Lock()
		me := hostPin{keep: b}
		n := len(hp.pins)
		hp.pins = dropPin(hp.pins, me)
		if len(hp.pins) == n {
			hp.mu.Unlock()
			return nil
		}
		// Still registered: no PinHost may take it until unregistered.
		hp.pinning = append(hp.pinning, me)
		hp.mu.Unlock()
		err := dv.d.cuStreamSynchronize(dv.copyStream).Err("cuStreamSynchronize (copy stream)")
		if err == nil {
			err = dv.d.cuMemHostUnregister(unsafe.Pointer(unsafe.SliceData(b))).Err("cuMemHostUnregister")
		}
		hp.mu.Lock()
		hp.pinning = dropPin(hp.pinning, me)
		hp.mu.Unlock()
		return err
	})
	if errors.Is(err, errClosed) {
		return nil
	}
	return err
}
