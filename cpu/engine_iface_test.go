package cpu_test

import (
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/pipeline"
)

// The CPU engine plugs into the pipeline's seam as it is.
var _ pipeline.Engine = (*cpu.Engine)(nil)
