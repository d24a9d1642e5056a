package arrowio

// Building the vertex dictionary. Integer ids are gathered as order keys
// (int64 whose signed order is the id order), then either ranked through a
// table over [min, max] when the ids are dense enough (the common case of ids
// 0..n-1 or 1..n: O(m + span)), or radix sorted together with their
// positions (one MSD pass, then LSD passes over the 256 buckets in parallel)
// so that one walk over the sorted run both deduplicates them and writes
// every dense id (O(m), no search). Past 2^31 edges, where positions no
// longer fit uint32, the distinct keys are looked up by binary search
// instead. String ids are interned as they arrive (one hash lookup per
// value, one copy per distinct id), and the distinct strings are sorted once
// at the end.

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pathctl/pathctl/graph"
)

// positionLimit is the most id occurrences (twice the edges) that
// denseBySort's uint32 positions index; a variable so that tests can reach
// the path beyond it.
var positionLimit uint64 = math.MaxUint32

// maxVertexCount is the most distinct vertices a graph may have; a variable
// so that tests can lower it.
var maxVertexCount = graph.MaxVertices

func tooManyVertices(name, col string, row int64) error {
	return &vertexLimitError{name: name, col: col, row: row}
}

// vertexLimitError reports the row where the vertex count passes
// maxVertexCount; text readers restate the row as a line.
type vertexLimitError struct {
	name, col string
	row       int64
}

func (e *vertexLimitError) Error() string {
	return fmt.Sprintf("arrowio: %s: column %q row %d: more than %d distinct vertices; dense ids are int32", e.name, e.col, e.row, maxVertexCount)
}

// parallelFor runs fn over [0, n) in contiguous chunks, one per core, when n
// is large enough to pay for the goroutines.
func parallelFor(n int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < 1<<16 || workers == 1 {
		fn(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// denseIntIDs maps the order keys of both columns to dense ids. It returns
// the distinct keys in ascending order and the dense columns.
func denseIntIDs(srcKeys, dstKeys []int64, name, srcCol, dstCol string) (verts []int64, src, dst []int32, err error) {
	m := len(srcKeys)
	src, dst = make([]int32, m), make([]int32, m)
	if m == 0 {
		return []int64{}, src, dst, nil
	}
	lo, hi := keyRange(srcKeys, dstKeys)
	span := uint64(hi) - uint64(lo) // hi >= lo: the difference is exact as unsigned
	if span < uint64(4*m)+1<<16 {
		return denseByTable(srcKeys, dstKeys, lo, int(span)+1, src, dst, name, srcCol, dstCol)
	}
	if 2*uint64(m) <= positionLimit {
		verts, err := denseBySort(srcKeys, dstKeys, src, dst, name, srcCol, dstCol)
		return verts, src, dst, err
	}
	keys := make([]int64, 0, 2*m)
	keys = append(append(keys, srcKeys...), dstKeys...)
	sortKeys(keys)
	keys = slices.Clip(slices.Compact(keys))
	rank := func(k int64) int {
		i, _ := slices.BinarySearch(keys, k)
		return i
	}
	if len(keys) > maxVertexCount {
		return nil, nil, nil, firstExcess(srcKeys, dstKeys, len(keys), rank, name, srcCol, dstCol)
	}
	parallelFor(m, func(a, b int) {
		for i := a; i < b; i++ {
			src[i], dst[i] = int32(rank(srcKeys[i])), int32(rank(dstKeys[i]))
		}
	})
	return keys, src, dst, nil
}

// denseBySort sorts every id occurrence with its position (src rows first,
// then dst rows), then walks the sorted run: each new key is the next vertex,
// and every position gets its rank, without any search.
func denseBySort(srcKeys, dstKeys []int64, src, dst []int32, name, srcCol, dstCol string) ([]int64, error) {
	m := len(srcKeys)
	keys := make([]int64, 0, 2*m)
	keys = append(append(keys, srcKeys...), dstKeys...)
	pos := make([]uint32, 2*m)
	for i := range pos {
		pos[i] = uint32(i)
	}
	sortKeysWith(keys, pos)
	n := 0
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			n++
		}
	}
	verts := make([]int64, 0, n)
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			verts = append(verts, k)
		}
	}
	if n > maxVertexCount {
		rank := func(k int64) int {
			i, _ := slices.BinarySearch(verts, k)
			return i
		}
		return nil, firstExcess(srcKeys, dstKeys, n, rank, name, srcCol, dstCol)
	}
	rank := int32(-1)
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			rank++
		}
		if p := int(pos[i]); p < m {
			src[p] = rank
		} else {
			dst[p-m] = rank
		}
	}
	return verts, nil
}

