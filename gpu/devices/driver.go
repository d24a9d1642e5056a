package devices

// Driver: the GPU side of the process as the pipeline reaches it
// (graph.GPU), over package gpu; device: one opened engine
// (graph.GPUDevice).

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
)

// Driver is package gpu as a graph.GPU. The program registers its zero
// value with the pipeline (pipeline.RegisterGPU(devices.Driver{})).
type Driver struct {
	// count and open, when set, replace the machine's devices (tests):
	// how many there are, and the engine on one ordinal.
	count func() (int, error)
	open  func(ordinal int) (graph.Engine, error)
}

var (
	_ graph.GPU       = Driver{}
	_ graph.GPUDevice = (*device)(nil)
)

// opens counts the GPU engines opened (Opens).
var opens atomic.Int64

// Opens is the number of GPU engines the driver opened in this process,
// so that tests can check that a graph and its runs share one context.
func Opens() int64 { return opens.Load() }

// Open opens the GPU engine on device ordinal (gpu.New).
func (Driver) Open(ordinal int) (graph.GPUDevice, error) {
	opens.Add(1)
	e, err := gpu.New(gpu.WithDevice(ordinal))
	if err != nil {
		return nil, err
	}
	return Device(e), nil
}

// Count is the number of CUDA devices the driver sees.
func (d Driver) Count() (int, error) {
	if d.count != nil {
		return d.count()
	}
	return gpu.DeviceCount()
}

// engine opens the engine of device ordinal.
func (d Driver) engine(ordinal int) (graph.Engine, error) {
	if d.open != nil {
		return d.open(ordinal)
	}
	e, err := d.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return e.Engine(""), nil
}

// Probe describes the first device (gpu.Probe).
func (Driver) Probe() (any, error) {
	info, err := gpu.Probe()
	if err != nil {
		return nil, err
	}
	return info, nil
}

// List describes every device without opening a context on any.
func (Driver) List() ([]graph.GPUInfo, error) {
	devs, err := gpu.Devices()
	if err != nil {
		return nil, err
	}
	out := make([]graph.GPUInfo, len(devs))
	for i, d := range devs {
		out[i] = gpuInfo(d)
	}
	return out, nil
}

// Status is one GPU as pathctl info lists it.
type Status struct {
	Ordinal         int    `json:"ordinal"`
	Name            string `json:"name"`
	TotalMemory     int64  `json:"total_memory"`
	Compute         string `json:"compute_capability"` // such as "9.0"
	Multiprocessors int    `json:"multiprocessors"`
}

// Statuses lists every CUDA device the driver sees, without opening a
// context on any; nil where there is no driver or no device (Probe says
// why).
func Statuses() []Status {
	devs, err := Driver{}.List()
	if err != nil {
		return nil
	}
	out := make([]Status, len(devs))
	for i, d := range devs {
		out[i] = Status{Ordinal: d.Ordinal, Name: d.Name, TotalMemory: d.TotalMemory, Compute: d.Compute, Multiprocessors: d.Multiprocessors}
	}
	return out
}

// gpuInfo is d as the seam describes a device.
func gpuInfo(d gpu.DeviceInfo) graph.GPUInfo {
	return graph.GPUInfo{Ordinal: d.Ordinal, Name: d.Name, TotalMemory: d.TotalMemory,
		Compute: fmt.Sprintf("%d.%d", d.ComputeMajor, d.ComputeMinor), Multiprocessors: d.Multiprocessors, DriverVersion: d.DriverVersion}
}

// NoGPU reports whether err says that there is no driver library or no
// device.
func (Driver) NoGPU(err error) bool {
	var le *gpu.LibraryError
	return errors.As(err, &le) || errors.Is(err, gpu.ErrNoDevice)
}

// Failed reports whether err is a driver call's error status.
func (Driver) Failed(err error) bool {
	var de *gpu.DriverError
	return errors.As(err, &de)
}

// CheckTune reports whether spec is a valid gpu.Tuning.
func (Driver) CheckTune(spec string) error {
	_, err := gpu.ParseTuning(spec)
	return err
}

// PlanAhead is gpu.PlanAhead under the tuning spec (its defaults where the
// spec is bad: the pipeline checks it first).
func (Driver) PlanAhead(csr *graph.CSR, sources []graph.VertexID, tune string) graph.HostPlan {
	t, _ := gpu.ParseTuning(tune)
	if p := gpu.PlanAhead(csr, sources, t); p != nil {
		return p
	}
	return nil
}

// Tuned is eng tuned by the spec where eng is a GPU engine (Tuned).
func (Driver) Tuned(eng graph.Engine, tune string) graph.Engine {
	t, _ := gpu.ParseTuning(tune)
	return Tuned(eng, t)
}

// Shared is a new Shared device (device 0).
func (Driver) Shared() graph.SharedGPU { return &Shared{} }

// Pool is NewPool's pool, nil where a server needs none.
func (d Driver) Pool(devices []int) graph.GPUPool {
	if p := d.newPool(devices); p != nil {
		return p
	}
	return nil
}

// Device is e as a graph.GPUDevice.
func Device(e *gpu.Engine) graph.GPUDevice { return &device{e} }

// device is an opened GPU engine.
type device struct{ e *gpu.Engine }

// Engine is the device's engine, its runs tuned by the spec.
func (d *device) Engine(tune string) graph.Engine {
	t, _ := gpu.ParseTuning(tune)
	return Engine{Engine: d.e, Tune: t}
}

func (d *device) Ordinal() int   { return d.e.Ordinal() }
func (d *device) Close() error   { return d.e.Close() }
func (d *device) Abandon() error { return d.e.Abandon() }

func (d *device) OpenTimes() graph.GPUOpenTimes {
	o := d.e.OpenTimes()
	return graph.GPUOpenTimes{Driver: o.Driver, Context: o.Context, Kernels: o.Kernels, Rest: o.Rest}
}

func (d *device) FreeMemory() (int64, error) { return d.e.FreeMemory() }

func (d *device) BuildCSRResident(ctx context.Context, edges *graph.Edges, opt graph.BuildOptions) (*graph.CSR, error) {
	return d.e.BuildCSRResident(ctx, edges, opt)
}

// AdoptPlan hands the engine a plan of PlanAhead's; another plan is
// ignored.
func (d *device) AdoptPlan(p graph.HostPlan) {
	if hp, ok := p.(*gpu.HostPlan); ok {
		d.e.AdoptPlan(hp)
	}
}

func (d *device) IsKept(g *graph.CSR) bool { return d.e.IsKept(g) }
func (d *device) KeepCSR(ctx context.Context, g *graph.CSR) (int64, error) {
	return d.e.KeepCSR(ctx, g)
}
func (d *device) BuildKeptCSR(ctx context.Context, edges *graph.Edges, opt graph.BuildOptions) (*graph.CSR, int64, error) {
	return d.e.BuildKeptCSR(ctx, edges, opt)
}
func (d *device) DropCSR(g *graph.CSR) error { return d.e.DropCSR(g) }
func (d *device) KeptBytes() int64           { return d.e.KeptBytes() }
func (d *device) GraphUploads() int64        { return d.e.GraphUploads() }
func (d *device) Info() graph.GPUInfo        { return gpuInfo(d.e.Info()) }
func (d *device) MeasureDownload(bytes int64) (float64, error) {
	return d.e.MeasureDownload(bytes)
}

// GPUEngine is the *gpu.Engine behind d, nil where d is not a Device.
func GPUEngine(d graph.GPUDevice) *gpu.Engine {
	if dv, ok := d.(*device); ok {
		return dv.e
	}
	return nil
}
