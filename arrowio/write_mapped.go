package arrowio

// A matrix result written as an Arrow IPC file of one record batch, in
// place, through a shared mapping of the output file.
//
// The streaming IPC writer frames every block of the matrix as a record
// batch of its own and copies it into the file with sequential write(2)
// calls: one core, a page fault per page of a memfd, and the reader gets a
// table of many chunks to join. When the output lives in memory (a memfd
// that Python passed in, a file on tmpfs) and the number of rows is known
// before the run, the whole file is sized up front instead:
//
//	[ARROW1\0\0][schema message][record batch metadata, padded to a page]
//	[body: every distance, n×k values | validity bitmap | source column]
//	[footer][footer length][ARROW1]
//
// The file is truncated to its full size and mapped; each block's rows are
// copied to their place in the values by every core at once, and its
// validity bits, when a block has unreachable pairs, to their place in the
// bitmap. The first touch of a page of a memfd allocates, zeroes and maps
// it, which is most of the cost of the write: each core first populates
// its chunk in one call (MADV_POPULATE_WRITE) instead of taking a fault
// per page, the allocations run side by side on every core (write(2)
// holds the file's lock and runs on one), and huge pages are asked for
// where the system gives them to shared memory. Where a page fault costs
// more than the kernel's own copy (measured on a 2-core virtual machine:
// 4 times write(2)'s cost per page), WriteOptions.MatrixWrites "pwrite"
// writes the values with positioned writes instead: one stream, no page
// mapped; the layout is the same. On a GPU run, where the cores wait for
// the device most of the time, MatrixWrites "prefill" populates the pages
// of the values in order on half the cores from the start, ahead of the
// copies, so that allocating them overlaps the compute. The bitmap
// is written only once a null has been seen (a run without one leaves its pages untouched, and they
// are cut off at the end). Close builds the record batch's metadata with
// arrow-go over the mapped values (no copy), moves its buffer offsets to
// the layout above, writes the metadata, the source column and a footer
// whose block entry points at the batch, and truncates the file to its
// end. The values start on a page boundary, so that a reader's view of
// them is a view of whole pages of the mapping.
//
// This file holds the writer: its layout, Write, Close and abort. The
// other parts are files of their own: write_mapped_ipc.go frames the IPC
// messages and the footer, write_mapped_parallel.go copies on every core,
// write_mapped_prefill.go populates pages ahead of the copies, and peer.go
// (with peer_linux.go) writes the result into the reading process instead.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/internal/trace"
)

// mappedValuesAlign is the alignment of the values in the file: a page, so
// that the values start a page of the reader's mapping.
const mappedValuesAlign = 4096

// mappedCopyChunk is the bytes one core copies at a time when a block is
// placed in the mapping.
const mappedCopyChunk = 4 << 20

// mappedBitsPiece is the validity bits one core copies or sets at a time
// (a multiple of 8): 256 KiB of bitmap, so that a GPU run's 64 MiB record
// (R-MAT 16: 358 rows, 16.8 M bits) spreads over 8 cores. Its bits land at
// offsets that are not whole bytes (copyBits).
const mappedBitsPiece = 8 * (256 << 10)

// mappedMatrix is the recordWriter of a matrix result written as one
// record batch into a mapped file (see the top of this file). Records must
// come in row order; the rows of all of them must add up to the count
// given at creation.
type mappedMatrix struct {
	file   *os.File
	schema *arrow.Schema
	mem    memory.Allocator

	rows, width int
	childType   arrow.DataType
	// positional writes the values with WriteAt instead of copying them
	// into the mapping (WriteOptions.MatrixWrites).
	positional bool
	// prefill, when running, populates the values' pages ahead of the
	// copies; copied is how far the copies have come (bytes of values).
	prefill struct {
		stop atomic.Bool
		wg   sync.WaitGroup
	}
	copied   atomic.Int64
	elem     int  // bytes per distance
	nullable bool // integer distances: unreachable pairs are nulls

	mapping []byte
	// peer, when set, holds the result (peer_linux.go): mapping is then a
	// shadow in which the head and the bitmap are composed, and the
	// values go straight to the peer.
	peer      *peerMemory
	valuesOff int64 // file offset of the first distance: the body's start
	bitmapOff int64 // file offset of the validity bitmap (integer types)

	row int // rows written
	// bitsSent is the bytes of the bitmap written into the peer so far;
	// bitsFreed, those whose pages of the shadow were released.
	bitsSent, bitsFreed int
	nulls               int64 // null distances written
	sources             []arrow.Array
	size                int64 // the file's size once closed
	done                bool
}

