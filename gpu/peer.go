package gpu

// Several devices in one process: enumerating them, and preparing a graph
// on one device from the copy another device holds (peer to peer where
// cuDeviceCanAccessPeer allows it), so that the graph crosses from the
// host once.

import (
	"bytes"
	"fmt"
)

// resultPeerAlreadyEnabled is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: a
// second cuCtxEnablePeerAccess between the same contexts.
const resultPeerAlreadyEnabled Result = 704

// DeviceCount is the number of CUDA devices the driver sees. It fails
// where Probe would for want of a driver; no device is a count of 0 with
// an error wrapping ErrNoDevice.
func DeviceCount() (int, error) {
	d, err := initDriver()
	if err != nil {
		return 0, err
	}
	var count int32
	if err := d.cuDeviceGetCount(&count).Err("cuDeviceGetCount"); err != nil {
		return 0, err
	}
	if count == 0 {
		return 0, fmt.Errorf("gpu: %w: cuDeviceGetCount found 0 devices", ErrNoDevice)
	}
	return int(count), nil
}

// Devices describes every CUDA device without opening a context on any:
// name, total memory, compute capability, multiprocessors (FreeMemory
// stays 0: only a context can ask it). It fails as DeviceCount does.
func Devices() ([]DeviceInfo, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	d, _ := initDriver()
	var version int32
	if err := d.cuDriverGetVersion(&version).Err("cuDriverGetVersion"); err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, 0, n)
	for i := range n {
		info := DeviceInfo{Ordinal: i, Count: n, DriverVersion: int(version), Library: d.library}
		var handle int32
		if err := d.cuDeviceGet(&handle, int32(i)).Err("cuDeviceGet"); err != nil {
			return nil, fmt.Errorf("gpu: device %d: %w", i, err)
		}
		name := make([]byte, 256)
		if err := d.cuDeviceGetName(&name[0], int32(len(name)), handle).Err("cuDeviceGetName"); err != nil {
			return nil, fmt.Errorf("gpu: device %d: %w", i, err)
		}
		if j := bytes.IndexByte(name, 0); j >= 0 {
			name = name[:j]
		}
		info.Name = string(name)
		var v int32
		for _, a := range []struct {
			attr int32
			dst  *int
		}{
			{attrComputeMajor, &info.ComputeMajor},
			{attrComputeMinor, &info.ComputeMinor},
			{attrMultiprocessorCount, &info.Multiprocessors},
		} {
			if err := d.cuDeviceGetAttribute(&v, a.attr, handle).Err("cuDeviceGetAttribute"); err != nil {
				return nil, fmt.Errorf("gpu: device %d: %w", i, err)
			}
			*a.dst = int(v)
		}
		var total uint64
		if err := d.cuDeviceTotalMem_v2(&total, handle).Err("cuDeviceTotalMem_v2"); err != nil {
			return nil, fmt.Errorf("gpu: device %d: %w", i, err)
		}
		info.TotalMemory = int64(total)
		out = append(out, info)
	}
	return out, nil
}

// sharePlanGraph makes the plans of r, just prepared, read from's measure of their graph (its
// shape, rank and core, plan.Graph), where both plan the same CSR in its
// own numbering: the runners of one run on several devices then measure
// it once, not once each and one after the other as the pipeline sizes
// the run (docs/benchmarks-history.md, "The host off the devices' path").
func sharePlanGraph(r, from *Runner) {
	from.mu.Lock()
	pg := from.bk.graph
	from.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if pg != nil && r.bk.graph != nil && pg.CSR() == r.g && r.bk.graph.CSR() == r.g {
		r.bk.graph = pg
	}
}

// copyFrom fills dc with copies of the graph buffers of from, on dst's
// goroutine. It reports false, copying nothing, where the devices can
// reach each other only through host memory: the caller uploads from
// the host copy then.
func (dc *deviceCSR) copyFrom(dst *device, from *Runner) (bool, error) {
	src := from.e.dev
	d := dst.d
	sameContext := src.ctx == dst.ctx
	if !sameContext {
		if can, err := enablePeer(dst, src); !can || err != nil {
			return false, err
		}
	}
	for _, b := range []struct{ dst, src *devBuf }{
		{&dc.offsets, &from.csr.offsets}, {&dc.targets, &from.csr.targets}, {&dc.weights, &from.csr.weights},
	} {
		if b.src.ptr == 0 {
			continue // weights a hop-counting runner freed: Prepare uploads them if needed
		}
		buf, err := dst.alloc(b.src.size)
		if err != nil {
			return false, err
		}
		*b.dst = buf
		if sameContext {
			err = d.cuMemcpyDtoD_v2(buf.ptr, b.src.ptr, uint64(b.src.size)).Err("cuMemcpyDtoD_v2")
		} else {
			err = d.cuMemcpyPeer(buf.ptr, dst.ctx, b.src.ptr, src.ctx, uint64(b.src.size)).Err("cuMemcpyPeer")
		}
		if err != nil {
			return false, err
		}
	}
	if err := d.cuCtxSynchronize().Err("cuCtxSynchronize"); err != nil {
		return false, err
	}
	return true, nil
}
