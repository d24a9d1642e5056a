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
// copies, so that allocating them overlaps the compute. MatrixWrites
// "inplace" does the same and hands the mapped values to the producer
// (ResultWriter.MatrixValues): a record whose values already lie at their
// place there (the GPU's copies, landed in the mapping through pages that
// package pipeline registers with the driver) is not copied. The bitmap
// is written only once a null has been seen (a run without one leaves its pages untouched, and they
// are cut off at the end). Close builds the record batch's metadata with
// arrow-go over the mapped values (no copy), moves its buffer offsets to
// the layout above, writes the metadata, the source column and a footer
// whose block entry points at the batch, and truncates the file to its
// end. The values start on a page boundary, so that a reader's view of
// them is a view of whole pages of the mapping.
//
// Arrow's buffer offsets are relative to the body and need not follow the
// order of the buffers, which is what lets the values come first and the
// small, late-known parts (the bitmap's presence, the source ids) after
// them. The metadata flatbuffers are arrow-go's own; only their fixed-size
// structs (Buffer, Block) and the body length are changed here, found with
// the bounds-checked flatbuffer reader of read_ipccheck.go by the fields
// Arrow's Message.fbs and File.fbs declare.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
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

// peerCopyChunk is the bytes one core writes into a result peer at a time:
// a 64 MiB record is 64 of them, so that 16 cores finish it together
// (in 4 MiB chunks, one each, the record waited for the slowest).
const peerCopyChunk = 1 << 20

// mappedBitsPiece is the validity bits one core copies or sets at a time
// (a multiple of 8): 256 KiB of bitmap, so that a GPU run's 64 MiB record
// (R-MAT 16: 358 rows, 16.8 M bits) spreads over 8 cores. Its bits land at
// offsets that are not whole bytes (copyBits).
const mappedBitsPiece = 8 * (256 << 10)

// ipcMagic opens and closes an Arrow IPC file.
var ipcMagic = []byte("ARROW1")

// The fields of Arrow's IPC flatbuffers that the one-batch writer reads or
// changes, by their index in Message.fbs and File.fbs.
const (
	fbMessageHeaderType = 1 // Message.header_type
	fbMessageHeader     = 2 // Message.header
	fbMessageBodyLength = 3 // Message.bodyLength
	fbBatchNodes        = 1 // RecordBatch.nodes
	fbBatchBuffers      = 2 // RecordBatch.buffers
	fbFooterBatches     = 3 // Footer.recordBatches

	fbBufferSize = 16 // struct Buffer { offset: long; length: long }
	fbNodeSize   = 16 // struct FieldNode { length: long; null_count: long }
	fbBlockSize  = 24 // struct Block { offset: long; metaDataLength: int; bodyLength: long }
)

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
	// offered: ResultWriter.MatrixValues hands the mapped values to the
	// producer (MatrixWritesInPlace).
	offered bool
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

// newPeerMatrix is newMappedMatrix for a result written into the memory
// of the process at the other end of conn (WriteOptions.ResultPeer); f,
// the file it would go to otherwise, is left empty.
func newPeerMatrix(f, conn *os.File, schema *arrow.Schema, rows int, mem memory.Allocator) (*mappedMatrix, error) {
	w, err := planMappedMatrix(schema, rows, mem)
	if err != nil {
		return nil, err
	}
	w.file = f
	total := w.bitmapOff + int64(roundUp(w.bitmapBytes(), 64))
	if w.mapping, err = shadowMapping(total); err != nil {
		return nil, fmt.Errorf("reserving the result's shadow: %w", err)
	}
	trace.Printf("arrowio", "asking the result peer for %d bytes", total+peerTailRoom(rows))
	w.peer, err = openPeerMemory(conn, total+peerTailRoom(rows), w.valuesOff, int64(w.valuesBytes()))
	trace.Printf("arrowio", "the result peer answered (%v)", err == nil)
	if err != nil {
		_ = unmapFile(w.mapping)
		return nil, err
	}
	return w, nil
}

// peerTailRoom is the room a peer is first asked for past the bitmap, for
// the source column and the footer: enough for ids of up to 56 bytes; a
// longer tail asks the peer to grow.
func peerTailRoom(rows int) int64 { return int64(rows)*64 + 1<<20 }

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

// mappedHeadRoom is the most bytes the magic, the schema message and the
// record batch's metadata take before the body: the metadata of a batch of
// this schema has the same size whatever its row count (its lengths and
// offsets are fixed-size structs), measured on a one-row batch, plus room
// to spare.
func mappedHeadRoom(schema *arrow.Schema, mem memory.Allocator) (int, error) {
	schemaMsg := ipc.GetSchemaPayload(schema, mem)
	defer schemaMsg.Release()
	meta := schemaMsg.Meta()
	schemaLen := meta.Len()
	meta.Release()
	probe := probeRecord(schema, mem)
	defer probe.Release()
	batch, err := ipc.GetRecordBatchPayload(probe, ipc.WithAllocator(mem))
	if err != nil {
		return 0, err
	}
	defer batch.Release()
	meta = batch.Meta()
	batchLen := meta.Len()
	meta.Release()
	return 8 + framedLen(schemaLen) + framedLen(batchLen) + 256, nil
}

