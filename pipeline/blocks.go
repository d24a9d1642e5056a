package pipeline

// Block planning: how many sources a block holds, from the memory budget
// (the caller's, or the engine's through graph.Budgeter), the blocks in
// flight and the runner's bytes per source.

import (
	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// planRun plans the host blocks of a run of n sources over nv vertices,
// and the part of its schedule that depends on them: the device blocks of
// a ResidentRunner, and for the matrix layout host blocks cut to pieces of
// pinned memory (pinnedBlockBytes). narrowBytes, when above 0, is the host
// memory of one source's row of a run whose engine narrows the rows itself
// (narrowedRowBytes): planNarrowed plans it.
func planRun(opt Options, eng graph.Engine, runner graph.Runner, nv, n int, narrowBytes int64, selected bool) ([]SourceBlock, schedule) {
	var sched schedule
	if narrowBytes > 0 && opt.Layout != arrowio.LayoutStats {
		return planNarrowed(opt, eng, runner, n, narrowBytes, selected), sched
	}
	sizing := sizingOf(runner, opt)
	blocks := PlanBlocksInFlight(n, sizing.PerSource, sizing.Usable(budget(opt, eng, runner)), maxBlock(opt, n, runner), sizing.InFlight)
	if d, ok := eng.(graph.DeviceGroup); ok && d.Devices() > 1 && statsOnDevice(runner, opt) && opt.MaxBlock == 0 {
		blocks = evenBlocks(n, blocks)
	}
	if _, ok := runner.(graph.ResidentRunner); ok && opt.Layout != arrowio.LayoutStats {
		sched.residentMax = residentMax(opt, eng, runner, n)
	}
	if _, ok := runner.(graph.HostPinner); ok && opt.Layout == arrowio.LayoutMatrix && sched.residentMax > blockMax(blocks) && opt.MaxBlock == 0 {
		// The host blocks only carry rows of the device block: small
		// ones keep the memory the pool pins small.
		sched.computeMax = blockMax(blocks)
		blocks = splitBlocks(blocks, max(1, int(pinnedBlockBytes/(int64(nv)*int64(runner.DistType().Size())))))
	}
	return blocks, sched
}

// planNarrowed plans the blocks of a run whose rows the engine narrows
// itself (its targets' cells, its k nearest) and starts ahead: what
// crosses back per source is small, so, as for the stats on the device, a
// block holds as many sources as the device's budget (or the memory
// budget) fits, the runner's bytes per source counting every device
// buffer of both result slots; the three narrowed blocks in flight on the
// host must fit the host's budget too; opt.MaxBlock, when set, bounds
// them. Where several blocks remain, block i+1's kernels run while block
// i travels and is written. Fewer, larger blocks rather than more blocks
// to overlap: what overlaps is small (a narrowed block's copy and
// records), and the stats on the device ran faster in one block than in
// several (maxBlock). On the H100's 1000 × 1000 grid (12 MB of device
// memory a source) the 4,096 sources of the OD matrix fit one block,
// where they ran in 16 of 256 before.
func planNarrowed(opt Options, eng graph.Engine, runner graph.Runner, n int, narrowBytes int64, selected bool) []SourceBlock {
	device, host := narrowedBudgets(opt, eng)
	if selected {
		// The k nearest selected in one slot keep the stats blocks'
		// fixed rows (the hub rows and the scratch) beside them.
		device = graph.SelectedSizing(runner).Usable(device)
	}
	size := min(device/max(1, runner.BytesPerSource()), host/(3*narrowBytes))
	return PlanBlocksInFlight(n, 1, max(1, size), opt.MaxBlock, 1)
}

// narrowedBudgets are the device's and the host's memory budgets of a run
// whose engine narrows the rows itself: the caller's for both, else the
// engine's (graph.Budgeter), else DefaultMemBudget.
func narrowedBudgets(opt Options, eng graph.Engine) (device, host int64) {
	device, host = opt.MemBudget, opt.MemBudget
	if b, ok := eng.(graph.Budgeter); ok && opt.MemBudget <= 0 {
		device, host = b.DeviceBudget(), b.DefaultBudget()
	}
	if device <= 0 {
		device = DefaultMemBudget
	}
	if host <= 0 {
		host = DefaultMemBudget
	}
	return device, host
}

// evenBlocks spreads n sources over as many blocks as blocks holds, of
// equal sizes (multiples of 8 but the last, which is at most 8 × the
// count smaller), none larger than blocks' largest. The budget sizes
// blocks as large as it allows and leaves the rest to a last block that
// can be small; on several devices that last block and the cut of the
// large one give a device two small pieces in a row (R-MAT 18 on two
// H200s: 147k and 27k sources became 87k on one device and 60k then 27k
// on the other, 1.04× one device). Equal blocks go one to a device whole.
// planRun evens the blocks of a stats run on several devices only. One
// device keeps the budget's: the batched kernel derives most rows of a
// block that holds most vertices, so one large block and a small one beat
// two even ones there (R-MAT 18 on one H200: 147k + 27k sources 3.87 s,
// 87k + 87k 5.6 s; on two, the even blocks 3.0 s against 3.73 s;
// docs/benchmarks-history.md "Issue 19: even blocks on two devices"). The
// stats files of one and several devices then hold the same rows in other
// record batches; a block size the caller fixed (Options.MaxBlock) is
// kept, and the files with it.
func evenBlocks(n int, blocks []SourceBlock) []SourceBlock {
	k := len(blocks)
	if k < 2 {
		return blocks
	}
	size := min(roundUp8((n+k-1)/k), blockMax(blocks))
	out := make([]SourceBlock, 0, k)
	for s := 0; s < n; s += size {
		out = append(out, SourceBlock{s, min(s+size, n)})
	}
	return out
}

// planOptions is opt as the block planner of a run on eng sees it: with
// several devices (graph.DeviceGroup), a --gpu-mem budget (per device) is
// the first device's, split among the engines that share its device.
func planOptions(opt Options, eng graph.Engine) Options {
	if d, ok := eng.(graph.DeviceGroup); ok && opt.MemBudget > 0 {
		opt.MemBudget /= int64(d.FirstSharing())
	}
	return opt
}

// planRunner is the runner whose blocks a run on runner plans: of a
// multi-device run (graph.DeviceSet), the first device's, so that the
// blocks (and the output's record batches) are those of one device alone.
func planRunner(runner graph.Runner) graph.Runner {
	if d, ok := runner.(graph.DeviceSet); ok {
		return d.PlanRunner()
	}
	return runner
}

// SourceBlock is a half-open range of the source list run together.
type SourceBlock struct{ Start, End int }

// seamBlocks is blocks as the engine seam takes them (graph.DeviceSet).
func seamBlocks(blocks []SourceBlock) []graph.SourceBlock {
	out := make([]graph.SourceBlock, len(blocks))
	for i, b := range blocks {
		out[i] = graph.SourceBlock(b)
	}
	return out
}

// PlanBlocks splits n sources into blocks whose working memory, two blocks
// in flight, fits budget; every block holds at least one source and at most
// maxBlock. It never fails: a budget below one source gives blocks of one,
// and the caller reports that budget if it cannot be met.
func PlanBlocks(n int, bytesPerSource, budget int64, maxBlock int) []SourceBlock {
	return PlanBlocksInFlight(n, bytesPerSource, budget, maxBlock, 2)
}

// PlanBlocksInFlight is PlanBlocks with inFlight blocks alive at once (at
// least 1): 2 for a runner that runs one block while the previous is
// written, 3 for an AsyncRunner, whose third block is being copied out.
func PlanBlocksInFlight(n int, bytesPerSource, budget int64, maxBlock, inFlight int) []SourceBlock {
	if n == 0 {
		return nil
	}
	size := n
	if most := (graph.BlockSizing{PerSource: bytesPerSource, InFlight: inFlight}).MaxSources(budget); most > 0 {
		size = min(n, most)
	}
	if maxBlock > 0 {
		size = min(size, maxBlock)
	}
	blocks := make([]SourceBlock, 0, (n+size-1)/size)
	for s := 0; s < n; s += size {
		blocks = append(blocks, SourceBlock{s, min(s+size, n)})
	}
	return blocks
}

// pinnedBlockBytes bounds the distances of a host block that only carries
// rows of a device block to the host (the matrix layout on the GPU): the
// block pool pins a few such blocks, and pinning is slow and holds the
// driver back meanwhile (H100, R-MAT 16: pinning four blocks of 548 MB
// while the kernels ran took their time from 0.32 to 0.92 s).
const pinnedBlockBytes = 64 << 20

// splitBlocks splits every block into pieces of at most size sources.
func splitBlocks(blocks []SourceBlock, size int) []SourceBlock {
	var out []SourceBlock
	for _, b := range blocks {
		for s := b.Start; s < b.End; s += size {
			out = append(out, SourceBlock{s, min(s+size, b.End)})
		}
	}
	return out
}

// mergeBlocks joins consecutive blocks into blocks of at most size
// sources (a block larger than size stays whole).
func mergeBlocks(blocks []SourceBlock, size int) []SourceBlock {
	var out []SourceBlock
	for _, b := range blocks {
		if n := len(out); n > 0 && out[n-1].End == b.Start && b.End-out[n-1].Start <= size {
			out[n-1].End = b.End
			continue
		}
		out = append(out, b)
	}
	return out
}

func roundUp8(n int) int { return (n + 7) / 8 * 8 }

func blockMax(blocks []SourceBlock) int {
	m := 0
	for _, b := range blocks {
		m = max(m, b.End-b.Start)
	}
	return m
}

func budget(opt Options, eng graph.Engine, runner graph.Runner) int64 {
	if opt.MemBudget > 0 {
		return opt.MemBudget
	}
	b, ok := eng.(graph.Budgeter)
	switch {
	case ok && statsOnDevice(runner, opt):
		return b.DeviceBudget()
	case ok:
		return b.DefaultBudget()
	}
	return DefaultMemBudget
}

// maxBlock keeps blocks small enough for steady progress and for the
// writer to overlap the engine: at least 16 blocks on large runs, never
// fewer sources than the engine can spread over its threads. Where the
// engine reduces the stats layout itself (the GPU), a block leaves only a
// few words per source and larger blocks keep the device busier, so only
// the memory budget bounds them (H100, all-pairs stats: R-MAT 16 1.30 s in
// 5 blocks, 1.24 s in one; 256×256 grid 2.50 s in 4 blocks, 2.27 s in one).
func maxBlock(opt Options, n int, runner graph.Runner) int {
	if opt.MaxBlock > 0 {
		return opt.MaxBlock
	}
	if statsOnDevice(runner, opt) {
		return max(256, n)
	}
	return max(256, n/16)
}

// sizingOf is the block sizing of runner for opt's layout
// (graph.SizingOf): the one rule of the planner here and of each device's
// chunks on several devices (gpu/devices).
func sizingOf(runner graph.Runner, opt Options) graph.BlockSizing {
	return graph.SizingOf(runner, opt.Layout == arrowio.LayoutStats)
}

// bytesPerSource is the memory one more source in a block of opt's run
// costs: graph.StatsSizer's figure where the runner reduces the stats on
// the device (one set of result rows on the GPU), else BytesPerSource.
func bytesPerSource(runner graph.Runner, opt Options) int64 {
	return sizingOf(runner, opt).PerSource
}

// sizeStatsRun lets a runner that keeps rows beside a stats run's blocks
// (graph.StatsRunSizer: the GPU's hub rows; on several devices, each
// device's) size them for the run of n sources before its blocks are
// planned (planRun, on planRunner(runner)): on the memory of one device's
// block, or where the caller bounds the blocks (Options.MaxBlock) on the
// bytes of two such blocks, so that a run the caller cuts small keeps
// rows in proportion.
//
// A run whose k nearest the engine selects (selected) is sized so too:
// the GPU selects them in one result slot beside the hub rows, on the
// device budget planNarrowed gives its blocks.
func sizeStatsRun(opt Options, eng graph.Engine, runner graph.Runner, n int, selected bool) {
	s, ok := runner.(graph.StatsRunSizer)
	if !ok || !(statsOnDevice(runner, opt) || selected) {
		return
	}
	plan := planRunner(runner)
	b, per := budget(opt, eng, plan), bytesPerSource(plan, opt)
	if selected {
		b, _ = narrowedBudgets(opt, eng)
	}
	if opt.MaxBlock > 0 && opt.MaxBlock < n {
		b = min(b, 2*int64(opt.MaxBlock)*per)
	}
	s.SizeStatsRun(n, b)
}

// statsOnDevice reports whether the runner reduces opt's stats layout
// itself, so that no distance block reaches the host.
func statsOnDevice(runner graph.Runner, opt Options) bool {
	return sizingOf(runner, opt).StatsOnDevice
}

// residentMax is the most sources of one device block of a
// ResidentRunner: the device budget (or --gpu-mem) over the runner's bytes
// per source, which count every device buffer of a source.
func residentMax(opt Options, eng graph.Engine, runner graph.Runner, sources int) int {
	b := opt.MemBudget
	if d, ok := eng.(graph.Budgeter); ok && b <= 0 {
		b = d.DeviceBudget()
	}
	per := runner.BytesPerSource()
	if b <= 0 || per <= 0 {
		return 0
	}
	return int(min(int64(sources), b/per))
}
