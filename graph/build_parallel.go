package graph

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Building a CSR on every core: the same three steps as buildTyped, each
// split among workers, and the same CSR, arc for arc.
//
//  1. Each worker counts the out-degrees of its own slice of rows into a
//     histogram of its own; a scan over vertices then gives every worker,
//     for every vertex, where its arcs start, after the arcs of the
//     workers before it. No atomics, and the arcs of a row land in the
//     order of the input rows, as the serial scatter puts them.
//  2. Each worker scatters its slice of rows to those places.
//  3. The workers take chunks of vertices in turn and sort and dedupe
//     their rows in place (the first arc of each target in (target,
//     weight) order, as buildTyped keeps it), noting each row's kept
//     length and the smallest and largest weight kept; a scan gives the
//     offsets, and the rows move down over the dropped arcs.
//
// The histograms cost workers × (n+1) offsets, so workers is bounded by
// the arcs per vertex (parallelWorkers): the histograms are never larger
// than the arcs themselves.

// parallelMinRows is the fewest rows Build splits among workers: below
// it, starting them costs more than it saves. Not measured: a build of
// 64Ki rows takes about a millisecond on one core.
const parallelMinRows = 1 << 16

// parallelMaxWorkers bounds the workers of one build (the histograms grow
// with them; past 16 the scans over vertices, which stay serial, weigh
// more than the split work). Not measured beyond 16 cores.
const parallelMaxWorkers = 16

// parallelRowChunk is the vertices a worker of step 3 takes at a time: big
// enough that taking them costs nothing, small enough that the heavy rows
// of a skewed graph spread over the workers.
const parallelRowChunk = 256

// parallelWorkers is how many workers build a CSR of m rows over n
// vertices with procs cores: 1 below parallelMinRows rows, else at most
// procs, parallelMaxWorkers and the rows per vertex (so that the workers'
// histograms hold no more entries than there are rows).
func parallelWorkers(n, m, procs int) int {
	if m < parallelMinRows || procs < 2 {
		return 1
	}
	w := min(procs, parallelMaxWorkers)
	if n > 0 {
		w = min(w, max(1, m/n))
	}
	return w
}

// buildTypedParallel is buildTyped split among workers (at least 2).
func buildTypedParallel[D Number](g *CSR, e *Edges, undirected bool, workers int) {
	n, m := g.NumVertices, len(e.Src)
	span := (m + workers - 1) / workers
	rowsOf := func(w int) (int, int) { return min(w*span, m), min((w+1)*span, m) }
	each := func(f func(w int)) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(w)
			}()
		}
		wg.Wait()
	}

	// 1. Per-worker degree histograms, turned into per-worker starts.
	next := make([][]EdgeOffset, workers)
	each(func(w int) {
		counts := make([]EdgeOffset, n)
		lo, hi := rowsOf(w)
		for i := lo; i < hi; i++ {
			s, d := e.Src[i], e.Dst[i]
			if s == d {
				continue
			}
			counts[s]++
			if undirected {
				counts[d]++
			}
		}
		next[w] = counts
	})
	starts := make([]EdgeOffset, n+1) // of each row, before the dedupe
	var total EdgeOffset
	for u := range n {
		starts[u] = total
		for w := range workers {
			c := next[w][u]
			next[w][u] = total
			total += c
		}
	}
	starts[n] = total

	// 2. Scatter, each worker to its own places.
	targets := make([]VertexID, total)
	weights := make([]D, total)
	each(func(w int) {
		at := next[w]
		lo, hi := rowsOf(w)
		for i := lo; i < hi; i++ {
			s, d := e.Src[i], e.Dst[i]
			if s == d {
				continue
			}
			x := weightAt[D](e, i)
			targets[at[s]], weights[at[s]] = d, x
			at[s]++
			if undirected {
				targets[at[d]], weights[at[d]] = s, x
				at[d]++
			}
		}
	})
	next = nil

	// 3. Sort and dedupe every row in place, in chunks of vertices.
	kept := make([]EdgeOffset, n)
	type bounds struct {
		lo, hi D
		any    bool
	}
	found := make([]bounds, workers)
	var taken atomic.Int64
	each(func(w int) {
		var row []rowArc[D]
		var sc sortScratch[D]
		b := bounds{}
		for {
			first := int(taken.Add(parallelRowChunk)) - parallelRowChunk
			if first >= n {
				break
			}
			for u := first; u < min(first+parallelRowChunk, n); u++ {
				lo, hi := starts[u], starts[u+1]
				row = row[:0]
				for k := lo; k < hi; k++ {
					row = append(row, rowArc[D]{targets[k], weights[k]})
				}
				sortRow(row, &sc)
				out := lo
				for k, a := range row {
					if k > 0 && row[k-1].t == a.t {
						continue
					}
					targets[out], weights[out] = a.t, a.w
					out++
					if !b.any {
						b = bounds{a.w, a.w, true}
					}
					b.lo, b.hi = min(b.lo, a.w), max(b.hi, a.w)
				}
				kept[u] = out - lo
			}
		}
		found[w] = b
	})
	offsets := make([]EdgeOffset, n+1)
	var out EdgeOffset
	for u := range n {
		offsets[u] = out
		if at := starts[u]; at != out {
			copy(targets[out:out+kept[u]], targets[at:at+kept[u]])
			copy(weights[out:out+kept[u]], weights[at:at+kept[u]])
		}
		out += kept[u]
	}
	offsets[n] = out
	g.Offsets = offsets
	g.Targets = targets[:out:out]
	g.Weights = weights[:out:out]
	var all bounds
	for _, b := range found {
		switch {
		case !b.any:
		case !all.any:
			all = b
		default:
			all.lo, all.hi = min(all.lo, b.lo), max(all.hi, b.hi)
		}
	}
	if all.any {
		g.MinWeight, g.MaxWeight = float64(all.lo), float64(all.hi)
	}
}

