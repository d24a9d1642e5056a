package gpu

import (
	"fmt"
	"strings"

	"github.com/pathctl/pathctl/gpu/internal/plan"
)

// Tuning is the GPU engine's tuning: the configuration of the batched
// kernel's host plan and rounds (plan.Config), and of what only the
// runner reads of it (hub rows, scratch, block order). The zero value is
// the defaults (plan.DefaultConfig), which every figure of BENCHMARKS.md's
// opening table was measured with; docs/engine.md lists every key, its
// default and the measurement that chose it. The caller passes it in
// (PrepareTuned, PlanAhead): the package reads no environment variable.
type Tuning struct {
	config *plan.Config // nil: plan.DefaultConfig()
}

// ParseTuning returns the defaults changed by spec, comma-separated
// KEY=VALUE settings (plan.Config.Apply lists the keys; later settings of
// one key win). An empty spec is the defaults. An unknown key, a value
// that does not parse, or one out of its range is an error naming the
// setting.
func ParseTuning(spec string) (Tuning, error) {
	if strings.TrimSpace(strings.ReplaceAll(spec, ",", "")) == "" {
		return Tuning{}, nil
	}
	c := plan.DefaultConfig()
	if err := c.Apply(spec); err != nil {
		return Tuning{}, fmt.Errorf("gpu: %w", err)
	}
	return Tuning{config: &c}, nil
}

// batched is the runner configuration of t.
func (t Tuning) batched() batchedConfig {
	if t.config == nil {
		return defaultBatchedConfig()
	}
	return batchedConfig{Config: *t.config}
}
