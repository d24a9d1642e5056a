package graph

// The engine seam: every interface between package pipeline and an engine
// (package cpu, package gpu), in one place. They are declared here, beside
// Block and Request, so that engines can implement them without importing
// the pipeline that imports the engines.
//
// An engine implements Engine, and its runners Runner. Everything else is
// optional: the pipeline discovers it with a type assertion on these
// names, and a runner without it is run the plain way. The GPU engine's
// own types return concrete types (*gpu.Runner, *gpu.Pending), so package
// gpu/devices adapts it; the CPU engine plugs in as it is.
//
//	interface      implemented by                   used by the pipeline for
//	Engine         cpu.Engine, gpu.Engine (adapted)  every run
//	Runner         every runner                      every block
//	Describer      cpu and gpu runners               the summary and --verbose: what auto chose
//	Budgeter       gpu engine (adapted)              block sizes when no budget is given
//	StatsRunner    gpu runner                        the stats layout, reduced on the device
//	StatsSizer     gpu runner                        the size of those stats blocks
//	AsyncRunner    gpu runner (adapted)              starting block i+1 before block i lands
//	ResidentRunner gpu runner (adapted)              device blocks larger than the host's blocks
//	HostPinner     gpu runner                        page-locking the blocks the pool recycles
//	ValueConverter gpu runner, several devices'      a matrix's float values converted on the
//	               runner                            device (integers; float64 rounded to float32)
//	DeviceTimer    gpu runner, its Waiters and       the time lines of --verbose
//	               ResidentBlocks
//	CopyTimer      gpu Waiters                       the time lines of --verbose
//	NearestFinder  cpu engine, gpu engine            the nearest layout (one multi-source run)
//	NarrowRunner   cpu runners, gpu runner           targets and cutoff (Request.Targets,
//	               (without predecessors)            Request.Cutoff) honoured by the engine
//	SourceOrderer  gpu runner, several devices'      the stats layout's sources run in the
//	               runner                            order whose blocks derive the most rows
//	StatsRunSizer  gpu runner, several devices'      rows kept beside a stats run's blocks
//	               runner                            (hub rows), sized for the run
//	DeviceSet      several devices' runner           the blocks queued to keep every device
//	                                                 busy, the last round cut among them
//	DeviceGroup    several devices' engine           even stats blocks, --gpu-mem per device,
//	                                                 the first device for the nearest layout
//	NearestDescriber gpu engine (adapted)            how the nearest layout was answered
//	HubRowsReporter gpu runner                       the hub rows' line of --verbose
//	DownloadCounter gpu runner                       the device-to-host bytes of --verbose
//	AheadNarrower  gpu runner                        narrowed blocks started ahead, and stats
//	NearestSelector cpu and gpu runners              the k nearest selected by the engine
//	NearestDecliner cpu runners                      why the host selects the k nearest
//	BetweennessRunner gpu runner (adapted)           the betweenness layout's passes on the device
//	GPU            gpu/devices' Driver, registered   opening, counting and listing devices,
//	               by the program                    tunings, plans beside an opening, the
//	                                                 engine over several devices
//	GPUOpening     gpu/devices' Opening              a device opened beside the read
//	GPUOthers      gpu/devices' Others               the other devices opened beside the read
//	SharedGPU      gpu/devices' Shared               a server's one device, runs taking turns
//	GPUPool        gpu/devices' Pool                 a server's devices, a run on an idle one
//	GPUDevice      gpu/devices, over *gpu.Engine     a graph's, an opening's or a server's
//	                                                 device: builds, kept CSRs, release
//	HostPlan       gpu's host plan                   a plan made beside an opening
//
// An engine that holds a device also implements io.Closer; the pipeline
// closes an engine it opened for one run when the run is done.

import (
	"context"
	"errors"
	"io"
	"time"
)

// Engine computes shortest paths on one kind of hardware. The CPU engine
// (package cpu) always works; the GPU engine (package gpu) works where a
// driver and a device are found.
type Engine interface {
	// Name is "cpu" or "gpu".
	Name() string
	// Prepare loads g (uploads it, for a device) for runs of req and returns
	// a Runner that computes one block of sources at a time. req.Algorithm
	// may be Auto: each engine resolves it to a kernel of its own. The
	// pipeline checks negative weights against req.Algorithm before
	// calling Prepare.
	Prepare(ctx context.Context, g *CSR, req Request) (Runner, error)
}

