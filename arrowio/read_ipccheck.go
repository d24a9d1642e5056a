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
//
// The bounds on what the batches of an IPC input decode to are in
// read_ipcbudget.go.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
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