// newMappedMatrix sizes f for a matrix result of rows rows of schema and
// maps it. f must be open for reading and writing, empty, and in memory
// (mapping a file on a disk would page it in and out).
func newMappedMatrix(f *os.File, schema *arrow.Schema, rows int, mem memory.Allocator) (*mappedMatrix, error) {
	w, err := planMappedMatrix(schema, rows, mem)
	if err != nil {
		return nil, err
	}
	w.file = f
	total := w.bitmapOff + int64(roundUp(w.bitmapBytes(), 64))
	if err := f.Truncate(total); err != nil {
		return nil, fmt.Errorf("sizing the result to %d bytes: %w", total, err)
	}
	if w.mapping, err = mapFile(f, total); err != nil {
		_ = f.Truncate(0)
		return nil, fmt.Errorf("mapping the result: %w", err)
	}
	adviseHugePages(w.mapping)
	return w, nil
}

// planMappedMatrix checks schema and computes the file offsets of a
// matrix of rows rows.
func planMappedMatrix(schema *arrow.Schema, rows int, mem memory.Allocator) (*mappedMatrix, error) {
	if schema.NumFields() != 2 || rows <= 0 {
		return nil, fmt.Errorf("a one-batch matrix needs a source and a distance column and rows, got %d fields, %d rows", schema.NumFields(), rows)
	}
	list, ok := schema.Field(1).Type.(*arrow.FixedSizeListType)
	if !ok {
		return nil, fmt.Errorf("a one-batch matrix needs a fixed_size_list distance column, got %s", schema.Field(1).Type)
	}
	child := list.Elem()
	fw, ok := child.(arrow.FixedWidthDataType)
	if !ok || fw.BitWidth()%8 != 0 {
		return nil, fmt.Errorf("a one-batch matrix needs fixed-width distances, got %s", child)
	}
	w := &mappedMatrix{
		schema: schema, mem: mem, rows: rows, width: int(list.Len()),
		childType: child, elem: fw.BitWidth() / 8, nullable: arrow.IsInteger(child.ID()),
	}
	head, err := mappedHeadRoom(schema, mem)
	if err != nil {
		return nil, err
	}
	w.valuesOff = int64(roundUp(head, mappedValuesAlign))
	w.bitmapOff = w.valuesOff + int64(roundUp(w.valuesBytes(), 64))
	return w, nil
}

func (w *mappedMatrix) values() int      { return w.rows * w.width }
func (w *mappedMatrix) valuesBytes() int { return w.values() * w.elem }

// bitmapBytes is the size of the validity bitmap the file reserves: none
// for float distances (unreachable is +Inf).
func (w *mappedMatrix) bitmapBytes() int {
	if !w.nullable {
		return 0
	}
	return int(bitutil.BytesForBits(int64(w.values())))
}

// Write copies rec's rows to their place in the mapping, on every core.
func (w *mappedMatrix) Write(rec arrow.RecordBatch) error {
	if w.done {
		return errors.New("write after close")
	}
	k := int(rec.NumRows())
	if rec.NumCols() != 2 || !arrow.TypeEqual(rec.Column(0).DataType(), w.schema.Field(0).Type) || !arrow.TypeEqual(rec.Column(1).DataType(), w.schema.Field(1).Type) {
		return fmt.Errorf("a record of schema %s for a matrix of schema %s", rec.Schema(), w.schema)
	}
	if w.row+k > w.rows {
		return fmt.Errorf("%d rows past the %d the matrix was sized for", w.row+k-w.rows, w.rows)
	}
	if k == 0 {
		return nil
	}
	list := rec.Column(1).(*array.FixedSizeList)
	child := list.ListValues()
	first := list.Data().Offset()*w.width + child.Data().Offset() // index of the record's first value in child's buffers
	count := k * w.width
	src := child.Data().Buffers()[1].Bytes()[first*w.elem : (first+count)*w.elem]
	at := w.valuesOff + int64(w.row*w.width*w.elem)
	dst := w.mapping[at : at+int64(len(src))]
	// The validity bits go to their own bytes beside the values, so that
	// no core waits at the end of one for the other to start.
	var bits chan error
	if w.nullable {
		bits = make(chan error, 1)
		go func() {
			err := w.writeValidity(child, first, count)
			if err == nil && w.peer != nil {
				err = w.sendBits((w.row + k) * w.width / 8)
			}
			bits <- err
		}()
	}
	var err error
	switch {
	case w.peer != nil && w.positional:
		err = w.peer.writeAt(src, at)
	case w.peer != nil:
		err = w.peer.parallelWriteAt(src, at, peerCopyChunk)
	case w.positional:
		_, err = w.file.WriteAt(src, at)
	default:
		err = parallelCopy(dst, src, mappedCopyChunk)
	}
	if bits != nil {
		err = errors.Join(err, <-bits)
	}
	if err != nil {
		return err
	}
	w.copied.Store(at + int64(len(src)) - w.valuesOff)
	src0 := rec.Column(0)
	src0.Retain()
	w.sources = append(w.sources, src0)
	w.row += k
	return nil
}

