package benchsuite

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// Machine describes where the benchmark ran.
type Machine struct {
	Date       string `json:"date"`
	Pathctl    string `json:"pathctl"`
	GoVersion  string `json:"go_version"`
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model,omitempty"`
	GPU        string `json:"gpu,omitempty"`
	GPUReason  string `json:"gpu_unavailable,omitempty"`
	CUDADriver string `json:"cuda_driver,omitempty"` // CUDA version the driver supports
	Driver     string `json:"driver,omitempty"`      // kernel module version
	Command    string `json:"command"`
}

// GraphReport is one graph of the run.
type GraphReport struct {
	Name       string `json:"name"`
	Path       string `json:"path,omitempty"` // the edge file, when read from or saved to one
	About      string `json:"about,omitempty"`
	Undirected bool   `json:"undirected"`
	Vertices   int    `json:"n"`
	Arcs       int64  `json:"arcs"`
	DistType   string `json:"dist_type"`
	// FloorSeconds is n² × distance bytes / device-to-host bandwidth; nil
	// without a GPU.
	FloorSeconds *float64 `json:"floor_seconds"`
	// LoadSeconds is the time to build the CSR, on BuiltOn ("cpu" or
	// "gpu"); on the GPU it includes opening the device, which the graph
	// then keeps for its GPU rows (as a notebook or pathctl serve keeps
	// it), so that their times do not include it.
	LoadSeconds float64 `json:"load_seconds"`
	BuiltOn     string  `json:"built_on"`
}

// Row is one timed run.
type Row struct {
	Graph     string `json:"graph"`
	Engine    string `json:"engine"`
	Algorithm string `json:"algorithm"`
	Chosen    string `json:"chosen"` // the kernel the engine ran (auto's choice)
	Layout    string `json:"layout"`
	Vertices  int    `json:"n"`
	Arcs      int64  `json:"arcs"`
	// Sources is how many sources ran; Seconds is for every source,
	// extrapolated (Seconds = MeasuredSeconds × n / Sources) when
	// Extrapolated.
	Sources         int     `json:"sources"`
	MeasuredSeconds float64 `json:"measured_seconds"`
	Seconds         float64 `json:"seconds"`
	Extrapolated    bool    `json:"extrapolated"`
	Rows            int64   `json:"rows"`
	// PairsPerSecond is n² / Seconds; RelaxationsPerSecond is arcs × n /
	// Seconds (every arc relaxed once per source, as Dijkstra does).
	PairsPerSecond       float64 `json:"pairs_per_second"`
	RelaxationsPerSecond float64 `json:"relaxations_per_second"`
	// Checked is the number of sources compared with the oracle (all
	// matched, or the command failed).
	Checked int `json:"checked_sources"`
}

// Disk is the disk measurement.
type Disk struct {
	Graph string `json:"graph"`
	Dir   string `json:"dir"`
	Bytes int64  `json:"bytes"`
	// ComputeSeconds is the same matrix run with its records discarded.
	ComputeSeconds float64 `json:"compute_seconds"`
	ArrowSeconds   float64 `json:"arrow_seconds"` // the best of ArrowRuns
	PlainSeconds   float64 `json:"plain_seconds"` // the best of PlainRuns
	// ArrowRuns are the seconds of each run into the Arrow file
	// (fsync and rename included), PlainRuns of each sequential write of
	// Bytes (fsync included), taken alternately: Arrow, plain, Arrow, ...
	ArrowRuns []float64 `json:"arrow_runs"`
	PlainRuns []float64 `json:"plain_runs"`
	ArrowRate float64   `json:"arrow_bytes_per_second"`
	PlainRate float64   `json:"plain_bytes_per_second"`
	Ratio     float64   `json:"ratio"` // ArrowRate / PlainRate
	Engine    string    `json:"engine"`
	Algorithm string    `json:"algorithm"`
}

// Report is the outcome of Run; `pathctl bench --json` prints it.
type Report struct {
	Machine Machine `json:"machine"`
	// Bandwidth is the device-to-host rate from pinned memory, bytes/s; nil
	// without a GPU.
	Bandwidth   *float64      `json:"d2h_bytes_per_second"`
	Graphs      []GraphReport `json:"graphs"`
	Rows        []Row         `json:"rows"`
	Disk        *Disk         `json:"disk"`
	DiskSkipped string        `json:"disk_skipped,omitempty"`
}

// machineInfo describes this machine: CPUs and their model, the NVIDIA
// kernel driver where /proc says, the date.
func machineInfo(version, command string) Machine {
	m := Machine{
		Date: time.Now().UTC().Format(time.RFC3339), Pathctl: version, GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), Command: command,
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		m.Driver = nvidiaDriverVersion(strings.SplitN(string(b), "\n", 2)[0])
	}
	return m
}

// nvidiaDriverVersion finds the driver's version in the first line of
// /proc/driver/nvidia/version: the first field after "Module" made of digits
// and dots, as in "NVRM version: NVIDIA UNIX x86_64 Kernel Module
// 580.159.04  Thu ..." and in the open module's "NVRM version: NVIDIA UNIX
// Open Kernel Module for x86_64  580.159.04  Release Build ...". Empty if
// there is none.
func nvidiaDriverVersion(line string) string {
	f := strings.Fields(line)
	i := slices.Index(f, "Module")
	if i < 0 {
		return ""
	}
	for _, w := range f[i+1:] {
		if strings.Contains(w, ".") && strings.Trim(w, "0123456789.") == "" {
			return w
		}
	}
	return ""
}

