package main

// The GPU engine of the binary: package gpu/devices registers package gpu
// with the pipeline, and holds the devices a command opens before it
// needs them, a server's device slots and the devices info lists. This is
// the one file of the commands that names the GPU; the others reach it
// through pipeline and these names (TestCommandsImportNoGPU).

import (
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/pipeline"
)

func init() { pipeline.RegisterGPU(devices.Driver{}) }

// earlyDevices are the devices a command opens before it needs them: at
// process start (OpenFirst) or beside the read (Begin); LoadGraph takes
// First and Others, and Release gives up what no graph took.
type earlyDevices = devices.Early

// newEarlyDevices are the early devices of a process that exits after its
// run where exits is set (what no graph took is then left to the exit).
func newEarlyDevices(exits bool) *earlyDevices { return devices.NewEarly(exits) }

// deviceStatus is one GPU as pathctl info lists it.
type deviceStatus = devices.Status

// deviceStatuses lists every GPU the driver sees, nil where none.
func deviceStatuses() []deviceStatus { return devices.Statuses() }

// deviceSlots is how many runs a server on devices (nil: every device)
// can give a GPU of its own at once.
func deviceSlots(ds []int) int { return devices.Slots(ds) }
