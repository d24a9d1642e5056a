package arrowio

// The decoded-size budget of an Arrow IPC input, apart from the schema
// checks of read_ipccheck.go because it bounds the batches, not the schema.
//
// The checks here bound what the record batch and dictionary messages of
// an IPC input make arrow-go allocate. arrow-go reads a compressed buffer by
// allocating the uncompressed length its 8-byte prefix declares, unchecked:
// a prefix of 0x8000000000 in a message of a few hundred bytes ends the
// process with "runtime: out of memory", which no recover catches.
// IPCMessageBytes reads every buffer's declared length before arrow-go sees
// the message, checks the buffers against the body, and sums what they
// decode to, so that a caller can refuse a message over its budget before
// anything is allocated for it.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ErrDecodedTooLarge marks an IPC input whose buffers decode to more bytes
// than the reader's bound (ReadOptions.MaxDecodedBytes, or the budget
// passed to IPCMessageBytes).
var ErrDecodedTooLarge = errors.New("the input decodes to more bytes than allowed")

// Message header types of Message.fbs.
const (
	fbHeaderDictionaryBatch = 2
	fbHeaderRecordBatch     = 3
)

// IPCMessageBytes checks an IPC message given as its metadata flatbuffer
// (the Flight data header, without the stream's length prefix) and its body,
// and returns the bytes its buffers decode to: the uncompressed length
// declared by each compressed buffer, the length of each other one. Schema
// messages count 0. The error wraps ErrDecodedTooLarge when the total passes
// budget (a negative budget means no bound), and says what is corrupt otherwise;
// it is not prefixed, so that the caller names the input.
func IPCMessageBytes(meta, body []byte, budget int64) (int64, error) {
	return messageDecodedBytes(meta, bytes.NewReader(body), int64(len(body)), budget)
}

