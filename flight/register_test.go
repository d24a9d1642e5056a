package flight

import (
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/pipeline"
)

// The tests run with the GPU engine registered, as pathctl does
// (cmd/pathctl/engines.go).
func init() { pipeline.RegisterGPU(devices.Driver{}) }