// Runner runs the blocks of one request on one loaded graph.
type Runner interface {
	// DistType is the element type of the blocks Run fills: the graph's
	// type, or int32 hop counts for bfs and bfs-level.
	DistType() DistType
	// BytesPerSource is the working memory one more source in a block costs,
	// output included, for the block planner.
	BytesPerSource() int64
	// Run fills out (allocated by the caller with NewBlock for out.Sources,
	// DistType and req.WithPredecessors) with the distances from every
	// source of out.Sources. It returns ctx.Err() when cancelled, a
	// *NegativeCycleError when a negative cycle is reachable.
	Run(ctx context.Context, out *Block) error
	// Close releases what Prepare took.
	Close() error
}

// Describer is implemented by runners that name the kernel they run, and
// for Auto the one they picked and why (both engines' runners). The
// pipeline puts it in the run's summary, the --verbose log and the report
// of Verify; without it, the algorithm's name stands.
type Describer interface {
	Describe() string
}

// Budgeter is implemented by engines that know how much memory their
// blocks may take (the GPU engine, from the device's free memory). The
// pipeline asks it when the caller gives no memory budget; without it the
// pipeline's default applies.
type Budgeter interface {
	// DefaultBudget bounds the blocks in flight, which are held both on the
	// device and in host memory.
	DefaultBudget() int64
	// DeviceBudget bounds blocks kept on the device only: the stats layout
	// of a StatsRunner, and the device blocks of a ResidentRunner.
	DeviceBudget() int64
}

// StatsRunner is implemented by runners that reduce a block to the stats
// layout themselves (the GPU runner, to avoid copying n² distances back).
// The pipeline calls RunStats instead of Run for the stats layout, one
// block at a time, and sizes those blocks by DeviceBudget.
type StatsRunner interface {
	RunStats(ctx context.Context, sources []VertexID) (*Stats, error)
}

// StatsSizer is implemented by StatsRunners whose RunStats needs another
// memory than a block of Run (the GPU runner keeps one set of result rows
// for a stats block instead of two, and may keep hub rows beside it). The
// pipeline sizes the blocks of RunStats by it: the budget less
// StatsFixedBytes (at most half of it) over StatsBytesPerSource; without
// it, the budget over BytesPerSource.
type StatsSizer interface {
	// StatsBytesPerSource is the working memory one more source in a
	// block of RunStats costs.
	StatsBytesPerSource() int64
	// StatsFixedBytes is the working memory a block of RunStats may take
	// whatever its size.
	StatsFixedBytes() int64
}

// AsyncRunner is implemented by runners whose next block can start before
// the results of the previous one have arrived (the GPU runner copies them
// out on a second stream while the next block computes). The pipeline
// starts block i+1 before it waits for block i, in every layout but the
// stats layout of a StatsRunner, and plans three blocks in flight.
type AsyncRunner interface {
	// Start computes out and returns once its results are on their way;
	// out may be read once the Waiter's Wait has returned nil. When Start
	// fails, nothing is left writing to out.
	Start(ctx context.Context, out *Block) (Waiter, error)
}

// Waiter is a block an AsyncRunner or a ResidentBlock has started.
type Waiter interface {
	// Wait blocks until the block's results are in place and returns the
	// errors of bringing them there.
	Wait() error
}

// ResidentRunner is implemented by runners that can compute a block of
// sources far larger than the host's blocks into device memory and send
// its rows to the host piecewise (the GPU runner: its batched kernel
// derives most rows of a block that holds most sources from others). The
// pipeline uses it, with AsyncRunner, for the pairs and matrix layouts
// when the device budget holds more sources than a host block.
type ResidentRunner interface {
	// ComputeResident computes the rows of sources into device memory. A
	// block that does not fit fails with an error wrapping
	// ErrResidentTooLarge; the pipeline then runs the rest of the sources
	// through AsyncRunner.Start.
	ComputeResident(ctx context.Context, sources []VertexID) (ResidentBlock, error)
}