// messageDecodedBytes is IPCMessageBytes for a body of bodyLen bytes read
// through body (at offsets 0 … bodyLen).
func messageDecodedBytes(meta []byte, body io.ReaderAt, bodyLen, budget int64) (int64, error) {
	msg, ok := rootTable(meta)
	if !ok {
		return 0, errBadFlatbuffer
	}
	p, present := msg.field(1)
	if !present || p >= uint64(len(meta)) {
		return 0, nil // arrow-go reports a message without a header
	}
	var batch fbTable
	switch meta[p] {
	case fbHeaderRecordBatch:
		rb, present, ok := msg.subTable(2)
		if !ok || !present {
			return 0, errBadFlatbuffer
		}
		batch = rb
	case fbHeaderDictionaryBatch:
		db, present, ok := msg.subTable(2)
		if !ok || !present {
			return 0, errBadFlatbuffer
		}
		rb, present, ok := db.subTable(1)
		if !ok || !present {
			return 0, errBadFlatbuffer
		}
		batch = rb
	default:
		return 0, nil
	}
	if _, _, ok := batch.vector(1, 16); !ok { // nodes: FieldNode structs
		return 0, errBadFlatbuffer
	}
	if _, _, ok := batch.vector(4, 8); !ok { // variadicBufferCounts
		return 0, errBadFlatbuffer
	}
	_, compressed, ok := batch.subTable(3)
	if !ok {
		return 0, errBadFlatbuffer
	}
	start, n, ok := batch.vector(2, 16) // buffers: Buffer structs
	if !ok {
		return 0, errBadFlatbuffer
	}
	var total int64
	add := func(n int64) error {
		if budget >= 0 && n > budget-total {
			return fmt.Errorf("a message's buffers declare more than the %d decoded bytes left: %w", budget, ErrDecodedTooLarge)
		}
		if n > math.MaxInt64-total {
			return fmt.Errorf("a message's buffers declare more decoded bytes than a 64-bit count holds: %w", ErrDecodedTooLarge)
		}
		total += n
		return nil
	}
	for i := uint64(0); i < n; i++ {
		pos := start + 16*i
		off := int64(binary.LittleEndian.Uint64(meta[pos:]))
		length := int64(binary.LittleEndian.Uint64(meta[pos+8:]))
		if off < 0 || length < 0 || off > bodyLen || length > bodyLen-off {
			return 0, fmt.Errorf("buffer %d (offset %d, length %d) lies outside the message body of %d bytes", i, off, length, bodyLen)
		}
		if length == 0 {
			continue
		}
		if !compressed {
			if err := add(length); err != nil {
				return 0, err
			}
			continue
		}
		if length < 8 {
			return 0, fmt.Errorf("compressed buffer %d of %d bytes has no length prefix", i, length)
		}
		var prefix [8]byte
		if _, err := body.ReadAt(prefix[:], off); err != nil {
			return 0, fmt.Errorf("compressed buffer %d: %w", i, err)
		}
		decoded := int64(binary.LittleEndian.Uint64(prefix[:]))
		switch {
		case decoded == -1: // stored uncompressed
			decoded = length - 8
		case decoded < 0:
			return 0, fmt.Errorf("compressed buffer %d declares %d bytes", i, decoded)
		}
		if err := add(decoded); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// checkFileBlocks checks every dictionary and record batch block of an IPC
// file of size bytes with messageDecodedBytes, against maxDecoded bytes for
// the whole file (0 or less: no bound). Blocks that do not fit the file are left to arrow-go,
// which refuses them before reading. It returns the rows the record
// batches declare, for the reader to reserve: without it the edge columns
// grew as they were appended to, copied over and over (R-MAT 20 from the
// Python package's memfd, 2-core development machine: read in 1.2 s, 0.6
// s from Parquet; 0.35-0.41 s with it).
func checkFileBlocks(r io.ReaderAt, size, maxDecoded int64) (rows int64, err error) {
	const tail = 10
	if size < tail+8 {
		return 0, nil
	}
	var end [tail]byte
	if _, err := r.ReadAt(end[:], size-tail); err != nil {
		return 0, nil
	}
	footerLen := int64(binary.LittleEndian.Uint32(end[:4]))
	if footerLen <= 0 || footerLen > size-tail-6 { // as checkFileFooter
		return 0, nil
	}
	footer := make([]byte, footerLen)
	if _, err := r.ReadAt(footer, size-tail-footerLen); err != nil {
		return 0, nil
	}
	root, ok := rootTable(footer)
	if !ok {
		return 0, errBadFlatbuffer
	}
	var total int64
	for _, slot := range []int{2, 3} { // dictionaries, recordBatches
		start, n, ok := root.vector(slot, 24)
		if !ok {
			return 0, errBadFlatbuffer
		}
		for i := uint64(0); i < n; i++ {
			pos := start + 24*i
			off := int64(binary.LittleEndian.Uint64(footer[pos:]))
			metaLen := int64(int32(binary.LittleEndian.Uint32(footer[pos+8:])))
			bodyLen := int64(binary.LittleEndian.Uint64(footer[pos+16:]))
			if off < 0 || metaLen < 8 || bodyLen < 0 || off > size || metaLen > size-off || bodyLen > size-off-metaLen {
				continue // arrow-go refuses the block
			}
			meta := make([]byte, metaLen)
			if _, err := r.ReadAt(meta, off); err != nil {
				return 0, fmt.Errorf("block at offset %d: %w", off, err)
			}
			fb := meta[4:]
			if binary.LittleEndian.Uint32(meta) == 0xFFFFFFFF {
				fb = meta[8:]
			}
			budget := int64(-1)
			if maxDecoded > 0 {
				budget = maxDecoded - total
			}
			n, err := messageDecodedBytes(fb, io.NewSectionReader(r, off+metaLen, bodyLen), bodyLen, budget)
			if err != nil {
				return 0, fmt.Errorf("block at offset %d: %w", off, err)
			}
			total += n
			if slot == 3 {
				rows += batchRows(fb)
			}
		}
	}
	return rows, nil
}

// batchRows is the length a record batch message's metadata declares, 0
// where it declares none or is not a record batch.
func batchRows(meta []byte) int64 {
	msg, ok := rootTable(meta)
	if !ok {
		return 0
	}
	if p, present := msg.field(1); !present || p >= uint64(len(meta)) || meta[p] != fbHeaderRecordBatch {
		return 0
	}
	rb, present, ok := msg.subTable(2)
	if !ok || !present {
		return 0
	}
	p, present := rb.field(0)
	if !present || p+8 > uint64(len(meta)) {
		return 0
	}
	return max(0, int64(binary.LittleEndian.Uint64(meta[p:])))
}

// checkedMessageReader is an ipc.MessageReader over an IPC stream that
// checks each message before arrow-go decodes it: the schema with
// checkSchemaMessage, batches with messageDecodedBytes against what is left
// of maxDecoded for the whole stream. Where the input's size is known, a
// body longer than what is left of it is refused, and the others are read
// into buffers of their exact size; otherwise bodies are read as the bytes
// arrive instead of allocating their declared lengths up front, so a
// stream that claims more than it holds costs only what it holds.
type checkedMessageReader struct {
	r          io.Reader
	maxBody    int64
	maxDecoded int64
	decoded    int64
	// left is what the input holds after what was read, -1 if unknown.
	left  int64
	first bool
	refs  atomic.Int64
	msg   *ipc.Message
}

// newCheckedMessageReader reads the stream r, which holds size bytes (-1:
// unknown).
func newCheckedMessageReader(r io.Reader, maxBody, maxDecoded, size int64) *checkedMessageReader {
	m := &checkedMessageReader{r: r, maxBody: maxBody, maxDecoded: maxDecoded, first: true, left: size}
	m.refs.Store(1)
	return m
}

func (m *checkedMessageReader) Retain() { m.refs.Add(1) }

func (m *checkedMessageReader) Release() {
	if m.refs.Add(-1) == 0 && m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// readUpTo reads n bytes, growing its buffer as they arrive.
func readUpTo(r io.Reader, n int64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(min(n, 1<<20)))
	if _, err := io.CopyN(&buf, r, n); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// Message returns the next message, io.EOF at the end of the stream.
func (m *checkedMessageReader) Message() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	var word [4]byte
	if _, err := io.ReadFull(m.r, word[:]); err != nil {
		if errors.Is(err, io.EOF) && !m.first {
			return nil, io.EOF // a stream may end without its end marker
		}
		return nil, fmt.Errorf("message length: %w", err)
	}
	length := binary.LittleEndian.Uint32(word[:])
	if length == 0xFFFFFFFF {
		if _, err := io.ReadFull(m.r, word[:]); err != nil {
			return nil, fmt.Errorf("message length: %w", err)
		}
		length = binary.LittleEndian.Uint32(word[:])
	}
	if length == 0 {
		return nil, io.EOF
	}
	if length < 4 || length > maxSchemaMessage {
		return nil, fmt.Errorf("message metadata of %d bytes", length)
	}
	meta, err := readUpTo(m.r, int64(length))
	if err != nil {
		return nil, fmt.Errorf("message metadata: %w", err)
	}
	root, ok := rootTable(meta)
	if !ok {
		return nil, errBadFlatbuffer
	}
	if m.first {
		m.first = false
		if err := checkSchemaMessage(meta); err != nil {
			return nil, err
		}
	}
	var bodyLen int64
	if p, present := root.field(3); present {
		v, ok := root.b.u32(p)
		hi, ok2 := root.b.u32(p + 4)
		if !ok || !ok2 || hi > 0x7FFFFFFF {
			return nil, errBadFlatbuffer
		}
		bodyLen = int64(hi<<32 | v)
	}
	if m.maxBody > 0 && bodyLen > m.maxBody {
		return nil, fmt.Errorf("message body of %d bytes is larger than the limit of %d", bodyLen, m.maxBody)
	}
	var body []byte
	if m.left >= 0 {
		m.left -= int64(len(meta)) + 4 // at least the length word
		if bodyLen > m.left {
			return nil, fmt.Errorf("message body of %d bytes is longer than the %d bytes left in the input", bodyLen, max(m.left, 0))
		}
		body = make([]byte, bodyLen)
		if _, err := io.ReadFull(m.r, body); err != nil {
			return nil, fmt.Errorf("message body: %w", err)
		}
		m.left -= bodyLen
	} else if body, err = readUpTo(m.r, bodyLen); err != nil {
		return nil, fmt.Errorf("message body: %w", err)
	}
	budget := int64(-1)
	if m.maxDecoded > 0 {
		budget = m.maxDecoded - m.decoded
	}
	n, err := IPCMessageBytes(meta, body, budget)
	if err != nil {
		return nil, err
	}
	m.decoded += n
	m.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	return m.msg, nil
}
