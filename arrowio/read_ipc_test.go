package arrowio

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestReadIPCByContent: an IPC stream named .arrow, and an IPC file given
// where a stream is expected (standard input), are read for what they are.
func TestReadIPCByContent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := randomIntIDs(newRand(8), arrow.PrimitiveTypes.Int32, 50, 20)
	e.weights = randomWeights(newRand(9), arrow.PrimitiveTypes.Float32, 50)
	schema, recs := e.records(t, mem, [3]string{"src", "dst", "weight"}, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32, 20)
	defer releaseAll(recs)
	stream, file := writeIPCStream(t, schema, recs), writeIPCFile(t, schema, recs)
	for _, c := range []struct {
		name string
		read func() (*EdgeTable, error)
	}{
		{"stream-named-arrow", func() (*EdgeTable, error) {
			return ReadEdges(writeTemp(t, "s.arrow", stream), ReadOptions{Allocator: mem})
		}},
		{"stream-from-reader-as-arrow", func() (*EdgeTable, error) {
			return ReadEdgesFrom(bytes.NewBuffer(stream), "s.feather", ReadOptions{Allocator: mem})
		}},
		{"file-on-stdin", func() (*EdgeTable, error) {
			return ReadEdgesFrom(bytes.NewBuffer(file), "-", ReadOptions{Allocator: mem})
		}},
		{"file-named-arrows", func() (*EdgeTable, error) {
			return ReadEdges(writeTemp(t, "f.arrows", file), ReadOptions{Allocator: mem})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.read()
			if err != nil {
				t.Fatal(err)
			}
			e.check(t, got, arrow.PrimitiveTypes.Int32, "float32")
		})
	}
}

// schemaMetadataLength finds, in an IPC schema table at pos of buf, the
// position of the length of its custom_metadata vector.
func schemaMetadataLength(t *testing.T, buf []byte, schemaPos uint64) uint64 {
	t.Helper()
	schema, ok := flatbuf(buf).table(schemaPos)
	if !ok {
		t.Fatal("no schema table")
	}
	p, present := schema.field(2)
	if !present {
		t.Fatal("schema has no custom metadata")
	}
	v, ok := flatbuf(buf).indirect(p)
	if !ok {
		t.Fatal("bad metadata offset")
	}
	return v
}

// TestReadHugeSchemaVector: a schema whose metadata vector claims two
// billion entries is refused before arrow-go allocates for them (it would
// exhaust memory, which no recover catches).
func TestReadHugeSchemaVector(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := randomIntIDs(newRand(10), arrow.PrimitiveTypes.Int64, 10, 5)
	_, recs := e.records(t, mem, [3]string{"src", "dst", "weight"}, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, nil, 10)
	defer releaseAll(recs)
	md := arrow.NewMetadata([]string{"origin"}, []string{"test"})
	schema := arrow.NewSchema(recs[0].Schema().Fields(), &md)
	for i, r := range recs { // the same columns under the schema with metadata
		recs[i] = array.NewRecordBatch(schema, r.Columns(), r.NumRows())
		r.Release()
	}
	const huge = 0x7ffffff0

	stream := writeIPCStream(t, schema, recs)
	meta := stream[8 : 8+binary.LittleEndian.Uint32(stream[4:])]
	msg, _ := rootTable(meta)
	header, _, _ := msg.subTable(2)
	binary.LittleEndian.PutUint32(meta[schemaMetadataLength(t, meta, header.pos):], huge)
	_, err := ReadEdgesFrom(bytes.NewReader(stream), "bad.arrows", ReadOptions{Allocator: mem})
	assertError(t, err, "bad.arrows", "schema metadata is corrupt")

	file := writeIPCFile(t, schema, recs)
	footerLen := binary.LittleEndian.Uint32(file[len(file)-10:])
	footer := file[len(file)-10-int(footerLen) : len(file)-10]
	root, _ := rootTable(footer)
	sch, _, _ := root.subTable(1)
	binary.LittleEndian.PutUint32(footer[schemaMetadataLength(t, footer, sch.pos):], huge)
	_, err = ReadEdges(writeTemp(t, "bad.arrow", file), ReadOptions{Allocator: mem})
	assertError(t, err, "bad.arrow", "schema metadata is corrupt")
	if !slices.Equal(file[:6], []byte(arrowFileMagic)) {
		t.Fatal("test file lost its magic")
	}
}
