package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/pipeline"
)

// TestPrintInfoListsDevices checks the text of pathctl info on a machine
// of two GPUs.
func TestPrintInfoListsDevices(t *testing.T) {
	info := Info{Version: "v", Engines: []pipeline.EngineStatus{{Name: "cpu", Available: true}, {Name: "gpu", Available: true}}, Default: "gpu",
		Devices: []deviceStatus{
			{Ordinal: 0, Name: "NVIDIA H200", TotalMemory: 141 << 30, Compute: "9.0", Multiprocessors: 132},
			{Ordinal: 1, Name: "NVIDIA H200", TotalMemory: 141 << 30, Compute: "9.0", Multiprocessors: 132},
		}}
	var b bytes.Buffer
	printInfo(&b, info)
	for _, want := range []string{"  device 0: NVIDIA H200, 141.0 GiB, compute 9.0, 132 SMs\n", "  device 1: NVIDIA H200, 141.0 GiB, compute 9.0, 132 SMs\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("info lacks %q:\n%s", want, b.String())
		}
	}
}

// TestInfoListsEveryDevice checks pathctl info --json: where the GPU
// engine is available, every device is listed with its name, memory and
// compute capability; elsewhere none is.
func TestInfoListsEveryDevice(t *testing.T) {
	r := inProcess(t, "info", "--json")
	var info Info
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || r.code != 0 {
		t.Fatalf("info --json: %d %v %s", r.code, err, r.stderr)
	}
	if info.Default != "gpu" {
		if len(info.Devices) != 0 {
			t.Errorf("no usable GPU, yet devices listed: %+v", info.Devices)
		}
		return
	}
	if len(info.Devices) == 0 {
		t.Fatal("the GPU engine is available and info lists no device")
	}
	for i, d := range info.Devices {
		if d.Ordinal != i || d.Name == "" || d.TotalMemory <= 0 || d.Compute == "" {
			t.Errorf("device %d listed as %+v", i, d)
		}
	}
}

// TestDevicesFlag checks --devices on run: a value that names no devices
// is a usage error naming the flag, and a CPU run ignores the devices.
func TestDevicesFlag(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	for _, bad := range []string{"x", "-1", "0,,1"} {
		r := inProcess(t, "run", in, "--devices", bad, "-o", dir+"/out.csv")
		if r.code != 2 || !strings.Contains(r.stderr, "--devices") {
			t.Errorf("--devices %s: exit %d, %q; want a usage error naming --devices", bad, r.code, r.stderr)
		}
	}
	r := inProcess(t, "run", in, "--engine", "cpu", "--devices", "0,1", "-o", dir+"/out.csv", "--format", "csv")
	if r.code != 0 {
		t.Fatalf("cpu run with --devices: exit %d, %s", r.code, r.stderr)
	}
	for _, cmd := range []string{"bench", "verify", "sssp"} {
		if h := inProcess(t, cmd, "--help"); !strings.Contains(h.stdout, "--devices") {
			t.Errorf("%s --help does not show --devices", cmd)
		}
	}
}

// TestServeDevicesFlag checks serve's --devices and the --max-concurrent
// default it sets: one run per device named (one per GPU found for all),
// an explicit --max-concurrent kept, a bad list a usage error.
func TestServeDevicesFlag(t *testing.T) {
	cfg, err := parsedConfig(t, "--devices", "0,0")
	if err != nil || !slices.Equal(cfg.Devices, []int{0, 0}) || cfg.MaxConcurrent != 2 {
		t.Errorf("--devices 0,0: devices %v, max-concurrent %d, %v; want [0 0] and 2", cfg.Devices, cfg.MaxConcurrent, err)
	}
	cfg, err = parsedConfig(t, "--devices", "1,2,3", "--max-concurrent", "5")
	if err != nil || cfg.MaxConcurrent != 5 {
		t.Errorf("--max-concurrent 5: %d, %v", cfg.MaxConcurrent, err)
	}
	cfg, err = parsedConfig(t)
	if want := deviceSlots(nil); err != nil || cfg.Devices != nil || cfg.MaxConcurrent != want {
		t.Errorf("defaults: devices %v, max-concurrent %d, %v; want every device and %d", cfg.Devices, cfg.MaxConcurrent, err, want)
	}
	var usage usageError
	if _, err := parsedConfig(t, "--devices", "one"); !errors.As(err, &usage) || !strings.Contains(err.Error(), "--devices") {
		t.Errorf("--devices one: %v; want a usage error naming the flag", err)
	}
}

// TestResultPeerFlag checks --result-peer: a descriptor that is not a
// socket is a usage error naming the flag, before anything is written;
// the commands without the flag are not affected.
func TestResultPeerFlag(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	out := dir + "/m.arrow"
	r := inProcess(t, "run", "--engine", "cpu", "--layout", "matrix", "--result-peer", "2", "-o", out, in)
	if r.code != 2 || !strings.Contains(r.stderr, "--result-peer 2: not a socket") {
		t.Errorf("--result-peer 2 (not a socket): exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a result was written despite the bad flag")
	}
	if r := inProcess(t, "sssp", "--engine", "cpu", "--source", "1", "-o", dir+"/s.arrow", in); r.code != 0 {
		t.Errorf("sssp without --result-peer: exit %d, %s", r.code, r.stderr)
	}
}