// ErrResidentTooLarge is what a ResidentRunner's ComputeResident wraps
// when the device block does not fit in device memory.
var ErrResidentTooLarge = errors.New("graph: device block does not fit")

// ResidentBlock is a block a ResidentRunner holds in device memory.
type ResidentBlock interface {
	// Start sends the rows of the block's sources [lo, hi) to out, as
	// AsyncRunner.Start does.
	Start(ctx context.Context, lo, hi int, out *Block) (Waiter, error)
}

// HostPinner is implemented by runners whose results land faster in host
// memory they have page-locked (the GPU runner: its device-to-host copies
// go straight into pinned memory instead of through a staging buffer).
// The pipeline's block pool pins the matrix blocks it recycles with it.
type HostPinner interface {
	PinHost(b []byte) error
	UnpinHost(b []byte) error
}

// ValueConverter is implemented by runners that can fill a block with
// values of another type than their distances (the GPU runner rewrites
// int32 rows as float32 and int64 rows as float64 on the device, just
// before their copy to the host, and float64 rows rounded to float32), so
// that the host builds a matrix of float values without a pass of its own
// over it. The pipeline asks for the matrix layout's value type when it
// differs from the distances (pipeline's matrix type rule has checked
// that it holds every distance exactly), and for float32 where a float32
// result's float64 rows are rounded once (Request.RoundFloat32) for the
// matrix or pairs layout. After ConvertValues(t) returns true, every
// block the pipeline hands the runner (Run, Start, a ResidentBlock's
// Start) is of type t, and its unreachable cells are t's Infinity; after
// false nothing changed, and the host converts.
type ValueConverter interface {
	ConvertValues(t DistType) bool
}

// DeviceTimer is implemented by what reports the device's share of a
// block's time: the GPU runner (for its last Run or RunStats), its
// Waiters and its ResidentBlocks. The pipeline adds it up for --verbose.
type DeviceTimer interface {
	// KernelTime is the device time of the block's kernels.
	KernelTime() time.Duration
	// HostTimes is the host's time beside the kernels: planning them, and
	// allocating device memory.
	HostTimes() (plan, alloc time.Duration)
}

// CopyTimer is implemented by Waiters whose results travel from the device
// (the GPU's): the time of the device-to-host copies, and of the moves from
// pinned memory into the block, valid once Wait has returned. The pipeline
// adds it up for --verbose.
type CopyTimer interface {
	CopyTime() time.Duration
	MoveTime() time.Duration
}

// NarrowRunner is implemented by runners that honour Request.Targets and
// Request.Cutoff themselves (the CPU runners; the GPU runner, which gathers
// the targets' columns on the device, when Narrowed is true: without
// predecessors): the blocks they fill carry only the targets' columns and
// no distance above the cutoff. The pipeline runs such a runner's narrowed
// blocks through Run only, unless it says that its Start and RunStats
// honour the narrowing too (the GPU runner; pipeline/narrow.go); its
// ResidentRunner path produces full rows. For a runner without it, or whose Narrowed is
// false, the pipeline runs full rows and narrows them on the host
// (pipeline/narrow.go), which costs n distances per source in transit.
type NarrowRunner interface {
	Narrowed() bool
}

// NearestFinder is implemented by engines that answer the nearest layout
// in one multi-source run (the CPU engine; the GPU engine, on the device):
// for every vertex, the distance to the nearest of sources and which one,
// ties to the smaller source id. The pipeline picks the engine
// (pipeline/nearest.go): the GPU's for --engine gpu, and for auto on graphs
// large enough to pay for the device's rounds.
type NearestFinder interface {
	Nearest(ctx context.Context, g *CSR, sources []VertexID, req Request) (*Nearest, error)
}

// SourceOrderer is implemented by runners whose blocks compute fewer rows
// when the sources that share a block lie close in the graph (the GPU
// runner's batched kernel derives a leaf's row from its neighbour's, and
// a row from all its neighbours' rows, only inside one block). The
// pipeline runs the sources of a stats run, whose rows are few enough to
// hold, in BlockOrder's order, and writes the rows in the caller's.
type SourceOrderer interface {
	// BlockOrder returns the order in which to run sources cut into
	// blocks of block sources, as positions in sources, or nil where
	// their own order is as good.
	BlockOrder(sources []VertexID, block int) []int32
}

