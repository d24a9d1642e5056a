package graph

// Block sizing: how many sources one block of a runner holds under a
// memory budget. The pipeline's planner sizes the host blocks with it,
// and the multi-device engine (gpu/devices) each device's chunks, so that
// on equal devices a device's chunk is the planner's block and is never
// cut.

// BlockSizing is what one block of a runner costs for one layout.
type BlockSizing struct {
	// StatsOnDevice says that the runner reduces the stats layout itself
	// (a StatsRunner asked for stats): no distance block reaches the host.
	StatsOnDevice bool
	// PerSource is the working memory one more source in a block costs:
	// StatsSizer's figure for stats on the device, else BytesPerSource.
	PerSource int64
	// FixedBytes is what a block takes whatever its size (StatsSizer's
	// StatsFixedBytes, for stats on the device), 0 otherwise.
	FixedBytes int64
	// InFlight is the number of blocks held at once: 1 for stats on the
	// device (one block on the device, none on the host), 3 for an
	// AsyncRunner (the one written, the one computing and the one whose
	// results are arriving), 2 otherwise.
	InFlight int
}

// SizingOf is the block sizing of runner r for the stats layout (stats
// true) or another.
func SizingOf(r Runner, stats bool) BlockSizing {
	_, isStats := r.(StatsRunner)
	s := BlockSizing{StatsOnDevice: stats && isStats, PerSource: r.BytesPerSource(), InFlight: 2}
	switch sz, sized := r.(StatsSizer); {
	case s.StatsOnDevice && sized:
		s.PerSource, s.FixedBytes, s.InFlight = sz.StatsBytesPerSource(), sz.StatsFixedBytes(), 1
	case s.StatsOnDevice:
		s.InFlight = 1
	default:
		if _, async := r.(AsyncRunner); async {
			s.InFlight = 3
		}
	}
	return s
}

// SelectedSizing is the block sizing of runner r where it selects the k
// nearest itself (NearestSelector said so): its BytesPerSource, with a
// StatsSizer's fixed bytes beside its blocks (the GPU selects in one
// result slot, beside the stats blocks' hub rows and scratch), one block
// on the device at a time. The pipeline's blocks of such a run and each
// device's chunks on several devices are sized by it.
func SelectedSizing(r Runner) BlockSizing {
	s := BlockSizing{PerSource: r.BytesPerSource(), InFlight: 1}
	if sz, ok := r.(StatsSizer); ok {
		s.FixedBytes = sz.StatsFixedBytes()
	}
	return s
}

// Usable is the part of budget the blocks' sources may take: budget less
// FixedBytes, at least half of it.
func (s BlockSizing) Usable(budget int64) int64 {
	if s.FixedBytes > 0 && budget > 0 {
		return max(budget-s.FixedBytes, budget/2)
	}
	return budget
}

// MaxSources is the most sources of one block whose InFlight blocks fit
// usable bytes (Usable's figure), at least 1; 0 where nothing bounds them
// (no usable budget, or sources that cost nothing).
func (s BlockSizing) MaxSources(usable int64) int {
	if s.PerSource <= 0 || usable <= 0 {
		return 0
	}
	return int(max(1, usable/(int64(max(s.InFlight, 1))*s.PerSource)))
}

// SourceBlock is a half-open range of a run's source list computed
// together: one block of the planner.
type SourceBlock struct{ Start, End int }

// DefaultMemBudget is the memory budget of the blocks in flight where
// neither the caller nor the engine (Budgeter) gives one.
const DefaultMemBudget = 1 << 30
