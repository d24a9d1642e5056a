package arrowio

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strconv"
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

// TestReadRichSchemas: the schema check accepts what writers produce around
// the edge columns: nested, dictionary, union and timestamp columns, and
// metadata on the schema and on fields.
func TestReadRichSchemas(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fieldMeta := arrow.NewMetadata([]string{"unit", "note"}, []string{"km", "x"})
	schemaMeta := arrow.NewMetadata([]string{"origin"}, []string{"test"})
	extra := []arrow.Field{
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true, Metadata: fieldMeta},
		{Name: "pos", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}, arrow.Field{Name: "y", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)}), Nullable: true},
		{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "kind", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}, Nullable: true},
	}
	union := arrow.Field{Name: "u", Type: arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, []arrow.UnionTypeCode{5, 9}), Nullable: true}
	fields := append([]arrow.Field{
		{Name: "src", Type: arrow.PrimitiveTypes.Int64, Metadata: fieldMeta},
		{Name: "dst", Type: arrow.PrimitiveTypes.Int64},
		{Name: "weight", Type: arrow.PrimitiveTypes.Float64},
	}, extra...)
	ipcSchema := arrow.NewSchema(append(slices.Clone(fields), union), &schemaMeta)
	pqSchema := arrow.NewSchema(fields, &schemaMeta) // Parquet has no unions
	e := logicalEdges{src: []string{"3", "1", "2"}, dst: []string{"1", "2", "3"}, weights: []float64{0.5, 1, 2}}
	for _, c := range []struct {
		enc    string
		schema *arrow.Schema
	}{{"ipc-file", ipcSchema}, {"ipc-stream", ipcSchema}, {"parquet", pqSchema}} {
		t.Run(c.enc, func(t *testing.T) {
			b := array.NewRecordBuilder(mem, c.schema)
			defer b.Release()
			for i := range e.src {
				s, _ := strconv.ParseInt(e.src[i], 10, 64)
				d, _ := strconv.ParseInt(e.dst[i], 10, 64)
				b.Field(0).(*array.Int64Builder).Append(s)
				b.Field(1).(*array.Int64Builder).Append(d)
				b.Field(2).(*array.Float64Builder).Append(e.weights[i])
				for j := 3; j < len(c.schema.Fields()); j++ {
					b.Field(j).AppendNull()
				}
			}
			rec := b.NewRecordBatch()
			defer rec.Release()
			var data []byte
			var ext string
			for _, enc := range encodings {
				if enc.name == c.enc {
					data, ext = enc.data(t, c.schema, []arrow.RecordBatch{rec}), enc.ext
				}
			}
			got, err := ReadEdgesFrom(bytes.NewReader(data), "rich"+ext, ReadOptions{Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			e.check(t, got, arrow.PrimitiveTypes.Int64, "float64")
		})
	}
}
