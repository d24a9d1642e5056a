package arrowio

// A bounds check of the flatbuffer that carries an Arrow IPC schema, run
// before arrow-go decodes it. arrow-go trusts the vector lengths of a schema
// (fields, children, custom metadata) and allocates slices of those lengths
// before reading them; a corrupt length of four billion then exhausts memory,
// which no recover catches, and nested children deep enough overflow the
// stack. checkSchemaMessage and checkFileFooter walk exactly those parts and
// reject a vector that does not fit its buffer and nesting deeper than
// maxFieldDepth. Everything else stays arrow-go's job: a bad offset elsewhere
// makes it panic on a slice bound, which readers turn into an error.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// maxFieldDepth bounds the nesting of schema fields (a list of a struct of
// ...); edge tables have flat columns.
const maxFieldDepth = 64

var errBadFlatbuffer = errors.New("schema metadata is corrupt (a length or offset points outside the message)")

// flatbuf reads little-endian values of a flatbuffer with bounds checks.
type flatbuf []byte

func (b flatbuf) u16(pos uint64) (uint64, bool) {
	if pos+2 > uint64(len(b)) {
		return 0, false
	}
	return uint64(binary.LittleEndian.Uint16(b[pos:])), true
}

func (b flatbuf) u32(pos uint64) (uint64, bool) {
	if pos+4 > uint64(len(b)) {
		return 0, false
	}
	return uint64(binary.LittleEndian.Uint32(b[pos:])), true
}

// fbTable is a table: its position and its vtable's.
type fbTable struct {
	b          flatbuf
	pos, vt    uint64
	vtableSize uint64
}

func (b flatbuf) table(pos uint64) (fbTable, bool) {
	soff, ok := b.u32(pos)
	if !ok {
		return fbTable{}, false
	}
	vt := int64(pos) - int64(int32(uint32(soff)))
	if vt < 0 {
		return fbTable{}, false
	}
	size, ok := b.u16(uint64(vt))
	if !ok || size < 4 || uint64(vt)+size > uint64(len(b)) {
		return fbTable{}, false
	}
	return fbTable{b: b, pos: pos, vt: uint64(vt), vtableSize: size}, true
}

// field returns the position of a field's value, or present false. A slot
// counts as present as the flatbuffers runtime (and so arrow-go) counts
// it: its offset lies before the vtable's declared size, even where that
// size is odd and the two bytes of the offset run past it.
func (t fbTable) field(slot int) (pos uint64, present bool) {
	o := uint64(4 + 2*slot)
	if o >= t.vtableSize {
		return 0, false
	}
	off, ok := t.b.u16(t.vt + o)
	if !ok || off == 0 {
		return 0, false
	}
	return t.pos + off, true
}

// indirect follows the offset stored at pos.
func (b flatbuf) indirect(pos uint64) (uint64, bool) {
	off, ok := b.u32(pos)
	if !ok || pos+off >= uint64(len(b)) {
		return 0, false
	}
	return pos + off, true
}

// vector checks the vector (or string, elemSize 1) in slot and returns the
// position of its first element and its length.
func (t fbTable) vector(slot int, elemSize uint64) (start, n uint64, ok bool) {
	p, present := t.field(slot)
	if !present {
		return 0, 0, true
	}
	v, ok := t.b.indirect(p)
	if !ok {
		return 0, 0, false
	}
	n, ok = t.b.u32(v)
	if !ok || v+4+n*elemSize > uint64(len(t.b)) {
		return 0, 0, false
	}
	return v + 4, n, true
}

// subTable checks the table in slot (absent is fine).
func (t fbTable) subTable(slot int) (fbTable, bool, bool) {
	p, present := t.field(slot)
	if !present {
		return fbTable{}, false, true
	}
	pos, ok := t.b.indirect(p)
	if !ok {
		return fbTable{}, false, false
	}
	sub, ok := t.b.table(pos)
	return sub, true, ok
}

