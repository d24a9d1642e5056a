package arrowio

// The Arrow IPC framing of the one-batch matrix file of write_mapped.go:
// the magic, the framing of a message's metadata, the room the head takes,
// the footer, and the changes to the record batch's metadata that place
// its buffers in the one-batch body. It is kept apart from the writer
// because it knows Arrow's file format and nothing of mappings or cores.
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

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

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
