package arrowio

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// idColumn maps dense ids back to external ids, a whole column at a time:
// the hot path of the pairs layout, so there is no per-value interface call.
type idColumn interface {
	// gather returns the array of the external ids of dense; a negative
	// dense id gives a null.
	gather(dense []int32, mem memory.Allocator) arrow.Array
	// maxLen is the longest id in bytes for string ids, 0 for integers.
	maxLen() int
}

func newIDColumn(v *Vertices) idColumn {
	dt := IDType(v)
	switch dt.ID() {
	case arrow.STRING:
		return &stringIDs[int32]{dt: dt, ids: v.Strings}
	case arrow.LARGE_STRING:
		return &stringIDs[int64]{dt: dt, ids: v.Strings}
	case arrow.INT8:
		return newIntIDs[int8](dt, v.Ints)
	case arrow.INT16:
		return newIntIDs[int16](dt, v.Ints)
	case arrow.INT32:
		return newIntIDs[int32](dt, v.Ints)
	case arrow.UINT8:
		return newIntIDs[uint8](dt, v.Ints)
	case arrow.UINT16:
		return newIntIDs[uint16](dt, v.Ints)
	case arrow.UINT32:
		return newIntIDs[uint32](dt, v.Ints)
	case arrow.UINT64:
		return newIntIDs[uint64](dt, v.Ints)
	default:
		return &intIDs[int64]{dt: dt, ext: v.Ints}
	}
}

type intID interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// intIDs holds the external ids in their own Go type (uint64 ids above
// MaxInt64 are stored by their bits in Vertices.Ints, so the conversion
// restores them).
type intIDs[T intID] struct {
	dt  arrow.DataType
	ext []T
}

func newIntIDs[T intID](dt arrow.DataType, ints []int64) *intIDs[T] {
	ext := make([]T, len(ints))
	for i, x := range ints {
		ext[i] = T(x)
	}
	return &intIDs[T]{dt: dt, ext: ext}
}

func (c *intIDs[T]) maxLen() int { return 0 }

func (c *intIDs[T]) gather(dense []int32, mem memory.Allocator) arrow.Array {
	k := len(dense)
	var zero T
	width := int(sizeOf(zero))
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(k * width)
	out := arrow.GetData[T](vals.Bytes())[:k]
	nulls := 0
	for i, d := range dense {
		if d < 0 {
			out[i] = 0
			nulls++
			continue
		}
		out[i] = c.ext[d]
	}
	validity := nullBitmap(dense, nulls, mem)
	data := array.NewData(c.dt, k, []*memory.Buffer{validity, vals}, nil, nulls, 0)
	vals.Release()
	if validity != nil {
		validity.Release()
	}
	arr := array.MakeFromData(data)
	data.Release()
	return arr
}

func sizeOf[T intID](T) uintptr {
	var x T
	switch any(x).(type) {
	case int8, uint8:
		return 1
	case int16, uint16:
		return 2
	case int32, uint32:
		return 4
	}
	return 8
}

// nullBitmap returns the validity bitmap of dense (negative = null), or nil
// when nulls is 0.
func nullBitmap(dense []int32, nulls int, mem memory.Allocator) *memory.Buffer {
	if nulls == 0 {
		return nil
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(dense)))))
	bits := buf.Bytes()
	clear(bits)
	for i, d := range dense {
		if d >= 0 {
			bitutil.SetBit(bits, i)
		}
	}
	return buf
}

// stringIDs builds utf8 (O = int32) or large_utf8 (O = int64) columns by
// copying the bytes of each id once.
type stringIDs[O int32 | int64] struct {
	dt  arrow.DataType
	ids []string
	max int // longest id, computed on first use; -1 when unknown
}

func (c *stringIDs[O]) maxLen() int {
	if c.max == 0 {
		for _, s := range c.ids {
			c.max = max(c.max, len(s))
		}
		if c.max == 0 {
			c.max = -1
		}
	}
	return max(c.max, 0)
}

func (c *stringIDs[O]) gather(dense []int32, mem memory.Allocator) arrow.Array {
	k := len(dense)
	total := 0
	nulls := 0
	for _, d := range dense {
		if d < 0 {
			nulls++
			continue
		}
		total += len(c.ids[d])
	}
	var o O
	width := 4
	if any(o) == any(int64(0)) {
		width = 8
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((k + 1) * width)
	offsets := arrow.GetData[O](offBuf.Bytes())[:k+1]
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	bytes := dataBuf.Bytes()
	var at O
	for i, d := range dense {
		offsets[i] = at
		if d >= 0 {
			at += O(copy(bytes[at:], c.ids[d]))
		}
	}
	offsets[k] = at
	validity := nullBitmap(dense, nulls, mem)
	data := array.NewData(c.dt, k, []*memory.Buffer{validity, offBuf, dataBuf}, nil, nulls, 0)
	offBuf.Release()
	dataBuf.Release()
	if validity != nil {
		validity.Release()
	}
	arr := array.MakeFromData(data)
	data.Release()
	return arr
}