// StatsRunSizer is implemented by StatsSizers that may keep rows beside
// the blocks of a stats run which no one block holds (the GPU runner's hub
// rows, whose rows the blocks copy and derive from). The pipeline calls
// SizeStatsRun with the run's source count and its memory budget before
// it sizes the blocks; StatsFixedBytes then counts those rows. Without
// the call, a runner keeps what its configuration alone says.
type StatsRunSizer interface {
	SizeStatsRun(sources int, budget int64)
}

// DeviceSet is implemented by the runner of several devices (the
// multi-device runner, a queue of blocks that one engine per device takes
// whole): the pipeline's producer keeps several of its blocks submitted at
// once, enough for every device to be busy, and cuts the blocks of the
// last round among them. The pipeline uses it wherever a runner has it:
// planning (PlanRunner, ResidentSources), the producer (Depth, StartCut,
// StartStats, TailCuts) and the --verbose report (Shares).
type DeviceSet interface {
	// PlanRunner is the runner whose blocks a run plans: the first
	// device's, so that the blocks (and the output's record batches) are
	// those of one device alone.
	PlanRunner() Runner
	// Depth is the number of blocks the producer keeps submitted so that
	// no device waits for one, for the stats layout or another.
	Depth(stats bool) int
	// TailCuts is where block i of blocks is cut among the devices
	// (offsets in the block, multiples of 8): nowhere but in the last
	// round.
	TailCuts(i int, blocks []SourceBlock) []int
	// StartCut is AsyncRunner.Start with out cut at cuts, each part
	// computed whole by one device.
	StartCut(ctx context.Context, out *Block, cuts []int) (Waiter, error)
	// StartStats queues the stats of sources cut at cuts, each part
	// reduced whole by one device, and returns at once; the stats may be
	// read once Wait has returned nil.
	StartStats(ctx context.Context, sources []VertexID, cuts []int) (StatsWaiter, error)
	// ResidentSources is the most sources of a device block over every
	// device, each holding per of them (ResidentRunner); 0 where the
	// devices keep none.
	ResidentSources(per int) int
	// Shares says what each device computed since start.
	Shares(start time.Time) string
}

// StatsWaiter is a stats block a DeviceSet has queued.
type StatsWaiter interface {
	Waiter
	// Stats is the block's stats, valid once Wait has returned nil.
	Stats() *Stats
}

// DeviceGroup is implemented by the engine of several devices (one engine
// per device). The pipeline asks it how many there are (a stats run on
// several devices plans even blocks), how many share the first device (a
// per-device memory budget, --gpu-mem, is split among them), and for the
// first device's engine (the nearest layout is one run, which the first
// device answers).
type DeviceGroup interface {
	// Devices is the number of engines, one per device named.
	Devices() int
	// FirstSharing is the number of engines on the first device.
	FirstSharing() int
	// First is the first device's engine, and its label ("gpu 0").
	First() (Engine, string)
}

// NearestDescriber is implemented by NearestFinders that say how they
// answered (the GPU engine: the bucket width, the rounds, the device
// time). The pipeline puts the description in the summary of a nearest
// run; it prefers this to NearestFinder where the engine has both.
type NearestDescriber interface {
	NearestDescribed(ctx context.Context, g *CSR, sources []VertexID, req Request) (*Nearest, string, error)
}

// HubRowsReporter is implemented by runners that keep hub rows beside
// their blocks (the GPU runner): the pipeline adds the report to the
// --verbose log after a run, where it is not empty.
type HubRowsReporter interface {
	HubRowsReport() string
}

// DownloadCounter is implemented by runners whose results travel from a
// device (the GPU runner): the pipeline logs the bytes after a run
// (--verbose).
type DownloadCounter interface {
	DownloadedBytes() int64
}