// writeValidity places the validity bits of count values of child from
// index first at the matrix's current row. Until the first null the bitmap
// is left alone (all ones is what it would hold); at the first null, the
// bits of every row before are set.
func (w *mappedMatrix) writeValidity(child arrow.Array, first, count int) error {
	bitmap := w.mapping[w.bitmapOff : w.bitmapOff+int64(w.bitmapBytes())]
	at := w.row * w.width
	nulls := child.NullN()
	if nulls > 0 {
		// Only the record's own range counts: a record slices the block's
		// whole child.
		nulls = count - bitutil.CountSetBits(child.NullBitmapBytes(), first, count)
	}
	const piece = mappedBitsPiece
	if nulls == 0 {
		if w.nulls > 0 {
			return parallelSetBits(bitmap, at, count, piece)
		}
		return nil
	}
	if w.nulls == 0 && at > 0 {
		if err := parallelSetBits(bitmap, 0, at, piece); err != nil {
			return err
		}
	}
	if err := parallelCopyBits(bitmap, at, child.NullBitmapBytes(), first, count, piece); err != nil {
		return err
	}
	w.nulls += int64(nulls)
	return nil
}

// Close writes the metadata, the source column and the footer around the
// values and truncates the file to its end.
func (w *mappedMatrix) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	w.stopPrefill()
	defer w.releaseSources()
	if w.row != w.rows {
		w.abort()
		return fmt.Errorf("the matrix was sized for %d rows and got %d", w.rows, w.row)
	}
	if err := w.finish(); err != nil {
		w.abort()
		return err
	}
	return nil
}

