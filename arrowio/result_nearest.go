package arrowio

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// nearestPart is the fewest vertices one goroutine takes when the rows of
// the nearest layout are picked out: below it a goroutine costs more than
// the loop it would share.
const nearestPart = 1 << 16

// nearestWindow is the most vertices one record of the nearest layout
// covers (b.maxRows lowers it further). Records are built one ahead of
// emit: while emit writes a record, the next is built on the other cores,
// so a smaller window hides more of the building behind the writing, at
// the cost of more records. 2^18 gives issue 17's million-vertex grid four
// records, three of them built while the writer is busy.
const nearestWindow = 1 << 18

// buildNearest emits the nearest layout of res: one record per window of
// at most nearestWindow (and b.maxRows) vertices, holding the window's
// reached vertices in vertex order. Within a window the rows are picked
// out on every core: each part of the window counts its reached vertices,
// the counts give each part its first row, then every part writes its rows
// straight into the record's buffers (integer ids: the external ids, the
// distance and the source's external id, in one pass; string ids go
// through dense ids, gathered afterwards). The next window is built while
// emit runs on the current one; emit is called on the caller's goroutine,
// in window order.
func buildNearest[D graph.Number](b *ResultBuilder, res *graph.Nearest, emit func(arrow.RecordBatch) error) error {
	var window func(lo, hi int) arrow.RecordBatch
	switch ids := b.ids.(type) {
	case *intIDs[int8]:
		window = nearestIntWindow[int8, D](b, ids, res)
	case *intIDs[int16]:
		window = nearestIntWindow[int16, D](b, ids, res)
	case *intIDs[int32]:
		window = nearestIntWindow[int32, D](b, ids, res)
	case *intIDs[int64]:
		window = nearestIntWindow[int64, D](b, ids, res)
	case *intIDs[uint8]:
		window = nearestIntWindow[uint8, D](b, ids, res)
	case *intIDs[uint16]:
		window = nearestIntWindow[uint16, D](b, ids, res)
	case *intIDs[uint32]:
		window = nearestIntWindow[uint32, D](b, ids, res)
	case *intIDs[uint64]:
		window = nearestIntWindow[uint64, D](b, ids, res)
	default:
		window = nearestDenseWindow[D](b, res)
	}
	return emitAhead(len(res.Source), min(nearestWindow, b.maxRows), window, emit)
}

// emitAhead calls build on every window [lo, hi) of n vertices in order,
// on a goroutine of its own, one window ahead of the caller's goroutine,
// which passes each record (nil: the window had no row) to emit and
// releases it. After emit's first error no further window is built, and
// that error is returned once the builder has stopped.
func emitAhead(n, window int, build func(lo, hi int) arrow.RecordBatch, emit func(arrow.RecordBatch) error) error {
	if n <= window {
		// One window: nothing to overlap.
		if rec := build(0, n); rec != nil {
			defer rec.Release()
			return emit(rec)
		}
		return nil
	}
	recs := make(chan arrow.RecordBatch) // unbuffered: the builder waits one record ahead
	var stop atomic.Bool
	go func() {
		defer close(recs)
		for lo := 0; lo < n && !stop.Load(); lo += window {
			if rec := build(lo, min(lo+window, n)); rec != nil {
				recs <- rec
			}
		}
	}()
	var err error
	for rec := range recs {
		if err == nil {
			err = emit(rec)
			if err != nil {
				stop.Store(true)
			}
		}
		rec.Release()
	}
	return err
}

// nearestParts splits the window [lo, hi) into parts for the cores and
// counts the reached vertices of each: part p covers [from(p), to(p)) and
// its rows start at first[p]; first[parts] is the window's rows.
func nearestParts(source []graph.VertexID, lo, hi int) (parts, per int, first []int) {
	parts = max(1, min(runtime.GOMAXPROCS(0), (hi-lo)/nearestPart))
	per = (hi - lo + parts - 1) / parts
	first = make([]int, parts+1)
	forParts(parts, func(p int) {
		count := 0
		for _, s := range source[min(lo+p*per, hi):min(lo+(p+1)*per, hi)] {
			if s >= 0 {
				count++
			}
		}
		first[p+1] = count
	})
	for p := range parts {
		first[p+1] += first[p]
	}
	return parts, per, first
}

