package pipeline

import "github.com/pathctl/pathctl/gpu/devices"

// The tests run with the GPU engine registered, as pathctl does
// (cmd/pathctl/engines.go).
func init() { RegisterGPU(devices.Driver{}) }
