package arrowio

// Building the vertex dictionary. Integer ids are gathered as order keys
// (int64 whose signed order is the id order), then either ranked through a
// table over [min, max] when the ids are dense enough (the common case of ids
// 0..n-1 or 1..n: O(m + span)), or sorted with an LSD radix sort, deduplicated
// and looked up by binary search in parallel (O(m log n)). String ids are
// interned as they arrive (one hash lookup per value, one copy per distinct
// id), and the distinct strings are sorted once at the end.

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pathctl/pathctl/graph"
)

// maxVertexCount is the most distinct vertices a graph may have; a variable
// so that tests can lower it.
var maxVertexCount = graph.MaxVertices

func tooManyVertices(name, col string, row int64) error {
	return fmt.Errorf("arrowio: %s: column %q row %d: more than %d distinct vertices; dense ids are int32", name, col, row, maxVertexCount)
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
	lo, hi := srcKeys[0], srcKeys[0]
	for _, keys := range [][]int64{srcKeys, dstKeys} {
		for _, k := range keys {
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	span := uint64(hi) - uint64(lo) // hi >= lo: the difference is exact as unsigned
	if span < uint64(4*m)+1<<16 {
		return denseByTable(srcKeys, dstKeys, lo, int(span)+1, src, dst, name, srcCol, dstCol)
	}
	keys := make([]int64, 0, 2*m)
	keys = append(append(keys, srcKeys...), dstKeys...)
	sortKeys(keys)
	keys = slices.Compact(keys)
	keys = slices.Clip(keys)
	rank := func(k int64) int32 {
		i, _ := slices.BinarySearch(keys, k)
		return int32(i)
	}
	if len(keys) > maxVertexCount {
		return nil, nil, nil, firstExcess(srcKeys, dstKeys, len(keys), func(k int64) int { i, _ := slices.BinarySearch(keys, k); return i }, name, srcCol, dstCol)
	}
	parallelFor(m, func(a, b int) {
		for i := a; i < b; i++ {
			src[i], dst[i] = rank(srcKeys[i]), rank(dstKeys[i])
		}
	})
	return keys, src, dst, nil
}

// denseByTable ranks keys through a table over [lo, lo+span).
func denseByTable(srcKeys, dstKeys []int64, lo int64, span int, src, dst []int32, name, srcCol, dstCol string) ([]int64, []int32, []int32, error) {
	table := make([]int32, span)
	for _, keys := range [][]int64{srcKeys, dstKeys} {
		for _, k := range keys {
			table[k-lo] = 1
		}
	}
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

// sortKeys sorts int64 keys ascending: an LSD radix sort on 16-bit digits
// for large inputs (passes whose digit is the same everywhere are skipped),
// pdqsort for small ones.
func sortKeys(keys []int64) {
	if len(keys) < 1<<12 {
		slices.Sort(keys)
		return
	}
	buf := make([]int64, len(keys))
	from, to := keys, buf
	var counts [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		clear(counts[:])
		for _, k := range from {
			counts[(uint64(k)^signBit)>>shift&0xffff]++
		}
		if counts[(uint64(from[0])^signBit)>>shift&0xffff] == len(from) {
			continue // every key has this digit
		}
		sum := 0
		for d, c := range counts {
			counts[d] = sum
			sum += c
		}
		for _, k := range from {
			d := (uint64(k) ^ signBit) >> shift & 0xffff
			to[counts[d]] = k
			counts[d]++
		}
		from, to = to, from
	}
	if &from[0] != &keys[0] {
		copy(keys, from)
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
	for i, n := 0, vals.Len(); i < n; i++ {
		id, ok := t.intern(vals.Value(i))
		if !ok {
			return dst, tooManyVertices(name, col, row+int64(i))
		}
		dst = append(dst, id)
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