// nearestIntWindow builds the records of integer ids of type T: the three
// columns are allocated at the window's row count and each part fills its
// rows of all three in one pass over its vertices.
func nearestIntWindow[T intID, D graph.Number](b *ResultBuilder, ids *intIDs[T], res *graph.Nearest) func(lo, hi int) arrow.RecordBatch {
	dist := res.Dist.([]D)
	ext := ids.ext
	return func(lo, hi int) arrow.RecordBatch {
		parts, per, first := nearestParts(res.Source, lo, hi)
		rows := first[parts]
		if rows == 0 {
			return nil
		}
		vbuf, vs := newColumn[T](rows, b.mem)
		dbuf, ds := newColumn[D](rows, b.mem)
		sbuf, ss := newColumn[T](rows, b.mem)
		forParts(parts, func(p int) {
			from, to := min(lo+p*per, hi), min(lo+(p+1)*per, hi)
			row := first[p]
			if first[p+1]-row == to-from {
				// Every vertex of the part reached: no test per vertex.
				copy(vs[row:], ext[from:to])
				copy(ds[row:], dist[from:to])
				for i, s := range res.Source[from:to] {
					ss[row+i] = ext[s]
				}
				return
			}
			for v := from; v < to; v++ {
				if s := res.Source[v]; s >= 0 {
					vs[row], ds[row], ss[row] = ext[v], dist[v], ext[s]
					row++
				}
			}
		})
		cols := []arrow.Array{
			fixedArray(ids.dt, rows, vbuf),
			fixedArray(DistArrowType(b.distType), rows, dbuf),
			fixedArray(ids.dt, rows, sbuf),
		}
		return newRecord(b.schema, cols, rows)
	}
}

// nearestDenseWindow builds the records of string ids: the parts pick out
// the dense ids of each row's vertex and source, and the id column gathers
// their external ids.
func nearestDenseWindow[D graph.Number](b *ResultBuilder, res *graph.Nearest) func(lo, hi int) arrow.RecordBatch {
	dist := res.Dist.([]D)
	return func(lo, hi int) arrow.RecordBatch {
		parts, per, first := nearestParts(res.Source, lo, hi)
		rows := first[parts]
		if rows == 0 {
			return nil
		}
		vertex := make([]int32, rows)
		source := make([]int32, rows)
		dbuf, ds := newColumn[D](rows, b.mem)
		forParts(parts, func(p int) {
			row := first[p]
			for v := min(lo+p*per, hi); v < min(lo+(p+1)*per, hi); v++ {
				if s := res.Source[v]; s >= 0 {
					vertex[row], source[row], ds[row] = int32(v), s, dist[v]
					row++
				}
			}
		})
		cols := []arrow.Array{
			b.ids.gather(vertex, b.mem),
			fixedArray(DistArrowType(b.distType), rows, dbuf),
			b.ids.gather(source, b.mem),
		}
		return newRecord(b.schema, cols, rows)
	}
}

// newColumn allocates a buffer of k values of type T from mem and returns
// it with its values.
func newColumn[T graph.Number | intID](k int, mem memory.Allocator) (*memory.Buffer, []T) {
	buf := memory.NewResizableBuffer(mem)
	var zero T
	buf.Resize(k * int(unsafe.Sizeof(zero)))
	return buf, arrow.GetData[T](buf.Bytes())[:k]
}

// fixedArray wraps buf (k fixed-width values of dt, no nulls) in an array,
// taking over the caller's reference to buf.
func fixedArray(dt arrow.DataType, k int, buf *memory.Buffer) arrow.Array {
	data := array.NewData(dt, k, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	arr := array.MakeFromData(data)
	data.Release()
	return arr
}

// newRecord makes a record of cols, taking over the caller's references to
// them.
func newRecord(schema *arrow.Schema, cols []arrow.Array, rows int) arrow.RecordBatch {
	rec := array.NewRecordBatch(schema, cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// forParts runs fn(p) for every p < parts, each on its own goroutine (on
// the caller's alone when parts is 1), and returns when all are done.
func forParts(parts int, fn func(p int)) {
	if parts == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p)
		}()
	}
	wg.Wait()
}