// keyRange returns the least and the greatest key of both columns (of
// equal length, not empty), the rows cut among the cores.
func keyRange(srcKeys, dstKeys []int64) (lo, hi int64) {
	lo, hi = srcKeys[0], srcKeys[0]
	var mu sync.Mutex
	parallelFor(len(srcKeys), func(a, b int) {
		l, h := srcKeys[a], srcKeys[a]
		for _, keys := range [][]int64{srcKeys[a:b], dstKeys[a:b]} {
			for _, k := range keys {
				l, h = min(l, k), max(h, k)
			}
		}
		mu.Lock()
		lo, hi = min(lo, l), max(hi, h)
		mu.Unlock()
	})
	return lo, hi
}

// markMaxWorkers bounds the bitmaps markKeys makes, one per worker of
// span bits each: at most twice the table's bytes.
const markMaxWorkers = 8

// markKeys sets table[k-lo] to 1 for every key of both columns (of equal
// length): each worker marks its rows' keys in a bitmap of its own, and
// the bitmaps are then joined into the table, the words cut among the
// cores. BenchmarkDenseIntIDs (16.8 million rows over a million ids) on
// the 2-core development machine, with the keys' range cut the same way:
// 103-108 → 70-74 ms (docs/benchmarks-history.md, "Parquet row groups read side by
// side (development machine)").
func markKeys(srcKeys, dstKeys []int64, lo int64, table []int32) {
	m := len(srcKeys)
	workers := min(runtime.GOMAXPROCS(0), markMaxWorkers)
	if m < 1<<16 || workers == 1 {
		for _, keys := range [][]int64{srcKeys, dstKeys} {
			for _, k := range keys {
				table[k-lo] = 1
			}
		}
		return
	}
	words := (len(table) + 63) / 64
	bitmaps := make([][]uint64, workers)
	var wg sync.WaitGroup
	chunk := (m + workers - 1) / workers
	for w := range bitmaps {
		wg.Go(func() {
			own := make([]uint64, words)
			a, b := min(m, w*chunk), min(m, (w+1)*chunk)
			for _, keys := range [][]int64{srcKeys[a:b], dstKeys[a:b]} {
				for _, k := range keys {
					i := uint64(k - lo)
					own[i/64] |= 1 << (i % 64)
				}
			}
			bitmaps[w] = own
		})
	}
	wg.Wait()
	parallelFor(words, func(a, b int) {
		for i := a; i < b; i++ {
			var word uint64
			for _, bm := range bitmaps {
				word |= bm[i]
			}
			for word != 0 {
				table[64*i+bits.TrailingZeros64(word)] = 1
				word &= word - 1
			}
		}
	})
}

// denseByTable ranks keys through a table over [lo, lo+span).
func denseByTable(srcKeys, dstKeys []int64, lo int64, span int, src, dst []int32, name, srcCol, dstCol string) ([]int64, []int32, []int32, error) {
	table := make([]int32, span)
	markKeys(srcKeys, dstKeys, lo, table)
	var n int
	for i, present := range table {
		if present != 0 {
			n++
		}
		table[i] = int32(min(n, maxVertexCount+1) - 1) // rank of i, if present
	}
	if n > maxVertexCount {
		return nil, nil, nil, firstExcess(srcKeys, dstKeys, n, func(k int64) int { return int(table[k-lo]) }, name, srcCol, dstCol)
	}
	verts := make([]int64, 0, n)
	prev := int32(-1)
	for i, r := range table {
		if r != prev {
			verts = append(verts, lo+int64(i))
			prev = r
		}
	}
	parallelFor(len(srcKeys), func(a, b int) {
		for i := a; i < b; i++ {
			src[i], dst[i] = table[srcKeys[i]-lo], table[dstKeys[i]-lo]
		}
	})
	return verts, src, dst, nil
}