// tables checks a vector of tables in slot and each table with check.
func (t fbTable) tables(slot int, check func(fbTable) bool) bool {
	start, n, ok := t.vector(slot, 4)
	if !ok {
		return false
	}
	for i := uint64(0); i < n; i++ {
		pos, ok := t.b.indirect(start + 4*i)
		if !ok {
			return false
		}
		elem, ok := t.b.table(pos)
		if !ok || !check(elem) {
			return false
		}
	}
	return true
}

func checkKeyValue(kv fbTable) bool {
	_, _, ok1 := kv.vector(0, 1)
	_, _, ok2 := kv.vector(1, 1)
	return ok1 && ok2
}

const fbTypeUnion = 14 // flatbuf.TypeUnion

func checkField(f fbTable, depth int) bool {
	if depth > maxFieldDepth {
		return false
	}
	if _, _, ok := f.vector(0, 1); !ok { // name
		return false
	}
	typ, present, ok := f.subTable(3)
	if !ok {
		return false
	}
	if p, has := f.field(2); present && has && p < uint64(len(f.b)) && f.b[p] == fbTypeUnion {
		if _, _, ok := typ.vector(1, 4); !ok { // Union.typeIds
			return false
		}
	}
	if _, _, ok := f.subTable(4); !ok { // dictionary
		return false
	}
	return f.tables(5, func(c fbTable) bool { return checkField(c, depth+1) }) && f.tables(6, checkKeyValue)
}

func checkSchemaTable(s fbTable) bool {
	if _, _, ok := s.vector(3, 8); !ok { // features
		return false
	}
	return s.tables(1, func(f fbTable) bool { return checkField(f, 1) }) && s.tables(2, checkKeyValue)
}

func rootTable(b flatbuf) (fbTable, bool) {
	pos, ok := b.indirect(0)
	if !ok {
		return fbTable{}, false
	}
	return b.table(pos)
}

// checkSchemaMessage checks an IPC message's metadata flatbuffer: a body
// length within maxSchemaMessage, and the schema of a schema message.
func checkSchemaMessage(meta []byte) error {
	const headerSchema = 1 // flatbuf.MessageHeaderSchema
	msg, ok := rootTable(meta)
	if !ok || !msg.tables(4, checkKeyValue) {
		return errBadFlatbuffer
	}
	// arrow-go's plain stream reader (used for Parquet's embedded schema)
	// allocates the body before reading it, whatever its length.
	if p, present := msg.field(3); present {
		lo, ok1 := msg.b.u32(p)
		hi, ok2 := msg.b.u32(p + 4)
		if !ok1 || !ok2 || hi != 0 || lo > maxSchemaMessage {
			return errBadFlatbuffer
		}
	}
	p, present := msg.field(1)
	if !present || p >= uint64(len(meta)) || meta[p] != headerSchema {
		return nil // not a schema: arrow-go reports it
	}
	schema, present, ok := msg.subTable(2)
	if !ok || (present && !checkSchemaTable(schema)) {
		return errBadFlatbuffer
	}
	return nil
}

// checkFileFooter checks the footer of an IPC file of size bytes.
func checkFileFooter(r io.ReaderAt, size int64) error {
	const tail = 10 // footer length (int32) and "ARROW1"
	if size < tail+8 {
		return nil // arrow-go reports a file too small
	}
	var end [tail]byte
	if _, err := r.ReadAt(end[:], size-tail); err != nil {
		return nil
	}
	footerLen := int64(binary.LittleEndian.Uint32(end[:4]))
	// arrow-go refuses a footer that leaves less than the leading magic
	// (6 bytes) before it; one it reads is checked here, however close to
	// the start (a footer overlapping the padding once slipped through
	// with a schema claiming billions of fields, and arrow-go ran out of
	// memory allocating them).
	if footerLen <= 0 || footerLen > size-tail-6 {
		return nil // arrow-go reports inconsistent metadata
	}
	footer := make([]byte, footerLen)
	if _, err := r.ReadAt(footer, size-tail-footerLen); err != nil {
		return nil
	}
	root, ok := rootTable(footer)
	if !ok || !root.tables(4, checkKeyValue) {
		return errBadFlatbuffer
	}
	for _, slot := range []int{2, 3} { // dictionaries, recordBatches: Block structs
		if _, _, ok := root.vector(slot, 24); !ok {
			return errBadFlatbuffer
		}
	}
	schema, present, ok := root.subTable(1)
	if !ok || (present && !checkSchemaTable(schema)) {
		return errBadFlatbuffer
	}
	return nil
}

