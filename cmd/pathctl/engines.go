package main

// The GPU engine of the binary: package gpu/devices registers package gpu
// with the pipeline. This is the one file of the commands that names the
// GPU; the commands reach it through pipeline (TestCommandsImportNoGPU).

import (
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/pipeline"
)

func init() { pipeline.RegisterGPU(devices.Driver{}) }