// firstExcess finds the row where the (maxVertexCount+1)-th distinct vertex
// first appears, for the error message; rank maps a key into [0, n).
func firstExcess(srcKeys, dstKeys []int64, n int, rank func(int64) int, name, srcCol, dstCol string) error {
	seen := make([]uint64, (n+63)/64)
	count := 0
	for i := range srcKeys {
		for c, k := range [2]int64{srcKeys[i], dstKeys[i]} {
			r := rank(k)
			if seen[r/64]&(1<<(r%64)) != 0 {
				continue
			}
			seen[r/64] |= 1 << (r % 64)
			count++
			if count > maxVertexCount {
				col := srcCol
				if c == 1 {
					col = dstCol
				}
				return tooManyVertices(name, col, int64(i))
			}
		}
	}
	return fmt.Errorf("arrowio: %s: more than %d distinct vertices; dense ids are int32", name, maxVertexCount)
}

// sortKeys sorts int64 keys ascending (see sortKeysWith).
func sortKeys(keys []int64) { sortKeysWith(keys, nil) }

// sortKeysWith sorts int64 keys ascending, moving pos (when not nil) along.
// Large inputs take one most-significant-digit pass on the highest 8 bits
// that differ between the smallest and the largest key, then an LSD radix
// sort of each of the 256 buckets on the bits below, buckets in parallel.
// Small inputs and small buckets take a comparison sort.
func sortKeysWith(keys []int64, pos []uint32) {
	const small = 1 << 12
	if len(keys) < small {
		comparisonSort(keys, pos)
		return
	}
	lo, hi := uint64(keys[0])^signBit, uint64(keys[0])^signBit
	for _, k := range keys {
		u := uint64(k) ^ signBit
		lo, hi = min(lo, u), max(hi, u)
	}
	if lo == hi {
		return
	}
	top := 63 - bits.LeadingZeros64(lo^hi) // highest bit that differs
	msdShift := uint(max(0, top-7))
	digit := func(k int64, shift uint) int { return int((uint64(k) ^ signBit) >> shift & 0xff) }

	to := make([]int64, len(keys))
	var posTo []uint32
	if pos != nil {
		posTo = make([]uint32, len(pos))
	}
	var offsets [257]int
	for _, k := range keys {
		offsets[digit(k, msdShift)+1]++
	}
	for d := 0; d < 256; d++ {
		offsets[d+1] += offsets[d]
	}
	next := offsets
	for i, k := range keys {
		d := digit(k, msdShift)
		to[next[d]] = k
		if pos != nil {
			posTo[next[d]] = pos[i]
		}
		next[d]++
	}
	// Sort each bucket on the bits below msdShift; the result goes back
	// into keys and pos.
	var nextBucket atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				d := int(nextBucket.Add(1)) - 1
				if d >= 256 {
					return
				}
				a, b := offsets[d], offsets[d+1]
				if b-a == 0 {
					continue
				}
				var p, pTo []uint32
				if pos != nil {
					p, pTo = posTo[a:b], pos[a:b]
				}
				lsdSort(to[a:b], keys[a:b], p, pTo, msdShift)
			}
		}()
	}
	wg.Wait()
}

// lsdSort sorts keys on the bits below width (8 bits a pass), using buf
// (and posBuf) as scratch; the result ends in buf and posBuf.
func lsdSort(keys, buf []int64, pos, posBuf []uint32, width uint) {
	if len(keys) < 64 || width == 0 {
		comparisonSort(keys, pos)
		copy(buf, keys)
		copy(posBuf, pos)
		return
	}
	from, to := keys, buf
	posFrom, posTo := pos, posBuf
	var counts [256]int
	for shift := uint(0); shift < width; shift += 8 {
		clear(counts[:])
		for _, k := range from {
			counts[(uint64(k)^signBit)>>shift&0xff]++
		}
		if counts[(uint64(from[0])^signBit)>>shift&0xff] == len(from) {
			continue // every key has this digit
		}
		sum := 0
		for d, c := range counts {
			counts[d] = sum
			sum += c
		}
		for i, k := range from {
			d := (uint64(k) ^ signBit) >> shift & 0xff
			to[counts[d]] = k
			if posFrom != nil {
				posTo[counts[d]] = posFrom[i]
			}
			counts[d]++
		}
		from, to = to, from
		posFrom, posTo = posTo, posFrom
	}
	if &from[0] != &buf[0] {
		copy(buf, from)
		copy(posBuf, posFrom)
	}
}