// buildWorkers is the workers Build uses for m rows over n vertices on
// this process's cores.
func buildWorkers(n, m int) int { return parallelWorkers(n, m, runtime.GOMAXPROCS(0)) }

// rowArc is one arc of a row being sorted: its target and weight.
type rowArc[D Number] struct {
	t VertexID
	w D
}

// sortRow orders a row's arcs by target, then by rising weight, so that
// the first of each target is the one a build keeps; sc is scratch space
// kept between rows. A comparison function's calls were three quarters of
// a build's time: rows of int32 weights (integer graphs, and unweighted
// ones) are sorted as one uint64 key per arc (sortRowInt32), and others
// by target as keys, then each run of one target by weight
// (sortRowByTarget). R-MAT 18 (8.4 M arcs) on the 2-core development
// machine: 270-283 ms by comparisons, 215 ms by keys, 131-135 ms with the
// rows of 128 arcs or more by radix; R-MAT 20, 1.28 -> 0.57 s
// (docs/benchmarks-history.md, "The CSR built on the CPU (development machine)").
func sortRow[D Number](row []rowArc[D], sc *sortScratch[D]) {
	if len(row) < 2 {
		return
	}
	if r, ok := any(row).([]rowArc[int32]); ok {
		sortRowInt32(r, &sc.keys)
		return
	}
	sortRowByTarget(row, sc)
}

// sortScratch is sortRow's scratch space, kept between the rows of one
// worker.
type sortScratch[D Number] struct {
	keys []uint64
	arcs []rowArc[D]
}

// sortRowByTarget is sortRow for weights that do not fit a key beside the
// target (int64, float32 and float64): the keys target<<32 | position
// order the arcs by target (stably), and each run of one target, parallel
// arcs and so short, is then ordered by weight in place (equal weights,
// -0 and +0 among them, in the row's order).
func sortRowByTarget[D Number](row []rowArc[D], sc *sortScratch[D]) {
	n := len(row)
	buf := slices.Grow(sc.keys[:0], 2*n)[:2*n]
	k := buf[:n]
	for i, a := range row {
		k[i] = uint64(uint32(a.t))<<32 | uint64(i)
	}
	k = sortKeys(k, buf[n:])
	sc.arcs = append(sc.arcs[:0], row...)
	for i, key := range k {
		row[i] = sc.arcs[uint32(key)]
	}
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && row[hi].t == row[lo].t {
			hi++
		}
		if hi-lo > 16 {
			slices.SortStableFunc(row[lo:hi], func(a, b rowArc[D]) int { return cmp.Compare(a.w, b.w) })
		} else {
			for i := lo + 1; i < hi; i++ { // insertion sort: stable
				for j := i; j > lo && row[j].w < row[j-1].w; j-- {
					row[j], row[j-1] = row[j-1], row[j]
				}
			}
		}
		lo = hi
	}
	sc.keys = buf[:0]
}

// sortRowInt32 is sortRow for int32 weights: each arc as the key
// target<<32 | weight with its sign bit flipped (so that the unsigned
// order of the low half is the signed order of the weights). Rows of
// radixMinRow arcs or more (a skewed graph's hubs, which hold most arcs)
// are sorted by radixSort.
func sortRowInt32(row []rowArc[int32], keys *[]uint64) {
	n := len(row)
	buf := slices.Grow((*keys)[:0], 2*n)[:2*n]
	k := buf[:n]
	for i, a := range row {
		k[i] = uint64(uint32(a.t))<<32 | uint64(uint32(a.w)^1<<31)
	}
	k = sortKeys(k, buf[n:])
	for i, key := range k {
		row[i] = rowArc[int32]{t: VertexID(int32(key >> 32)), w: int32(uint32(key) ^ 1<<31)}
	}
	*keys = buf[:0]
}

// sortKeys sorts k, with spare (as long as k) as room for radixSort, and
// returns the sorted keys: by radixSort from radixMinRow keys on, else by
// comparisons.
func sortKeys(k, spare []uint64) []uint64 {
	if len(k) >= radixMinRow {
		return radixSort(k, spare)
	}
	slices.Sort(k)
	return k
}

// radixMinRow is the shortest row radixSort sorts: below it the counts it
// clears and scans cost more than a comparison sort. R-MAT 18's build on
// the 2-core development machine, five builds in a row each: 120-140 ms
// at 128, 126-143 ms at 512, 127-155 ms at 64, 147-163 ms at 1,024
// (docs/benchmarks-history.md, "The CSR built on the CPU (development machine)").
const radixMinRow = 128

// radixBits is the width of radixSort's digits.
const radixBits = 11

// radixSort sorts src by a least-significant-digit radix sort over the
// bits where its keys differ, in digits of radixBits, skipping those in
// which every key agrees, with dst (as long as src) as the other buffer
// of each pass, and returns the one that holds the sorted keys.
func radixSort(src, dst []uint64) []uint64 {
	if len(src) == 0 {
		return src
	}
	var differ uint64
	for _, x := range src {
		differ |= x ^ src[0]
	}
	var count [1 << radixBits]int
	for shift := uint(0); shift < 64; shift += radixBits {
		if (differ>>shift)&(1<<radixBits-1) == 0 {
			continue
		}
		clear(count[:])
		for _, x := range src {
			count[(x>>shift)&(1<<radixBits-1)]++
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, x := range src {
			d := (x >> shift) & (1<<radixBits - 1)
			dst[count[d]] = x
			count[d]++
		}
		src, dst = dst, src
	}
	return src
}
