package pipeline

// The GPU engine's side of the multi-device runs (devices.go).

import "github.com/pathctl/pathctl/graph"

// gpuDeviceCount is the number of CUDA devices the driver sees.
func gpuDeviceCount() (int, error) { return gpuDriver.Count() }

// newGPUOn opens the GPU engine on device ordinal, counting it.
func newGPUOn(ordinal int) (graph.GPUDevice, error) {
	gpuOpens.Add(1)
	return gpuDriver.Open(ordinal)
}

// firstDevice is the device a graph is built on for runs on devices (nil:
// every device): the first named, else device 0.
func firstDevice(devices []int) int {
	if len(devices) > 0 {
		return devices[0]
	}
	return 0
}

// openGPUOn opens the GPU engine on device ordinal. The caller closes it.
func openGPUOn(ordinal int) (graph.Engine, error) {
	e, err := newGPUOn(ordinal)
	if err != nil {
		return nil, err
	}
	return e.Engine(""), nil
}

// DeviceStatus is one GPU as pathctl info lists it.
type DeviceStatus struct {
	Ordinal         int    `json:"ordinal"`
	Name            string `json:"name"`
	TotalMemory     int64  `json:"total_memory"`
	Compute         string `json:"compute_capability"` // such as "9.0"
	Multiprocessors int    `json:"multiprocessors"`
}

// GPUDevices lists every CUDA device the driver sees, without opening a
// context on any; nil where there is no driver or no device (GPUStatus
// says why).
func GPUDevices() []DeviceStatus {
	devs, err := gpuDriver.List()
	if err != nil {
		return nil
	}
	out := make([]DeviceStatus, len(devs))
	for i, d := range devs {
		out[i] = DeviceStatus{Ordinal: d.Ordinal, Name: d.Name, TotalMemory: d.TotalMemory, Compute: d.Compute, Multiprocessors: d.Multiprocessors}
	}
	return out
}