// framedLen is the size of an IPC message's metadata of metaLen bytes
// once framed: continuation marker, length, padding to 8 bytes.
func framedLen(metaLen int) int { return roundUp(metaLen+8, 8) }

// probeRecord is a record of schema with one row of nulls: its metadata has
// the shape of any batch of schema.
func probeRecord(schema *arrow.Schema, mem memory.Allocator) arrow.RecordBatch {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 1)
	}
	rec := array.NewRecordBatch(schema, cols, 1)
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

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
	case &src[0] == &dst[0]: // computed in place
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

// finishPeer writes the head, the bitmap (where there are nulls) and end
// (the source column, the footer) at offset at into the peer, and tells
// it the result's size.
func (w *mappedMatrix) finishPeer(at int64, end []byte) error {
	size := at + int64(len(end))
	if err := w.peer.grow(size); err != nil {
		return err
	}
	if err := w.peer.writeAt(w.mapping[:w.valuesOff], 0); err != nil {
		return err
	}
	if err := w.sendBits(w.bitmapBytes()); err != nil {
		return err
	}
	if err := w.peer.writeAt(end, at); err != nil {
		return err
	}
	_ = unmapFile(w.mapping)
	w.mapping = nil
	w.size = size
	return w.peer.finish(size)
}

// sendBits writes the bitmap's bytes from the last sent up to end into the
// peer, once the bitmap is written at all (a null seen): the rows written
// so far fix every byte below end = their bits / 8, so that they go with
// the rows, beside their values, rather than all at the close (R-MAT 16:
// 274 MB, about 80 ms at the end of the run).
func (w *mappedMatrix) sendBits(end int) error {
	if w.nulls == 0 || end <= w.bitsSent {
		return nil
	}
	at := w.bitmapOff + int64(w.bitsSent)
	if err := w.peer.parallelWriteAt(w.mapping[at:w.bitmapOff+int64(end)], at, peerCopyChunk); err != nil {
		return err
	}
	w.bitsSent = end
	// The whole pages of the shadow's bitmap sent so far are not read
	// again (the close sends only the rest): their memory goes back, so
	// that the binary holds a page or so of the bitmap rather than all of
	// it (R-MAT 16: 274 MB, 3 % of the result).
	page := os.Getpagesize()
	lo := int64(roundUp(int(w.bitmapOff)+w.bitsFreed, page))
	hi := (w.bitmapOff + int64(end)) / int64(page) * int64(page)
	if hi > lo {
		releasePages(w.mapping[lo:hi])
		w.bitsFreed = int(hi - w.bitmapOff)
	}
	return nil
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

// frameMessage writes metadata meta as an IPC message of size bytes
// (continuation marker, length, metadata, zero padding) at the start of
// dst, and returns size.
func frameMessage(dst, meta []byte, size int) int {
	binary.LittleEndian.PutUint32(dst[0:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(dst[4:], uint32(size-8))
	copy(dst[8:], meta)
	clear(dst[8+len(meta) : size])
	return size
}

// footer is the file footer of schema with one record batch at offset
// whose metadata takes metaLen bytes and whose body takes bodyLen: the
// footer arrow-go writes for a one-row file of schema, with its block
// entry changed.
func (w *mappedMatrix) footer(offset int64, metaLen int32, bodyLen int64) ([]byte, error) {
	probe := probeRecord(w.schema, w.mem)
	defer probe.Release()
	var file bytes.Buffer
	fw, err := ipc.NewFileWriter(&file, ipc.WithSchema(w.schema), ipc.WithAllocator(w.mem))
	if err != nil {
		return nil, err
	}
	if err := fw.Write(probe); err != nil {
		return nil, err
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	b := file.Bytes()
	if len(b) < 10+len(ipcMagic) {
		return nil, errors.New("arrow-go wrote a file without a footer")
	}
	size := int(binary.LittleEndian.Uint32(b[len(b)-10:]))
	if size <= 0 || size > len(b)-10 {
		return nil, fmt.Errorf("arrow-go wrote a footer of %d bytes in a file of %d", size, len(b))
	}
	footer := append([]byte(nil), b[len(b)-10-size:len(b)-10]...)
	if err := setFooterBlock(footer, offset, metaLen, bodyLen); err != nil {
		return nil, err
	}
	return footer, nil
}

// setFooterBlock changes the one record batch block of footer.
func setFooterBlock(footer []byte, offset int64, metaLen int32, bodyLen int64) error {
	root, ok := rootTable(footer)
	if !ok {
		return errBadFlatbuffer
	}
	at, n, ok := root.vector(fbFooterBatches, fbBlockSize)
	if !ok || n != 1 {
		return errors.New("the footer does not list exactly one record batch")
	}
	binary.LittleEndian.PutUint64(footer[at:], uint64(offset))
	binary.LittleEndian.PutUint32(footer[at+8:], uint32(metaLen))
	binary.LittleEndian.PutUint64(footer[at+16:], uint64(bodyLen))
	return nil
}

// batchLayout moves the buffers of a matrix record batch's metadata to the
// one-batch body: values first, the bitmap at bitmapRel, the source
// column's srcBuffers buffers shifted by srcShift.
type batchLayout struct {
	srcBuffers           int
	srcShift             int64
	valuesLen, bitmapLen int64
	bitmapRel            int64
	nulls                int64 // the distances' null count
	bodyLen              int64
}

// batchBuffers returns the position of the record batch message meta's
// buffer vector, its length, and the position of the message's body
// length.
func batchBuffers(meta []byte) (start uint64, n int, bodyLength uint64, err error) {
	start, n, bodyLength, err = batchVector(meta, fbBatchBuffers, fbBufferSize)
	return
}

// batchVector returns the position and length of the record batch
// message meta's vector in slot (of elements of size bytes) and the
// position of the message's body length.
func batchVector(meta []byte, slot int, size uint64) (start uint64, n int, bodyLength uint64, err error) {
	msg, ok := rootTable(meta)
	if !ok {
		return 0, 0, 0, errBadFlatbuffer
	}
	if p, present := msg.field(fbMessageHeaderType); !present || p >= uint64(len(meta)) || meta[p] != fbHeaderRecordBatch {
		return 0, 0, 0, errors.New("the message is not a record batch")
	}
	bodyLength, present := msg.field(fbMessageBodyLength)
	if !present || bodyLength+8 > uint64(len(meta)) {
		return 0, 0, 0, errors.New("the record batch message has no body length")
	}
	batch, present, ok := msg.subTable(fbMessageHeader)
	if !ok || !present {
		return 0, 0, 0, errors.New("the record batch message has no header")
	}
	start, count, ok := batch.vector(slot, size)
	if !ok {
		return 0, 0, 0, errBadFlatbuffer
	}
	return start, int(count), bodyLength, nil
}

func batchBufferCount(meta []byte) (int, error) {
	_, n, _, err := batchBuffers(meta)
	return n, err
}

// relocate rewrites meta, the metadata of a (source, distance) record
// batch as arrow-go lays it out (made from the record without a bitmap),
// to l, with l's bitmap and null count.
func (l batchLayout) relocate(meta []byte) error {
	nodes, count, _, err := batchVector(meta, fbBatchNodes, fbNodeSize)
	if err != nil {
		return err
	}
	if count < 3 {
		return fmt.Errorf("a matrix batch of %d field nodes, want 3 or more", count)
	}
	// The distances are the last field node: the source column's, the
	// list's, then theirs.
	last := int(nodes) + (count-1)*fbNodeSize
	binary.LittleEndian.PutUint64(meta[last+8:last+16], uint64(l.nulls))
	start, n, bodyLength, err := batchBuffers(meta)
	if err != nil {
		return err
	}
	if n != l.srcBuffers+3 {
		return fmt.Errorf("a matrix batch of %d buffers, want %d", n, l.srcBuffers+3)
	}
	buffer := func(i int) (offset, length []byte) {
		at := int(start) + i*fbBufferSize
		return meta[at : at+8], meta[at+8 : at+16]
	}
	for i := range l.srcBuffers {
		off, _ := buffer(i)
		binary.LittleEndian.PutUint64(off, binary.LittleEndian.Uint64(off)+uint64(l.srcShift))
	}
	// The list's validity (none), the distances' validity, the distances.
	want := []struct{ offset, length int64 }{{0, 0}, {l.bitmapRel, l.bitmapLen}, {0, l.valuesLen}}
	if l.bitmapLen == 0 {
		want[1].offset = 0
	}
	for j, b := range want {
		off, length := buffer(l.srcBuffers + j)
		if got := int64(binary.LittleEndian.Uint64(length)); got != b.length && (j != 1 || got != 0) {
			return fmt.Errorf("buffer %d of the matrix batch holds %d bytes, want %d", l.srcBuffers+j, got, b.length)
		}
		binary.LittleEndian.PutUint64(off, uint64(b.offset))
		binary.LittleEndian.PutUint64(length, uint64(b.length))
	}
	binary.LittleEndian.PutUint64(meta[bodyLength:], uint64(l.bodyLen))
	return nil
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

// mappedPrefillChunk is the bytes of values one prefill worker populates
// at a time.
const mappedPrefillChunk = 32 << 20

// startPrefill starts workers that populate the pages of the values in
// order, ahead of the copies, skipping what the copies have passed: on a
// GPU run the cores are mostly idle while the device computes, and the
// page allocations (most of the write's cost) then overlap the compute
// instead of lying on the writer's path. A failure stops the worker (the
// copy's own populate reports it). Allocating the pages with fallocate
// ahead of the workers was measured slower on a GPU run (8.24 s against
// 5.10 s for the R-MAT 16 matrix into a memfd; docs/benchmarks-history.md)
// and is not done.
func (w *mappedMatrix) startPrefill(workers int) {
	values := w.mapping[w.valuesOff : w.valuesOff+int64(w.valuesBytes())]
	pieces := int64((len(values) + mappedPrefillChunk - 1) / mappedPrefillChunk)
	var next atomic.Int64
	for range workers {
		w.prefill.wg.Add(1)
		go func() {
			defer w.prefill.wg.Done()
			_ = guardFaults(func() {
				for !w.prefill.stop.Load() {
					i := next.Add(1) - 1
					if i >= pieces {
						return
					}
					lo, hi := i*mappedPrefillChunk, min(int64(len(values)), (i+1)*mappedPrefillChunk)
					if hi <= w.copied.Load() {
						continue
					}
					if prefault(values[lo:hi]) != nil {
						return
					}
				}
			})
		}()
	}
}

// stopPrefill stops the prefill workers and waits for them (before the
// mapping goes).
func (w *mappedMatrix) stopPrefill() {
	w.prefill.stop.Store(true)
	w.prefill.wg.Wait()
}

// parallelCopy copies src to dst (same length) in chunks of chunk bytes,
// on every core, each chunk's pages populated first. A fault in dst (a
// file system out of room under the mapping) is returned as an error.
func parallelCopy(dst, src []byte, chunk int) error {
	return parallelRanges(len(src), chunk, func(lo, hi int) error {
		if err := prefault(dst[lo:hi]); err != nil {
			return err
		}
		copy(dst[lo:hi], src[lo:hi])
		return nil
	})
}

// parallelSetBits sets bits [at, at+count) of bitmap, on every core, in
// pieces of piece bits (a multiple of 8).
func parallelSetBits(bitmap []byte, at, count, piece int) error {
	return parallelBits(at, count, piece, func(lo, hi int) { bitutil.SetBitsTo(bitmap, int64(lo), int64(hi-lo), true) })
}

// parallelCopyBits copies count bits of src from bit from to bitmap at bit
// at, on every core, in pieces of piece bits (a multiple of 8).
func parallelCopyBits(bitmap []byte, at int, src []byte, from, count, piece int) error {
	return parallelBits(at, count, piece, func(lo, hi int) { copyBits(bitmap, lo, src, from+lo-at, hi-lo) })
}

// parallelBits runs fn over the pieces [lo, hi) of the bit range [at,
// at+count) cut at the multiples of piece: with piece a multiple of 8, no
// two pieces write one byte, so they run side by side.
func parallelBits(at, count, piece int, fn func(lo, hi int)) error {
	first := at / piece
	last := (at + count + piece - 1) / piece
	return parallelRanges(last-first, 1, func(lo, hi int) error {
		for p := first + lo; p < first+hi; p++ {
			fn(max(at, p*piece), min(at+count, (p+1)*piece))
		}
		return nil
	})
}

// parallelRanges calls fn over [0, n) in ranges of chunk, one goroutine
// per core taking the next range until none is left, and returns the
// first error. fn writes into a mapping of a file: a fault there (SIGBUS
// when the file system has no room for a page) becomes an error instead
// of ending the process (runtime/debug.SetPanicOnFault).
func parallelRanges(n, chunk int, fn func(lo, hi int) error) error {
	pieces := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), pieces)
	var mu sync.Mutex
	next := 0
	var first error
	take := func(err error) int {
		mu.Lock()
		defer mu.Unlock()
		if err != nil && first == nil {
			first = err
		}
		if first != nil {
			return pieces
		}
		next++
		return next - 1
	}
	work := func() {
		var err error
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				take(fmt.Errorf("writing into the mapped file: %v", r))
			}
		}()
		for i := take(nil); i < pieces; i = take(err) {
			err = fn(i*chunk, min(n, (i+1)*chunk))
		}
	}
	if workers <= 1 {
		work()
		return first
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	wg.Wait()
	return first
}

// guardFaults runs fn, which writes into a mapping, and returns a fault
// there as an error (see parallelRanges).
func guardFaults(fn func()) error {
	return parallelRanges(1, 1, func(int, int) error { fn(); return nil })
}

// size is the bytes of the finished file.
func (w *mappedMatrix) bytesWritten() int64 { return w.size }
