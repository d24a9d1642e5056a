package gpu

// Hub rows sent in 16 bits (kernels/hubsend.cu): at each boundary of a
// phased round (hubshare.go) the runner that computed a share of the hub
// rows sends it to the others, and the link's time is on every device's
// path (R-MAT 18 on two H200s: 1.5-2.7 GiB a phase, about 8 ms each, 50 ms
// of the run's 1.14 s). Where the rows' finite distances all lie below
// 0xFFFF, the sender packs them into 16 bits and writes them straight into
// the receiver's memory, and the receiver widens them into its rows before
// its next phase: 26 ms of sends, and 1.81-1.83 x of one device's time
// against 1.78-1.79 x (docs/benchmarks-history.md, "Hub rows in 16 bits (`hubpack`, on
// by default)").
//
// Choices: the packed rows land in the receiver's block rows, which no
// kernel uses while the hub rows are computed but for the first phase's
// frontier at their start: the last quarter of them, in two halves by the
// parity of the phase, so that a sender of phase i+2 cannot overwrite
// rows the receiver has not yet widened (it must first wait for the
// receiver's share of phase i+1, computed after the widening on the
// receiver's stream). Each sender's packed span has a slot in the half,
// in runner order. int32 distances only, and only between runners of one
// context or whose contexts reach each other's memory
// (cuCtxEnablePeerAccess); anything else, and a span whose values do not
// fit, is sent whole as before.

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
)

// hubStage is where a runner of a phased round receives packed rows, and
// the flag of its own packs.
type hubStage struct {
	// at is the first half's device address, in the runner's block
	// rows; half is the bytes of each half.
	at   uint64
	half int64
	// flag is the overflow flag of the runner's packs, on its device;
	// wide is set once a pack found a distance that does not fit.
	flag devBuf
	wide bool
}

// slot is the device address where sender o's packed span of phase i
// lands in the stage of runner k, and whether it fits: counts are the
// phase's spans in distances by runner (spanCounts).
func (s *hubStage) slot(i, o, k int, counts []int64) (uint64, bool) {
	at, total := packedSlots(counts, k)
	if total > s.half {
		return 0, false
	}
	return s.at + uint64(int64(i%2)*s.half+at[o]), true
}

// newHubStage gives runner hs, joining a phased round, a stage for the
// packed rows the others send it, in the last quarter of its block rows
// (those before its first hub row's, at hubBase): none where HubPack is off, the distances
// are not int32, the rows past the first phase's frontier (of every hub,
// at most) leave no room, or its flag cannot be made (hs's rows then go
// whole: a 4-byte allocation that fails leaves the kernels to say why).
func newHubStage(hs *hubStore, hubBase uint64) *hubStage {
	if !hs.r.bk.cfg.HubPack || hs.r.distType != graph.DistInt32 {
		return nil
	}
	region := int64(hs.rows.firstRow) * hs.rowBytes()
	regionAt := hubBase - uint64(region)
	q := (region / 4) &^ (2*packedAlign - 1)
	frontier := batchedFrontierBytes(hs.r.n, len(hs.rows.vertices), true)
	if q < 2*packedAlign || frontier > region-q-packedAlign {
		return nil
	}
	flag, err := hs.r.e.dev.alloc(4)
	if err != nil {
		return nil
	}
	if err := hs.r.e.dev.d.cuMemsetD32_v2(flag.ptr, 0, 1).Err("cuMemsetD32_v2"); err != nil {
		hs.r.e.dev.free(&flag)
		return nil
	}
	at := (regionAt + uint64(region-q) + packedAlign - 1) &^ (packedAlign - 1)
	return &hubStage{at: at, half: (int64(regionAt+uint64(region)-at) / 2) &^ (packedAlign - 1), flag: flag}
}

// packedAlign is the alignment of each packed span in a receiver's
// staging (the kernels' 8-byte accesses; a line, to be safe).
const packedAlign = 256

// packedBytes is the size of count int32 distances packed in 16 bits,
// rounded up to packedAlign.
func packedBytes(count int64) int64 {
	return (2*((count+3)&^3) + packedAlign - 1) &^ (packedAlign - 1)
}

// packedSlots places the packed spans of one phase in receiver k's half:
// counts[o] is runner o's span in distances (0: none), k's own left out.
// It returns each sender's offset in the half and the bytes they take
// together.
func packedSlots(counts []int64, k int) (at []int64, total int64) {
	at = make([]int64, len(counts))
	for o, c := range counts {
		at[o] = total
		if c > 0 && o != k {
			total += packedBytes(c)
		}
	}
	return at, total
}

// pack16 queues, on dv's stream 0, the packing of count int32 distances at
// src into 16 bits at dst (dv's memory, or a peer's that dv's context
// reaches), setting the int32 at overflow (dv's memory) to 1 where one does
// not fit.
func pack16(dv *device, src uint64, count int64, dst, overflow uint64) error {
	return dv.launchAsync("hub_pack16_i32", batchedGrid((count+3)/4), src, uint64(count), dst, overflow)
}

