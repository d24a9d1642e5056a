package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/pipeline"
)

// Info is what `pathctl info --json` prints, and what the Flight service's
// info action returns.
type Info struct {
	Version   string                  `json:"version"`
	GoVersion string                  `json:"go_version"`
	OS        string                  `json:"os"`
	Arch      string                  `json:"arch"`
	CPUs      int                     `json:"cpus"`
	Engines   []pipeline.EngineStatus `json:"engines"`
	Default   string                  `json:"default_engine"`
	// Devices are every GPU the driver sees (run --devices picks among them).
	Devices []deviceStatus `json:"devices,omitempty"`
}

func collectInfo() Info {
	info := Info{
		Version: version, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUs:    runtime.NumCPU(),
		Engines: []pipeline.EngineStatus{{Name: "cpu", Available: true, Device: fmt.Sprintf("%d threads", runtime.GOMAXPROCS(0))}, pipeline.GPUStatus()},
		Default: "cpu",
	}
	if info.Engines[1].Available {
		info.Default = "gpu"
		info.Devices = deviceStatuses()
	}
	return info
}

func infoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "info",
		Usage: "print the version and the engines this machine can run, and why one cannot",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			info := collectInfo()
			if c.Bool("json") {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			printInfo(e.stdout, info)
			return nil
		},
	}
}

// printInfo writes info as pathctl info prints it: one line per engine,
// then one per GPU.
func printInfo(w io.Writer, info Info) {
	fmt.Fprintf(w, "pathctl %s (%s, %s/%s, %d CPUs)\n", info.Version, info.GoVersion, info.OS, info.Arch, info.CPUs)
	for _, s := range info.Engines {
		switch {
		case s.Available && s.Device != nil:
			fmt.Fprintf(w, "  engine %-4s available: %v\n", s.Name, s.Device)
		case s.Available:
			fmt.Fprintf(w, "  engine %-4s available\n", s.Name)
		default:
			fmt.Fprintf(w, "  engine %-4s unavailable: %s\n", s.Name, s.Reason)
		}
	}
	for _, d := range info.Devices {
		fmt.Fprintf(w, "  device %d: %s, %.1f GiB, compute %s, %d SMs\n", d.Ordinal, d.Name, float64(d.TotalMemory)/(1<<30), d.Compute, d.Multiprocessors)
	}
	fmt.Fprintf(w, "  default engine: %s\n", info.Default)
}