// AheadNarrower is implemented by NarrowRunners whose Start (AsyncRunner)
// and RunStats (StatsRunner) honour the request's targets and cutoff as
// Run does (the GPU runner); their ComputeResident and PinHost paths are
// still of full rows. The pipeline then starts narrowed blocks ahead
// (pipeline/narrow.go) instead of running them one at a time.
type AheadNarrower interface {
	NarrowsAhead() bool
}

// NearestSelector is implemented by runners that can select the k nearest
// of every source themselves (the CPU runners; the GPU runner, on the
// device, and several devices' runner, on each): SelectNearest(k), which the pipeline calls before the first
// block, reports whether they will; then their blocks hold k columns named
// by CellTargets, NumVertices the graph's, from Run and Start alike.
type NearestSelector interface {
	SelectNearest(k int) bool
}

// NearestDecliner is implemented by NearestSelectors that say why they
// declined a SelectNearest (the CPU runners): the pipeline puts the reason
// in the run's description.
type NearestDecliner interface {
	NearestDeclined() string
}

// BetweennessRunner is implemented by runners that compute Brandes's
// betweenness of a block of sources where their rows lie (the GPU runner:
// the forward and backward passes run on the device, and only a vector of
// sums leaves it, n per vertex or m per arc). The pipeline prepares one for the betweenness layout
// and runs the sources through it in blocks sized by DeviceBudget, less
// the fixed bytes of BetweennessBytes, over its bytes per source; without
// it, or where BetweennessSupported says no, the CPU engine computes the
// layout.
type BetweennessRunner interface {
	// BetweennessSupported is nil where RunBetweenness can run, else why
	// not (the distance type, a narrowed runner).
	BetweennessSupported() error
	// BetweennessBytes is the device memory of RunBetweenness (edges
	// false) or RunEdgeBetweenness (edges true): fixed whatever the block,
	// and perSource for each of a block's sources.
	BetweennessBytes(edges bool) (fixed, perSource int64)
	// RunBetweenness returns, for every vertex, the sum over sources of
	// its dependencies as cpu.Engine.Betweenness defines them, with the
	// endpoint terms when endpoints is set.
	RunBetweenness(ctx context.Context, sources []VertexID, endpoints bool) ([]float64, error)
	// RunEdgeBetweenness returns, for every arc in CSR order, the sum over
	// sources of the dependencies flowing through it, as
	// cpu.Engine.EdgeBetweenness defines them.
	RunEdgeBetweenness(ctx context.Context, sources []VertexID) ([]float64, error)
}

// GPU is the GPU side of a process as the pipeline reaches it: package
// gpu/devices implements it over package gpu (devices.Driver), and the
// program registers it with the pipeline (pipeline.RegisterGPU, in
// cmd/pathctl/engines.go), so that the pipeline imports no GPU code.
// Without one, no GPU is usable: auto runs on the CPU, gpu runs fail.
// The pipeline uses it wherever it opens, counts or lists devices, checks
// a tuning, or plans the GPU kernel beside an opening. Tunings are
// specs: comma-separated KEY=VALUE settings (docs/engine.md).
type GPU interface {
	// Open opens the GPU engine on device ordinal; the caller closes it.
	Open(ordinal int) (GPUDevice, error)
	// Count is the number of devices the driver sees.
	Count() (int, error)
	// Probe describes the first device for pathctl info, or says why no
	// GPU engine can run here.
	Probe() (any, error)
	// List describes every device, without opening a context on any.
	List() ([]GPUInfo, error)
	// NoGPU reports whether err says that the machine has no GPU to use
	// at all (no driver, no device), rather than that a GPU failed.
	NoGPU(err error) bool
	// Failed reports whether err is a failure of the device itself (a
	// driver call's error status, out of memory included).
	Failed(err error) bool
	// CheckTune reports whether spec is a valid tuning.
	CheckTune(spec string) error
	// PlanAhead plans on the host the GPU kernel's block of sources of
	// csr (nil: the graph's shape and rank alone), under the tuning spec,
	// for a device that adopts it (GPUDevice.AdoptPlan).
	PlanAhead(csr *CSR, sources []VertexID, tune string) HostPlan
	// Tuned is eng with its runs tuned by the spec where eng is a GPU
	// engine, else eng.
	Tuned(eng Engine, tune string) Engine
	// OpenGroup opens an engine on every ordinal, side by side, and
	// returns the engine over them, which the first plans (a DeviceGroup
	// whose runners are DeviceSets). own, where set, stands for the first
	// occurrence of its device (a graph's); others, where set, hands over
	// the devices opened beside the read. The runs are tuned by the spec.
	// A device that does not open is left out with a notice naming it
	// (cfg.Notice); none opening is the error of all of them.
	OpenGroup(ordinals []int, own GPUDevice, others GPUOthers, tune string, cfg GroupConfig) (Engine, error)
	// Shared is a new, unopened device for the runs of many graphs (a
	// server's; Options.GPU).
	Shared() SharedGPU
	// Pool is a server's devices (nil: every device), one engine each
	// (Options.GPUs); nil where a server needs none: devices is device 0
	// alone, or every device of a machine with at most one.
	Pool(devices []int) GPUPool
}

