package gpu

import (
	"bytes"
	"fmt"
)

// DeviceInfo describes a CUDA device as Probe finds it.
type DeviceInfo struct {
	Name            string // such as "NVIDIA H100 80GB HBM3"
	Ordinal         int    // the device's index
	Count           int    // how many CUDA devices the driver sees
	DriverVersion   int    // CUDA version of the driver, 1000·major + 10·minor
	ComputeMajor    int    // compute capability
	ComputeMinor    int
	Multiprocessors int
	TotalMemory     int64  // bytes
	FreeMemory      int64  // bytes free when probed
	Library         string // the driver library opened
}

// String is one line for `pathctl info`.
func (i *DeviceInfo) String() string {
	return fmt.Sprintf("%s (device %d of %d, compute %d.%d, %d SMs, %.1f GiB free of %.1f GiB, CUDA driver %d.%d, %s)",
		i.Name, i.Ordinal, i.Count, i.ComputeMajor, i.ComputeMinor, i.Multiprocessors,
		float64(i.FreeMemory)/(1<<30), float64(i.TotalMemory)/(1<<30),
		i.DriverVersion/1000, (i.DriverVersion%1000)/10, i.Library)
}

// Probe opens device 0 and describes it, or says exactly why no GPU can be
// used: the driver library was not found (naming every library tried), it
// lacks a symbol, cuInit found no device (the error wraps ErrNoDevice), the
// context or the kernel image failed to load, and so on. It takes a context
// for a moment, so it costs about as much as New.
func Probe() (*DeviceInfo, error) {
	dv, err := openDevice(0)
	if err != nil {
		return nil, err
	}
	info, err := dv.info()
	if cerr := dv.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return info, nil
}

// info queries the device.
func (dv *device) info() (*DeviceInfo, error) {
	info := &DeviceInfo{Ordinal: dv.ordinal, Library: dv.d.library}
	err := dv.do(func() error {
		d := dv.d
		var v, count int32
		if err := d.cuDriverGetVersion(&v).Err("cuDriverGetVersion"); err != nil {
			return err
		}
		info.DriverVersion = int(v)
		if err := d.cuDeviceGetCount(&count).Err("cuDeviceGetCount"); err != nil {
			return err
		}
		info.Count = int(count)
		name := make([]byte, 256)
		if err := d.cuDeviceGetName(&name[0], int32(len(name)), dv.handle).Err("cuDeviceGetName"); err != nil {
			return err
		}
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		info.Name = string(name)
		for _, a := range []struct {
			attr int32
			dst  *int
		}{
			{attrComputeMajor, &info.ComputeMajor},
			{attrComputeMinor, &info.ComputeMinor},
			{attrMultiprocessorCount, &info.Multiprocessors},
		} {
			if err := d.cuDeviceGetAttribute(&v, a.attr, dv.handle).Err("cuDeviceGetAttribute"); err != nil {
				return err
			}
			*a.dst = int(v)
		}
		var total uint64
		if err := d.cuDeviceTotalMem_v2(&total, dv.handle).Err("cuDeviceTotalMem_v2"); err != nil {
			return err
		}
		free, _, err := dv.memInfo()
		info.TotalMemory, info.FreeMemory = int64(total), free
		return err
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}
