package arrowio

// Matrix values of another type than the engine's distances
// (ResultBuilder.SetMatrixType): numpy has no nulls, so a matrix for
// Python carries unreachable pairs as +Inf in float32 or float64, while
// the engine computes integer distances (exact, and what its kernels and
// the contraction hierarchy are built for). Each block is converted as
// its record is built, in the producer, on every core: in place where
// the two types have one width (int32 to float32, int64 to float64: no
// memory beyond the block), into a new buffer of the block's size
// otherwise. Whether the values fit the type is the caller's to decide
// (pipeline's matrix type rule); the conversion itself only maps the
// engine's Infinity to the new type's.

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// convertChunk is the values one core converts at a time.
const convertChunk = 1 << 20

// SetMatrixType makes the matrix records carry values of type t, converted
// from the engine's distances; 0 (or the builder's distance type) keeps
// them as they are. Float types carry unreachable pairs as +Inf, integer
// types as nulls. It applies to the matrix layout only; call it before
// SetShape and SetMetadata.
func (b *ResultBuilder) SetMatrixType(t graph.DistType) {
	if b.layout != LayoutMatrix || t == 0 {
		return
	}
	b.matrixType = t
	b.schema = ShapedSchema(b.layout, b.vertices, b.valueType(), b.withPred, b.shape)
}

// valueType is the type of the values of the builder's records: the
// matrix type where one is set, else the distances'.
func (b *ResultBuilder) valueType() graph.DistType {
	if b.layout == LayoutMatrix && b.matrixType != 0 {
		return b.matrixType
	}
	return b.distType
}

// convertBlock returns blk's distances as values of type t, and whether
// they lie in blk's own memory (converted in place) rather than in a new
// buffer. A block converted into a new buffer is not referenced after.
func convertBlock(blk *graph.Block, t graph.DistType) (values any, inPlace bool, err error) {
	switch d := blk.Dist.(type) {
	case []int32:
		switch t {
		case graph.DistFloat32:
			return convertInPlace[int32, float32](d), true, nil
		case graph.DistFloat64:
			return convertInto(d, make([]float64, len(d))), false, nil
		case graph.DistInt64:
			return convertInto(d, make([]int64, len(d))), false, nil
		}
	case []int64:
		switch t {
		case graph.DistFloat64:
			return convertInPlace[int64, float64](d), true, nil
		case graph.DistFloat32:
			return convertInto(d, make([]float32, len(d))), false, nil
		case graph.DistInt32:
			return convertInto(d, make([]int32, len(d))), false, nil
		}
	case []float32:
		if t == graph.DistFloat64 {
			return convertInto(d, make([]float64, len(d))), false, nil
		}
	}
	return nil, false, fmt.Errorf("arrowio: no matrix of %s values from %s distances", t, blk.Type)
}

// convertInPlace rewrites the values of d, in its own memory, as D (of
// S's width) and returns them.
func convertInPlace[S, D graph.Number](d []S) []D {
	if len(d) == 0 {
		return nil
	}
	out := unsafe.Slice((*D)(unsafe.Pointer(&d[0])), len(d))
	return convertInto(d, out)
}

// convertInto writes src as D into dst (of src's length, or src itself
// reinterpreted: each value is read before its place is written), on
// every core; S's Infinity becomes D's.
func convertInto[S, D graph.Number](src []S, dst []D) []D {
	inf, to := graph.Infinity[S](), graph.Infinity[D]()
	_ = parallelRanges(len(src), convertChunk, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if x := src[i]; x == inf {
				dst[i] = to
			} else {
				dst[i] = D(x)
			}
		}
		return nil
	})
	return dst
}

// convertedMatrixRecord is matrixRecord for a block whose values change
// type: the values (and, for integer values, a validity bitmap built from
// them) in the block's memory or in new buffers.
func (b *ResultBuilder) convertedMatrixRecord(blk *graph.Block) (arrow.RecordBatch, error) {
	values, inPlace, err := convertBlock(blk, b.matrixType)
	if err != nil {
		return nil, err
	}
	var raw []byte
	var v validity
	switch d := values.(type) {
	case []int32:
		raw = arrow.GetBytes(d)
		buf, nulls := infValidity(d, b.mem)
		v = validity{buf: buf, nulls: nulls}
	case []int64:
		raw = arrow.GetBytes(d)
		buf, nulls := infValidity(d, b.mem)
		v = validity{buf: buf, nulls: nulls}
	case []float32:
		raw = arrow.GetBytes(d)
	case []float64:
		raw = arrow.GetBytes(d)
	}
	var valBuf *memory.Buffer
	switch {
	case inPlace && blk.Recycle != nil:
		// The values are the block's memory: it goes back with the buffer.
		valBuf = memory.NewBufferWithAllocator(raw, recycler{left: newCount(1), recycle: blk.Recycle})
	case inPlace:
		valBuf = memory.NewBufferBytes(raw)
	default:
		valBuf = memory.NewBufferBytes(raw)
		if blk.Recycle != nil {
			blk.Recycle() // nothing refers to the block's memory any more
		}
	}
	return b.matrixOf(blk, valBuf, v), nil
}