// GPUOpening is a GPU device opening in a goroutine of its own beside the
// read (gpu/devices' Opening; LoadOptions.Device): LoadGraph takes it
// where it builds for the GPU, and gives it up otherwise. The pipeline
// leaves a nil GPUOpening alone; gpu/devices' nil *Opening also does
// nothing (its Take fails with ErrOpeningTaken).
type GPUOpening interface {
	// Take waits for the open and hands its device (or its error) over:
	// took is how long the open lasted, waited how long Take blocked. A
	// second Take, or one after GiveUp, fails with ErrOpeningTaken.
	Take() (dev GPUDevice, took, waited time.Duration, err error)
	// Pending reports whether the open is under way and not yet taken.
	Pending() bool
	// Failed reports whether the open ended without a device.
	Failed() bool
	// GiveUp gives the opening up without waiting for it: a goroutine
	// closes the device (or leaves it to the exit of a process about to
	// exit). Later Takes fail.
	GiveUp()
}

// ErrOpeningTaken is GPUOpening.Take's error where the opening was taken
// or given up already.
var ErrOpeningTaken = errors.New("graph: the early device opening was already taken or given up")

// GPUOthers are the devices past the first of a run over several, each
// opening in a goroutine of its own beside the read (gpu/devices' Others;
// LoadOptions.OtherDevices). A graph built for the GPU keeps them for its
// runs (GPU.OpenGroup takes them); otherwise LoadGraph gives them up.
// The pipeline leaves a nil GPUOthers alone.
type GPUOthers interface {
	// Take hands over the device opened for ordinal, waiting for what is
	// left of its open; ok is false where none was begun for it, or it
	// was taken already.
	Take(ordinal int) (dev GPUDevice, ok bool, err error)
	// Keep hands the openings to a graph: GiveUp does nothing after it,
	// End ends them.
	Keep()
	// GiveUp gives up, without waiting, every opening no run took, unless
	// a graph keeps them.
	GiveUp()
	// End ends every opening no run took, kept or not: it closes their
	// devices, or with abandon gives them up to the process exit.
	End(abandon bool) error
}

// SharedGPU is one GPU device for the runs of many graphs, as a server
// holds it (gpu/devices' Shared; Options.GPU): opened by the first run
// that wants it, kept open until Close; runs on it take turns. Where the
// device cannot open, that error is kept and returned to every run.
type SharedGPU interface {
	// Acquire opens the device on first use and waits for the turn; call
	// release once the run is done with the device.
	Acquire() (dev GPUDevice, release func(), err error)
	// TryAcquire takes the turn where the device is open and free this
	// instant; it never opens the device nor waits.
	TryAcquire() (dev GPUDevice, release func(), ok bool)
	// Opened reports whether the device is open.
	Opened() bool
	// Forget frees the device copy kept of csr (GPUDevice.KeepCSR), at
	// once or once the run using it ends, without waiting for the turn.
	Forget(csr *CSR) error
	// GraphUploads and KeptBytes are the device's (GPUDevice), 0 before
	// it opened.
	GraphUploads() int64
	KeptBytes() int64
	// Close waits for the run using the device and closes it; later runs
	// find it closed. Closing a device never opened does nothing.
	Close() error
}