// maxSchemaMessage bounds the schema message of a stream (arrow-go's
// default metadata limit).
const maxSchemaMessage = 64 << 20

// checkStreamSchema reads the first message of an IPC stream, checks it, and
// returns a reader that yields the whole stream again.
func checkStreamSchema(r io.Reader, name string) (io.Reader, error) {
	var prefix [8]byte
	n, err := io.ReadFull(r, prefix[:])
	if err != nil {
		return io.MultiReader(bytes.NewReader(prefix[:n]), r), nil // arrow-go reports the short stream
	}
	head := 8
	length := binary.LittleEndian.Uint32(prefix[4:])
	if binary.LittleEndian.Uint32(prefix[:4]) != 0xFFFFFFFF { // pre-0.15 framing
		head, length = 4, binary.LittleEndian.Uint32(prefix[:4])
	}
	if length < 4 {
		return io.MultiReader(bytes.NewReader(prefix[:]), r), nil // arrow-go reports it
	}
	if length > maxSchemaMessage {
		return nil, fmt.Errorf("arrowio: %s: not a readable Arrow IPC stream: schema message of %d bytes", name, length)
	}
	// Read what is there rather than allocate the claimed length up front.
	var buf bytes.Buffer
	buf.Write(prefix[head:])
	if _, err := io.CopyN(&buf, r, int64(length)-int64(8-head)); err != nil {
		return nil, fmt.Errorf("arrowio: %s: not a readable Arrow IPC stream: schema message: %w", name, err)
	}
	meta := buf.Bytes()
	if err := checkSchemaMessage(meta); err != nil {
		return nil, fmt.Errorf("arrowio: %s: not a readable Arrow IPC stream: %w", name, err)
	}
	return io.MultiReader(bytes.NewReader(prefix[:head]), bytes.NewReader(meta), r), nil
}

// checkParquetArrowSchema checks the Arrow schema that Parquet writers store
// base64-encoded under the "ARROW:schema" key, which pqarrow decodes with
// the same unchecked code. Values that do not decode are left to pqarrow.
func checkParquetArrowSchema(serialized string, name string) error {
	var decoded []byte
	var err error
	if len(serialized)%4 == 0 {
		decoded, err = base64.StdEncoding.DecodeString(serialized)
	}
	if len(decoded) == 0 || err != nil {
		if decoded, err = base64.RawStdEncoding.DecodeString(serialized); err != nil {
			return nil
		}
	}
	if _, err := checkStreamSchema(bytes.NewReader(decoded), name); err != nil {
		return fmt.Errorf("arrowio: %s: not a readable Parquet file: ARROW:schema metadata: %s", name, strings.TrimPrefix(err.Error(), "arrowio: "+name+": not a readable Arrow IPC stream: "))
	}
	return nil
}

// The checks below bound what the record batch and dictionary messages of
// an IPC input make arrow-go allocate. arrow-go reads a compressed buffer by
// allocating the uncompressed length its 8-byte prefix declares, unchecked:
// a prefix of 0x8000000000 in a message of a few hundred bytes ends the
// process with "runtime: out of memory", which no recover catches.
// IPCMessageBytes reads every buffer's declared length before arrow-go sees
// the message, checks the buffers against the body, and sums what they
// decode to, so that a caller can refuse a message over its budget before
// anything is allocated for it.

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
