package pipeline

import (
	"errors"
	"fmt"
)

// Download is a measured device-to-host copy rate and the device that
// copied.
type Download struct {
	BytesPerSecond float64
	Device         string // the GPU's name, such as "NVIDIA H100 80GB HBM3"
	CUDADriver     int    // CUDA version of the driver, 1000·major + 10·minor
}

// MeasureDownload opens the GPU engine on the first device, measures the
// device-to-host rate from pinned memory with up to 256 MiB (a quarter of
// the free memory at most) and closes the engine. It takes about a second.
// Errors: those of opening the engine (no driver, no GPU), too little free
// memory, or a failed copy.
func MeasureDownload() (Download, error) {
	e, err := newGPU()
	if err != nil {
		return Download{}, err
	}
	free, err := e.FreeMemory()
	if err != nil {
		return Download{}, errors.Join(err, e.Close())
	}
	size := min(int64(256<<20), free/4) &^ 3
	if size <= 0 {
		return Download{}, errors.Join(fmt.Errorf("pipeline: only %d bytes of device memory free", free), e.Close())
	}
	bw, err := e.MeasureDownload(size)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Download{}, err
	}
	info := e.Info()
	return Download{BytesPerSecond: bw, Device: info.Name, CUDADriver: info.DriverVersion}, nil
}
