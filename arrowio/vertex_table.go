package arrowio

// Vertex tables: the vertex set of a graph is the ids in its edges plus
// those of an optional table of ids, so that vertices without edges are
// in the graph too (they are unreachable from every other vertex).

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ReadVertices reads a vertex table: one column of ids, in any edge format
// but DIMACS. The id column is opt.SrcCol where set, else the table's only
// column, else the column called "vertex" (as the vertex file written beside
// a matrix result has it) or "id". Ids are typed as for ReadEdges; repeated
// ids count once; null ids are refused. The result is sorted as a graph's
// vertex dictionary. Errors name the file, the column and the row.
func ReadVertices(path string, opt ReadOptions) (*Vertices, error) {
	return readVertices(path, opt, func(o ReadOptions) (*EdgeTable, error) { return ReadEdges(path, o) })
}

// ReadVerticesFrom is ReadVertices on a reader; name is used in messages
// and, when opt.Format is "", for the format.
func ReadVerticesFrom(r io.Reader, name string, opt ReadOptions) (*Vertices, error) {
	return readVertices(name, opt, func(o ReadOptions) (*EdgeTable, error) { return ReadEdgesFrom(r, name, o) })
}

// VerticesFromRecords is ReadVertices on record batches (an upload); it
// does not Release rr.
func VerticesFromRecords(rr array.RecordReader, name string, opt ReadOptions) (*Vertices, error) {
	return readVertices(name, opt, func(o ReadOptions) (*EdgeTable, error) { return EdgesFromRecords(rr, name, o) })
}

func readVertices(name string, opt ReadOptions, read func(ReadOptions) (*EdgeTable, error)) (*Vertices, error) {
	if f, err := opt.format(name); err == nil && f == FormatDIMACS {
		return nil, fmt.Errorf("arrowio: %s: a vertex table is a one-column table (parquet, arrow, csv, tsv), not a DIMACS graph", name)
	}
	opt.vertexTable, opt.Unweighted, opt.WeightCol, opt.DstCol = true, true, "", ""
	// The id column is read as both ends of a self-loop per row; only the
	// dictionary is kept.
	t, err := read(opt)
	if err != nil {
		return nil, err
	}
	return t.Vertices, nil
}

// AddVertices makes every id of v a vertex of t: ids already in the edges
// keep their place in the ascending order, new ones are inserted, and the
// dense ids of t.Edges are renumbered to match. Integer ids in v are taken
// as their decimal text where t's ids are strings; string ids in v need
// string ids in t, and integer ids must fit t's id type; the error names
// the first that does not. An edge table without vertices
// takes v's type.
func (t *EdgeTable) AddVertices(v *Vertices) error {
	if v == nil || v.Len() == 0 {
		return nil
	}
	if t.Vertices == nil || t.Vertices.Len() == 0 {
		t.Vertices = &Vertices{Type: v.Type, Ints: slices.Clone(v.Ints), Strings: slices.Clone(v.Strings)}
		t.Edges.NumVertices = t.Vertices.Len()
		return nil
	}
	old := t.Vertices
	if old.IsString() && !v.IsString() {
		// Text files read integer-looking ids as integers: as the edges'
		// ids are strings, take them as the text they were.
		strs := make([]string, v.Len())
		for i := range strs {
			strs[i] = v.Format(int32(i))
		}
		slices.Sort(strs)
		v = &Vertices{Type: old.Type, Strings: strs}
	}
	if old.IsString() != v.IsString() {
		kind := func(x *Vertices) string {
			if x.IsString() {
				return "strings"
			}
			return "integers"
		}
		return fmt.Errorf("arrowio: %s: the vertex table's ids are %s but the edges' ids are %s", t.Name, kind(v), kind(old))
	}
	var merged *Vertices
	var remap []int32 // old dense id -> new dense id
	if old.IsString() {
		var strs []string
		strs, remap = mergeSorted(old.Strings, v.Strings, cmp.Compare[string])
		merged = &Vertices{Type: old.Type, Strings: strs}
	} else {
		ints, err := convertIDs(v, old.Type)
		if err != nil {
			return fmt.Errorf("arrowio: %s: %w", t.Name, err)
		}
		compare := cmp.Compare[int64]
		if old.Type != nil && old.Type.ID() == arrow.UINT64 {
			compare = func(a, b int64) int { return cmp.Compare(uint64(a), uint64(b)) }
		}
		slices.SortFunc(ints, compare)
		var out []int64
		out, remap = mergeSorted(old.Ints, ints, compare)
		merged = &Vertices{Type: old.Type, Ints: out}
	}
	if merged.Len() > maxVertexCount {
		return fmt.Errorf("arrowio: %s: the edges and the vertex table have more than %d distinct vertices; dense ids are int32", t.Name, maxVertexCount)
	}
	if merged.Len() != old.Len() {
		for _, ids := range [][]int32{t.Edges.Src, t.Edges.Dst} {
			for i, id := range ids {
				ids[i] = remap[id]
			}
		}
	}
	t.Vertices = merged
	t.Edges.NumVertices = merged.Len()
	return nil
}

// mergeSorted returns the sorted union of a (sorted, distinct) and b
// (sorted), and where each element of a went.
func mergeSorted[T any](a, b []T, compare func(x, y T) int) ([]T, []int32) {
	out := make([]T, 0, len(a)+len(b))
	remap := make([]int32, len(a))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && compare(a[i], b[j]) < 0):
			remap[i] = int32(len(out))
			out = append(out, a[i])
			i++
		case i >= len(a) || compare(a[i], b[j]) > 0:
			if len(out) == 0 || compare(out[len(out)-1], b[j]) != 0 {
				out = append(out, b[j])
			}
			j++
		default: // equal
			remap[i] = int32(len(out))
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out, remap
}

// convertIDs returns v's integer ids as values of type to (uint64 by their
// bits), failing on the first that does not fit.
func convertIDs(v *Vertices, to arrow.DataType) ([]int64, error) {
	fromUnsigned := v.Type != nil && v.Type.ID() == arrow.UINT64
	lo, hi := int64(math.MinInt64), uint64(math.MaxInt64)
	toUnsigned := false
	if to != nil {
		switch to.ID() {
		case arrow.INT8:
			lo, hi = math.MinInt8, math.MaxInt8
		case arrow.INT16:
			lo, hi = math.MinInt16, math.MaxInt16
		case arrow.INT32:
			lo, hi = math.MinInt32, math.MaxInt32
		case arrow.UINT8:
			lo, hi, toUnsigned = 0, math.MaxUint8, true
		case arrow.UINT16:
			lo, hi, toUnsigned = 0, math.MaxUint16, true
		case arrow.UINT32:
			lo, hi, toUnsigned = 0, math.MaxUint32, true
		case arrow.UINT64:
			lo, hi, toUnsigned = 0, math.MaxUint64, true
		}
	}
	out := make([]int64, len(v.Ints))
	for i, x := range v.Ints {
		ok := false
		switch {
		case fromUnsigned:
			ok = uint64(x) <= hi
		case toUnsigned:
			ok = x >= 0 && uint64(x) <= hi
		default:
			ok = x >= lo && (x < 0 || uint64(x) <= hi)
		}
		if !ok {
			return nil, fmt.Errorf("vertex table id %s does not fit the edges' id type %s", v.Format(int32(i)), to)
		}
		out[i] = x
	}
	return out, nil
}