// Markdown renders the report as BENCHMARKS.md-ready markdown: the
// machine, the bandwidth, one table row per timed run, the graphs' load
// times and the disk test.
func Markdown(rep *Report) string {
	var b strings.Builder
	m := rep.Machine
	gpuText := "no GPU"
	if m.GPU != "" {
		gpuText = m.GPU
		if m.Driver != "" {
			gpuText += ", driver " + m.Driver
		}
		if m.CUDADriver != "" {
			gpuText += " (CUDA " + m.CUDADriver + ")"
		}
	} else if m.GPUReason != "" {
		gpuText = "no GPU (" + m.GPUReason + ")"
	}
	cpu := fmt.Sprintf("%d CPUs", m.CPUs)
	if m.CPUModel != "" {
		cpu += " (" + m.CPUModel + ")"
	}
	fmt.Fprintf(&b, "Machine: %s; %s. Date: %s. pathctl %s (%s).\n\n", gpuText, cpu, m.Date, m.Pathctl, m.GoVersion)
	fmt.Fprintf(&b, "Command: `%s`\n\n", m.Command)
	if rep.Bandwidth != nil {
		fmt.Fprintf(&b, "Device-to-host bandwidth, pinned memory, measured in this run: %.1f GB/s. ", *rep.Bandwidth/1e9)
		b.WriteString("Floor = n² × distance bytes / that bandwidth: the copy of the whole distance matrix to the host.\n\n")
	}
	b.WriteString("| graph | n | arcs | run | sources | seconds | pairs/s | relaxations/s | vs cpu auto | floor (s) | checked | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	floors := map[string]*float64{}
	for _, g := range rep.Graphs {
		floors[g.Name] = g.FloorSeconds
	}
	cpuSeconds := map[string]float64{}
	for _, r := range rep.Rows {
		if r.Engine == "cpu" && r.Algorithm == string(graph.Auto) {
			cpuSeconds[r.Graph] = r.Seconds
		}
	}
	for _, r := range rep.Rows {
		vs := "—"
		if c, ok := cpuSeconds[r.Graph]; ok && r.Seconds > 0 {
			vs = fmt.Sprintf("%.2f×", c/r.Seconds)
		}
		floor := "—"
		if f := floors[r.Graph]; f != nil {
			floor = fmt.Sprintf("%.3g", *f)
		}
		note := "all sources"
		if r.Extrapolated {
			note = fmt.Sprintf("extrapolated from %d sources", r.Sources)
		}
		if r.Chosen != "" && r.Chosen != r.Algorithm {
			note += "; " + r.Chosen
		}
		if r.Layout != string(arrowio.LayoutStats) {
			note += "; " + r.Layout + " layout"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | pathctl %s %s | %d | %.3g | %.3g | %.3g | %s | %s | %d ok | %s |\n",
			r.Graph, r.Vertices, r.Arcs, r.Engine, r.Algorithm, r.Sources, r.Seconds, r.PairsPerSecond, r.RelaxationsPerSecond,
			vs, floor, r.Checked, note)
	}
	b.WriteString("\nseconds: pipeline time for every source (extrapolated as seconds × n / sources where sampled), " +
		"stats layout unless noted; pairs/s = n² / seconds; relaxations/s = arcs × n / seconds (every arc once per source); " +
		"checked: sources whose distances and stats matched the serial oracle (internal/ref).\n")
	for _, g := range rep.Graphs {
		fmt.Fprintf(&b, "\n%s: CSR built on the %s in %.3f s", g.Name, g.BuiltOn, g.LoadSeconds)
		if g.BuiltOn == "gpu" {
			b.WriteString(", opening the device included; the GPU rows ran on that open device and their seconds exclude it")
		}
		b.WriteString(".")
	}
	b.WriteString("\n")
	if d := rep.Disk; d != nil {
		fmt.Fprintf(&b, "\nDisk (%s): the %s matrix (%s, %s, every source) written to an uncompressed Arrow IPC file with fsync in %.2f s, %.1f MB/s including compute (%.2f s without the file); "+
			"a plain sequential write of the same %d bytes (writeback started every 32 MiB, as the result file's) with fsync in %.2f s, %.1f MB/s: **%.0f %%** of the disk's sequential speed (target ≥ 80 %%). "+
			"Best of %d alternating rounds; Arrow file %s s, plain write %s s.\n",
			d.Dir, d.Graph, d.Engine, d.Algorithm, d.ArrowSeconds, d.ArrowRate/1e6, d.ComputeSeconds, d.Bytes, d.PlainSeconds, d.PlainRate/1e6, 100*d.Ratio,
			len(d.ArrowRuns), joinSeconds(d.ArrowRuns), joinSeconds(d.PlainRuns))
	} else if rep.DiskSkipped != "" {
		fmt.Fprintf(&b, "\nDisk: not measured (%s).\n", rep.DiskSkipped)
	}
	return b.String()
}

// joinSeconds lists seconds with two decimals, comma-separated.
func joinSeconds(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(parts, ", ")
}