// comparisonSort sorts keys ascending, moving pos (when not nil) along.
func comparisonSort(keys []int64, pos []uint32) {
	if pos == nil {
		slices.Sort(keys)
		return
	}
	type pair struct {
		k int64
		p uint32
	}
	pairs := make([]pair, len(keys))
	for i := range pairs {
		pairs[i] = pair{keys[i], pos[i]}
	}
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Compare(a.k, b.k) })
	for i, pr := range pairs {
		keys[i], pos[i] = pr.k, pr.p
	}
}

// stringTable interns string ids: provisional id i is the i-th distinct
// string seen.
type stringTable struct {
	index  map[string]int32
	values []string
}

func newStringTable() *stringTable { return &stringTable{index: make(map[string]int32)} }

// intern returns the provisional id of s, copying s (which may point into an
// Arrow buffer) when it is new; ok is false past maxVertexCount.
func (t *stringTable) intern(s string) (id int32, ok bool) {
	if id, found := t.index[s]; found {
		return id, true
	}
	if len(t.values) >= maxVertexCount {
		return 0, false
	}
	s = strings.Clone(s)
	id = int32(len(t.values))
	t.index[s] = id
	t.values = append(t.values, s)
	return id, true
}

type stringValues interface {
	Len() int
	Value(int) string
}

func (t *stringTable) appendColumn(dst []int32, arr arrow.Array, name, col string, row int64) ([]int32, error) {
	if i := firstNull(arr); i >= 0 {
		return dst, fmt.Errorf("arrowio: %s: column %q row %d: null id", name, col, row+int64(i))
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return t.appendDict(dst, d, name, col, row)
	}
	vals, ok := arr.(stringValues)
	if !ok || !isStringType(arr.DataType()) {
		return dst, fmt.Errorf("arrowio: %s: column %q has type %s; ids must be integers or strings", name, col, arr.DataType())
	}
	// Ids seen in earlier batches, most of them once a graph is under way,
	// are looked up in parallel (concurrent reads of a map are safe); the
	// rest are then interned in row order, as a sequential pass would.
	n, base := vals.Len(), len(dst)
	dst = slices.Grow(dst, n)[:base+n]
	parallelFor(n, func(a, b int) {
		for i := a; i < b; i++ {
			id, found := t.index[vals.Value(i)]
			if !found {
				id = -1
			}
			dst[base+i] = id
		}
	})
	for i := 0; i < n; i++ {
		if dst[base+i] >= 0 {
			continue
		}
		id, ok := t.intern(vals.Value(i))
		if !ok {
			return dst[:base], tooManyVertices(name, col, row+int64(i))
		}
		dst[base+i] = id
	}
	return dst, nil
}

func (t *stringTable) appendDict(dst []int32, d *array.Dictionary, name, col string, row int64) ([]int32, error) {
	idx, err := dictIndices(d, name, col, row)
	if err != nil {
		return dst, err
	}
	dict := d.Dictionary()
	vals, ok := dict.(stringValues)
	if !ok || !isStringType(dict.DataType()) {
		return dst, fmt.Errorf("arrowio: %s: column %q has type %s; ids must be integers or strings", name, col, d.DataType())
	}
	// Intern each dictionary value once, on first use, so that unused
	// dictionary entries do not become vertices.
	prov := make([]int32, dict.Len())
	for i := range prov {
		prov[i] = -1
	}
	for i, k := range idx {
		if prov[k] < 0 {
			if dict.IsNull(int(k)) {
				return dst, fmt.Errorf("arrowio: %s: column %q row %d: null id", name, col, row+int64(i))
			}
			id, ok := t.intern(vals.Value(int(k)))
			if !ok {
				return dst, tooManyVertices(name, col, row+int64(i))
			}
			prov[k] = id
		}
		dst = append(dst, prov[k])
	}
	return dst, nil
}

// finish sorts the distinct strings byte-wise and rewrites the provisional
// ids of both columns in place as dense ids.
func (t *stringTable) finish(src, dst []int32) ([]int32, []int32, *Vertices) {
	perm := make([]int32, len(t.values))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int { return strings.Compare(t.values[a], t.values[b]) })
	rank := make([]int32, len(perm))
	sorted := make([]string, len(perm))
	for r, p := range perm {
		rank[p] = int32(r)
		sorted[r] = t.values[p]
	}
	parallelFor(len(src), func(a, b int) {
		for i := a; i < b; i++ {
			src[i], dst[i] = rank[src[i]], rank[dst[i]]
		}
	})
	t.index, t.values = nil, nil
	return src, dst, &Vertices{Strings: sorted}
}