func (w *mappedMatrix) finish() error {
	trace.Printf("arrowio", "closing the matrix")
	sources, err := w.sourceColumn()
	if err != nil {
		return err
	}
	defer sources.Release()
	values := w.mapping[w.valuesOff : w.valuesOff+int64(w.valuesBytes())]
	var bitmapLen int64 // none where there are no nulls
	if w.nulls > 0 {
		bitmapLen = int64(w.bitmapBytes())
	}
	// The metadata is made from the record without its bitmap, and the
	// bitmap's buffer and null count are set in it after (relocate):
	// arrow-go would count the nulls again, on one core (R-MAT 16: 45 ms
	// at the end of the run).
	rec := mappedRecord(w.schema, sources, w.childType, w.rows, values)
	defer rec.Release()

	// The source column's buffers, as arrow-go lays them out in a body.
	srcSchema := arrow.NewSchema([]arrow.Field{w.schema.Field(0)}, nil)
	srcRec := array.NewRecordBatch(srcSchema, []arrow.Array{sources}, int64(w.rows))
	defer srcRec.Release()
	srcPayload, err := ipc.GetRecordBatchPayload(srcRec, ipc.WithAllocator(w.mem))
	if err != nil {
		return err
	}
	defer srcPayload.Release()
	var srcBody bytes.Buffer
	if err := srcPayload.SerializeBody(&srcBody); err != nil {
		return err
	}
	srcMeta := srcPayload.Meta()
	srcBuffers, err := batchBufferCount(srcMeta.Bytes())
	srcMeta.Release()
	if err != nil {
		return err
	}

	payload, err := ipc.GetRecordBatchPayload(rec, ipc.WithAllocator(w.mem))
	if err != nil {
		return err
	}
	defer payload.Release()
	metaBuf := payload.Meta()
	defer metaBuf.Release()
	meta := append([]byte(nil), metaBuf.Bytes()...)

	// Body (offsets from valuesOff): values, bitmap when there are nulls,
	// then the source column.
	bitmapRel := w.bitmapOff - w.valuesOff
	tail := int64(roundUp(w.valuesBytes(), 8))
	if w.nulls > 0 {
		tail = bitmapRel + int64(roundUp(int(bitmapLen), 8))
	}
	bodyLen := tail + int64(srcBody.Len())
	layout := batchLayout{
		srcBuffers: srcBuffers, srcShift: tail,
		valuesLen: int64(len(values)), bitmapLen: bitmapLen, bitmapRel: bitmapRel,
		nulls: w.nulls, bodyLen: bodyLen,
	}
	if err := layout.relocate(meta); err != nil {
		return err
	}

	// Head: magic, schema message, the batch's metadata padded to the values.
	schemaPayload := ipc.GetSchemaPayload(w.schema, w.mem)
	defer schemaPayload.Release()
	schemaMeta := schemaPayload.Meta()
	defer schemaMeta.Release()
	pos := 8 + framedLen(schemaMeta.Len())
	batchOff := int64(pos)
	metaLen := int(w.valuesOff) - pos
	if framedLen(len(meta)) > metaLen {
		return fmt.Errorf("the batch's metadata (%d bytes) outgrew the room reserved for it (%d)", len(meta), metaLen)
	}
	head := w.mapping[:w.valuesOff]
	err = guardFaults(func() {
		clear(head)
		copy(head, ipcMagic)
		frameMessage(head[8:], schemaMeta.Bytes(), framedLen(schemaMeta.Len()))
		frameMessage(head[pos:], meta, metaLen)
	})
	if err != nil {
		return err
	}

	footer, err := w.footer(batchOff, int32(metaLen), bodyLen)
	if err != nil {
		return err
	}
	var end bytes.Buffer
	end.Write(srcBody.Bytes())
	end.Write(footer)
	binary.Write(&end, binary.LittleEndian, uint32(len(footer)))
	end.Write(ipcMagic)

	at := w.valuesOff + tail
	trace.Printf("arrowio", "the matrix's metadata made")
	if w.peer != nil {
		return w.finishPeer(at, end.Bytes())
	}
	if err := unmapFile(w.mapping); err != nil {
		return fmt.Errorf("unmapping the result: %w", err)
	}
	w.mapping = nil
	if _, err := w.file.WriteAt(end.Bytes(), at); err != nil {
		return err
	}
	w.size = at + int64(end.Len())
	return w.file.Truncate(w.size)
}

// sourceColumn is the source ids of every record, as one array.
func (w *mappedMatrix) sourceColumn() (arrow.Array, error) {
	if len(w.sources) == 1 {
		w.sources[0].Retain()
		return w.sources[0], nil
	}
	return array.Concatenate(w.sources, w.mem)
}

func (w *mappedMatrix) releaseSources() {
	for _, s := range w.sources {
		s.Release()
	}
	w.sources = nil
}

// mappedRecord is the matrix record over the mapped values, without a
// validity bitmap (finish sets it in the metadata).
func mappedRecord(schema *arrow.Schema, sources arrow.Array, childType arrow.DataType, rows int, values []byte) arrow.RecordBatch {
	valuesBuf := memory.NewBufferBytes(values)
	list := schema.Field(1).Type.(*arrow.FixedSizeListType)
	child := array.NewData(childType, rows*int(list.Len()), []*memory.Buffer{nil, valuesBuf}, nil, 0, 0)
	data := array.NewData(list, rows, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	child.Release()
	dist := array.MakeFromData(data)
	data.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{sources, dist}, int64(rows))
	dist.Release()
	return rec
}

// abort unmaps the file and empties it: a failed run leaves no matrix.
func (w *mappedMatrix) abort() {
	w.stopPrefill()
	if w.mapping != nil {
		_ = unmapFile(w.mapping)
		w.mapping = nil
	}
	if w.peer != nil {
		w.peer.close()
	}
	_ = w.file.Truncate(0)
	w.releaseSources()
	w.done = true
}

// size is the bytes of the finished file.
func (w *mappedMatrix) bytesWritten() int64 { return w.size }
