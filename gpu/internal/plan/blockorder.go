package plan

// BlockOrder returns the order in which to run sources when they are cut
// into blocks of block sources, as positions in sources, or nil where
// their own order is as good: one block holds them all, or a source comes
// twice. The order is the vertices' breadth-first rank (Rank).
//
// A block derives a leaf's row from its neighbour's, a source's row from
// its neighbours' rows and a later phase's rows from the earlier phases'
// only inside the block (Block.Derive, Block.Mins, Block.Seeds), so which
// sources share a block decides how many rows the kernel computes and how
// far it must go. Blocks cut from the breadth-first order hold
// neighbourhoods, where blocks cut from the vertices' own order (an R-MAT
// generator's is random) hold scattered vertices. Measured (docs/benchmarks-history.md,
// "Issues 18 and 19: stats sources in breadth-first order"; kernel rows
// summed over the blocks of every source by BenchmarkBlockOrder):
//
//	R-MAT 18, H100, 3 blocks of up to 83,521 sources, every source:
//	  vertex order 6.58 s, breadth-first 6.05 s, by falling degree 6.08 s,
//	  breadth-first with each leaf after its neighbour 8.15 s (fewer
//	  kernel rows, but blocks without hubs to seed their later phases)
//	R-MAT 20, H100, 65,536 random sources extrapolated: 173 s, 166 s,
//	  165 s, 165 s
//	kernel rows, R-MAT 18 in blocks of 87,202: 141,033 in vertex order,
//	  121,508 breadth-first
func (pg *Graph) BlockOrder(sources []int32, block int) []int32 {
	k := len(sources)
	if block <= 0 || block >= k {
		return nil
	}
	seen := make([]bool, pg.g.NumVertices)
	for _, s := range sources {
		if s < 0 || int(s) >= pg.g.NumVertices || seen[s] {
			return nil
		}
		seen[s] = true
	}
	return byRank(pg.Rank(), sources)
}

// HubsFirst moves the sources that are hubs (positions in sources, as
// order holds them) to the front of order, in the order of hubs, the
// others following in order's: the GPU runner's blocks then copy the hubs'
// resident rows in one piece (Block.Copies) and leave the kernel the rest.
func HubsFirst(order, sources, hubs []int32) []int32 {
	out, _ := hubsFirst(order, sources, hubs)
	return out
}

// hubsFirst is HubsFirst, and how many hubs it moved to the front.
func hubsFirst(order, sources, hubs []int32) ([]int32, int) {
	size := int32(0)
	for _, h := range hubs {
		size = max(size, h+1)
	}
	isHub := make([]bool, size)
	for _, h := range hubs {
		if h >= 0 {
			isHub[h] = true
		}
	}
	at := make([]int32, len(isHub)) // 1 + a hub's position in sources (0: none)
	for _, p := range order {
		if v := sources[p]; v >= 0 && int(v) < len(isHub) && isHub[v] {
			at[v] = p + 1
		}
	}
	out := make([]int32, 0, len(order))
	moved := make([]bool, len(sources))
	for _, h := range hubs {
		if h >= 0 && at[h] > 0 && !moved[at[h]-1] {
			out = append(out, at[h]-1)
			moved[at[h]-1] = true
		}
	}
	front := len(out)
	for _, p := range order {
		if !moved[p] {
			out = append(out, p)
		}
	}
	return out, front
}

// HubsSpread is HubsFirst for a run cut into blocks of block sources
// (the last one shorter) that run on several devices at once: every block
// of the result starts with its share of the hubs, in proportion to its
// size and in the hubs' order, followed by the others in order's. Each
// block then copies its hubs' resident rows in one piece, and no device
// is left the blocks whose every row must be derived (R-MAT 18 on two
// H200s with hubs first: the device of the hubs' block finished 0.13 s
// before the other). block ≤ 0 or at least the sources: HubsFirst.
func HubsSpread(order, sources, hubs []int32, block int) []int32 {
	first, h := hubsFirst(order, sources, hubs) // h: the hubs at its front
	k := len(first)
	if block <= 0 || block >= k {
		return first
	}
	hubPart, rest := first[:h], first[h:]
	out := make([]int32, 0, k)
	taken := 0
	for lo := 0; lo < k; lo += block {
		hi := min(lo+block, k)
		want := int(int64(h)*int64(hi)/int64(k)) - taken // the hubs' share up to hi
		want = max(0, min(want, hi-lo, len(hubPart)))
		if others := hi - lo - want; others > len(rest) {
			want = hi - lo - len(rest) // the others run out: more hubs
		}
		out = append(out, hubPart[:want]...)
		hubPart = hubPart[want:]
		taken += want
		others := hi - lo - want
		out = append(out, rest[:others]...)
		rest = rest[others:]
	}
	return out
}