// unpack16 queues, on dv's stream 0, the widening of count packed
// distances at src (dv's memory) into int32 distances at dst.
func unpack16(dv *device, src uint64, count int64, dst uint64) error {
	return dv.launchAsync("hub_unpack16_i32", batchedGrid((count+3)/4), src, uint64(count), dst)
}

// packedOverflow waits for dv's stream 0 and reports whether the int32
// flag at overflow was set, clearing it for the next pack.
func packedOverflow(dv *device, overflow uint64) (bool, error) {
	var flag int32
	if err := dv.readBack(unsafe.Pointer(&flag), overflow, 4, "hub_pack16_i32"); err != nil {
		return false, err
	}
	if flag == 0 {
		return false, nil
	}
	return true, dv.d.cuMemsetD32_v2(overflow, 0, 1).Err("cuMemsetD32_v2")
}

// packedSend is one receiver of a sender's packed span: where it lands.
type packedSend struct {
	to   *hubStore
	dst  uint64
	flag uint64 // the sender's overflow flag
}

// spanCounts is, by runner, the distances of its span of phase pr (0
// where it has no share).
func spanCounts(pr *phasePrep, n int) []int64 {
	counts := make([]int64, len(pr.span))
	for o, sp := range pr.span {
		if len(pr.share[o]) > 0 {
			counts[o] = int64(sp[1]-sp[0]) * int64(n)
		}
	}
	return counts
}

// packedSends are the runners to which hs may send its span of phase i
// packed (with g.mu held): those with a stage where the span fits, where hs
// has a stage (its flag, not yet freed) and has not found its rows too
// wide before. Two engines of one device share its primary context, and
// pack too (their tests on one device take this path).
func (g *hubGroup) packedSends(hs *hubStore, pr *phasePrep, i int) []packedSend {
	own := g.stage[hs]
	if own == nil || own.wide || own.flag.ptr == 0 {
		return nil
	}
	j := slices.Index(g.runners, hs)
	counts := spanCounts(pr, hs.r.n)
	var out []packedSend
	for k, o := range g.runners {
		st := g.stage[o]
		if k == j || st == nil {
			continue
		}
		if dst, ok := st.slot(i, j, k, counts); ok {
			out = append(out, packedSend{to: o, dst: dst, flag: own.flag.ptr})
		}
	}
	return out
}

// sendPacked packs count distances at src (hs's rows) into each receiver
// of packs that hs's context reaches (its own, or a peer's), and waits: it
// returns those sent, none where a value did not fit (hs's stage is then
// marked wide, and the rows go whole, now and after). A span that covers
// rows of a later phase, not yet computed, packs whatever they hold, and
// may find them wide: slower, never wrong. On hs's device goroutine, g.mu
// released.
func (g *hubGroup) sendPacked(hs *hubStore, packs []packedSend, src uint64, count int64) (map[*hubStore]bool, error) {
	dv := hs.r.e.dev
	sent := map[*hubStore]bool{}
	for _, p := range packs {
		if to := p.to.r.e.dev; to.ctx != dv.ctx {
			reach, err := enablePeer(dv, to)
			if err != nil {
				return nil, err
			}
			if !reach {
				continue
			}
		}
		if err := pack16(dv, src, count, p.dst, p.flag); err != nil {
			return nil, err
		}
		sent[p.to] = true
	}
	if len(sent) == 0 {
		return nil, nil
	}
	over, err := packedOverflow(dv, packs[0].flag)
	if err != nil {
		return nil, err
	}
	if over {
		tracef(hs.r.ordinal, "hub rows: a distance does not fit in 16 bits, the rows go whole")
		g.mu.Lock()
		g.stage[hs].wide = true
		g.mu.Unlock()
		return nil, nil
	}
	return sent, nil
}

// widen queues, on hs's stream 0 before its next phase, the widening of the
// spans of phase i that the others sent hs packed (with g.mu held).
func (g *hubGroup) widen(hs *hubStore, ph *phasedRound, pr *phasePrep, i int) error {
	st := g.stage[hs]
	if st == nil {
		return nil
	}
	k := slices.Index(g.runners, hs)
	counts := spanCounts(pr, hs.r.n)
	for j := range g.runners {
		if !ph.packed[[3]int{i, j, k}] {
			continue
		}
		src, ok := st.slot(i, j, k, counts)
		if !ok {
			return fmt.Errorf("gpu: hub phase %d: rows sent packed do not fit the stage", i)
		}
		dst := g.base[hs] + uint64(int64(pr.span[j][0])*hs.rowBytes())
		if err := unpack16(hs.r.e.dev, src, counts[j], dst); err != nil {
			return err
		}
	}
	return nil
}
