package pipeline

import (
	"fmt"
	"time"

	"github.com/pathctl/pathctl/graph"
)

// timings is where the blocks' time went, for --verbose: in the producer
// (computing or waiting for blocks, building records, waiting for the
// sink to take them) and in the sink; for the GPU also the device's share
// (kernels and device-to-host copies by CUDA events, the move from pinned
// memory into the block by the host clock), which overlaps the rest.
type timings struct {
	compute, records, handOver, sink time.Duration
	kernel, copy, move               time.Duration
	plan, alloc                      time.Duration
	device                           bool
}

func (t timings) String() string {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	s := fmt.Sprintf("in the blocks: computing or waiting for them %s, building records %s, waiting for the sink %s; in the sink %s",
		ms(t.compute), ms(t.records), ms(t.handOver), ms(t.sink))
	if t.device {
		s += fmt.Sprintf("; on the device: kernels %s, device-to-host copies %s, moves into the blocks %s; on the host before the kernels: planning them %s, allocating device memory %s",
			ms(t.kernel), ms(t.copy), ms(t.move), ms(t.plan), ms(t.alloc))
	}
	return s
}

// addDevice adds what w, a runner, Waiter or ResidentBlock, reports of
// its device time (graph.DeviceTimer, graph.CopyTimer).
func (t *timings) addDevice(w any) {
	if d, ok := w.(graph.DeviceTimer); ok {
		t.kernel += d.KernelTime()
		t.device = true
		plan, alloc := d.HostTimes()
		t.plan += plan
		t.alloc += alloc
	}
	if c, ok := w.(graph.CopyTimer); ok {
		t.copy += c.CopyTime()
		t.move += c.MoveTime()
	}
}