// GPUPool is a server's devices, one engine each (gpu/devices' Pool;
// Options.GPUs): each run takes an idle one and runs whole on it.
type GPUPool interface {
	// Acquire opens the devices on first use and waits for an idle one;
	// call release once the run is done with it.
	Acquire() (eng Engine, release func(), err error)
	// Close waits for the runs holding a device and closes every engine.
	Close() error
}

// GPUDevice is one opened GPU engine as the pipeline holds it: a graph's
// (LoadGraph builds its CSR on the device), an early opening's, or a
// server's shared one.
type GPUDevice interface {
	// Engine is the device's engine, its runs tuned by the spec.
	Engine(tune string) Engine
	// Ordinal is the device's index.
	Ordinal() int
	// Close tears the engine down; Abandon leaves its context to the
	// process exit, for a process about to exit.
	Close() error
	Abandon() error
	// OpenTimes says where the opening's time went.
	OpenTimes() GPUOpenTimes
	// FreeMemory is the device's free memory.
	FreeMemory() (int64, error)
	// BuildCSRResident builds the CSR on the device, kept there for the
	// first Prepare.
	BuildCSRResident(ctx context.Context, edges *Edges, opt BuildOptions) (*CSR, error)
	// AdoptPlan hands the engine a plan made beside its opening.
	AdoptPlan(p HostPlan)
	// IsKept, KeepCSR, BuildKeptCSR and DropCSR keep a graph's CSR on the
	// device for every run of a server's shared engine; KeptBytes is the
	// memory they hold, GraphUploads the CSRs copied from the host.
	IsKept(g *CSR) bool
	KeepCSR(ctx context.Context, g *CSR) (int64, error)
	BuildKeptCSR(ctx context.Context, edges *Edges, opt BuildOptions) (*CSR, int64, error)
	DropCSR(g *CSR) error
	KeptBytes() int64
	GraphUploads() int64
	// MeasureDownload times device-to-host copies of bytes bytes from
	// pinned memory (pathctl info --bandwidth).
	MeasureDownload(bytes int64) (bytesPerSecond float64, err error)
	// Info describes the device.
	Info() GPUInfo
}

// HostPlan is a GPU kernel's plan made on the host beside an opening
// (GPU.PlanAhead): how long it took, and whether a run took it.
type HostPlan interface {
	Took() time.Duration
	Used() bool
}

// GPUOpenTimes says where opening a GPU engine took its time.
type GPUOpenTimes struct {
	// Driver is loading the driver library and initialising it, done once
	// a process: 0 for every engine after the first.
	Driver time.Duration
	// Context is retaining the device's primary context and making it
	// current.
	Context time.Duration
	// Kernels is loading the kernel image.
	Kernels time.Duration
	// Rest is the remainder of the opening.
	Rest time.Duration
}

// GPUInfo describes one device (GPU.List, GPUDevice.Info).
type GPUInfo struct {
	Ordinal         int
	Name            string
	TotalMemory     int64
	Compute         string // compute capability, such as "9.0"
	Multiprocessors int
	DriverVersion   int // CUDA version of the driver, 1000·major + 10·minor
}

// GroupConfig is what a group of devices takes of the run (GPU.OpenGroup).
type GroupConfig struct {
	// MemBudget bounds each device's blocks (--gpu-mem, per device); 0
	// takes each engine's own (Budgeter), else DefaultBudget.
	MemBudget int64
	// DefaultBudget is the budget of an engine that has no Budgeter; 0 is
	// DefaultMemBudget.
	DefaultBudget int64
	// Stats says that the run is of the stats layout.
	Stats bool
	// Threads bounds the host's stats reductions of devices without a
	// StatsRunner.
	Threads int
	// Notice receives the notices of devices left out, Log the devices'
	// block sizes (--verbose); nil discards them.
	Notice, Log io.Writer
	// RequestError reports whether an error is the request's, the same on
	// every device (cancelled, a negative cycle, an invalid request),
	// rather than one device's fault; nil counts cancellations and
	// negative cycles.
	RequestError func(error) bool
}
