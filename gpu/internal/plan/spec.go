package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Apply changes c by spec, a comma-separated list of key=value settings,
// so that benchmarks compare configurations without a rebuild (gpu.Tuning,
// which pathctl's --tune passes; docs/engine.md gives every default and
// the measurement that chose it):
//
//	order=cluster|bfs|id|block         Order
//	leaves=0|1, mins=0|1               Leaves, Mins
//	exactfloats=0|1                    ExactFloats
//	seeds=X                            Seeds (also on meshes when X > 0)
//	seedsmin=X                         SeedsMinShare
//	phases=X/Y/...                     Phases and PhasesWeighted ("phases=": two phases)
//	sparse=N                           Sparse
//	step=X                             DeltaScale, on every graph
//	oneslot=0|1                        OneSlotStats
//	hubrows=auto|N                     HubRows (auto: HubRowsAuto; 0: none)
//	hubshare=N                         HubShare (0: no bound but the block's)
//	hubcore=0|1                        HubCore
//	hubseeds=X                         HubSeeds (0: the hub rows' plan takes seeds and phases)
//	hubphases=X/Y/...                  HubPhases
//	hubpack=0|1                        HubPack
//	blockorder=0|1                     BlockOrder
//	scratchmb=X                        ScratchBytes in MiB (0: a working row per source)
//	scratchmin=X                       ScratchMinShare (0: a scratch wherever scratchmb allows)
//	nearfar=auto|on|off                NearFarMode
//	nearfarmin=N                       NearFarMinVertices
//	nearfarscale=X                     NearFarScale
//	nearfarown=N                       NearFarOwn
//
// An empty spec changes nothing. Each setting is checked as it is applied
// (Check): an unknown key, a value that does not parse or one out of its
// range is an error naming the setting, and c is then left partly changed.
func (c *Config) Apply(spec string) error {
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("plan: setting %q is not key=value", item)
		}
		if err := c.set(key, val); err != nil {
			return fmt.Errorf("plan: setting %q: %w", item, err)
		}
		if err := c.check(); err != nil {
			return fmt.Errorf("plan: setting %q: %w", item, err)
		}
	}
	return c.Check()
}

func (c *Config) set(key, val string) error {
	var err error
	switch key {
	case "order":
		if val == "block" {
			val = ""
		}
		c.Order = Order(val)
	case "leaves":
		c.Leaves, err = strconv.ParseBool(val)
	case "mins":
		c.Mins, err = strconv.ParseBool(val)
	case "exactfloats":
		c.ExactFloats, err = strconv.ParseBool(val)
	case "seeds":
		c.Seeds, err = strconv.ParseFloat(val, 64)
		c.SeedsOnMeshes = c.Seeds > 0
	case "seedsmin":
		c.SeedsMinShare, err = strconv.ParseFloat(val, 64)
	case "phases":
		c.Phases, err = parseShares(val)
		c.PhasesWeighted = c.Phases
	case "hubseeds":
		c.HubSeeds, err = strconv.ParseFloat(val, 64)
	case "hubphases":
		c.HubPhases, err = parseShares(val)
	case "sparse":
		c.Sparse, err = strconv.Atoi(val)
	case "scratchmb":
		var mb float64
		mb, err = strconv.ParseFloat(val, 64)
		c.ScratchBytes = int64(mb * (1 << 20))
	case "scratchmin":
		c.ScratchMinShare, err = strconv.ParseFloat(val, 64)
	case "hubrows":
		if val == "auto" {
			c.HubRows = HubRowsAuto
		} else {
			c.HubRows, err = strconv.Atoi(val)
		}
	case "hubshare":
		c.HubShare, err = strconv.Atoi(val)
	case "hubcore":
		c.HubCore, err = strconv.ParseBool(val)
	case "blockorder":
		c.BlockOrder, err = strconv.ParseBool(val)
	case "hubpack":
		c.HubPack, err = strconv.ParseBool(val)
	case "oneslot":
		c.OneSlotStats, err = strconv.ParseBool(val)
	case "step":
		c.DeltaScale, err = strconv.ParseFloat(val, 64)
		c.StepMeshesOnly = false
	case "nearfar":
		if val == "auto" {
			val = ""
		}
		c.NearFarMode = NearFarMode(val)
	case "nearfarmin":
		c.NearFarMinVertices, err = strconv.Atoi(val)
	case "nearfarscale":
		c.NearFarScale, err = strconv.ParseFloat(val, 64)
	case "nearfarown":
		c.NearFarOwn, err = strconv.Atoi(val)
	default:
		return fmt.Errorf("unknown key %q", key)
	}
	return err
}

// parseShares parses X/Y/... ("" is none).
func parseShares(val string) ([]float64, error) {
	var out []float64
	if val == "" {
		return nil, nil
	}
	for _, f := range strings.Split(val, "/") {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}
