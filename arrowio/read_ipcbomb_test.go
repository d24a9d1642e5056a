package arrowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// bombRows is the row count of the crafted inputs: each int64 column's
// compressed data buffer starts with the prefix 8·bombRows, which the tests
// replace.
const bombRows = 1000

// compressedEdges writes bombRows int64 edges as a zstd-compressed IPC
// stream or file.
func compressedEdges(t testing.TB, file bool) []byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "src", Type: arrow.PrimitiveTypes.Int64}, {Name: "dst", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range int64(bombRows) {
		b.Field(0).(*array.Int64Builder).Append(i % 7)
		b.Field(1).(*array.Int64Builder).Append((i + 1) % 7)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	opts := []ipc.Option{ipc.WithSchema(schema), ipc.WithZstd()}
	if file {
		w, err := ipc.NewFileWriter(&buf, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		w := ipc.NewWriter(&buf, opts...)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// declareDecoded replaces the uncompressed-length prefix of the data
// buffers of compressedEdges with size.
func declareDecoded(t testing.TB, data []byte, size uint64) []byte {
	t.Helper()
	out := bytes.Clone(data)
	var old, repl [8]byte
	binary.LittleEndian.PutUint64(old[:], 8*bombRows)
	binary.LittleEndian.PutUint64(repl[:], size)
	if bytes.Count(out, old[:]) != 2 {
		t.Fatalf("found the prefix %d times, want 2 (one per column)", bytes.Count(out, old[:]))
	}
	return bytes.ReplaceAll(out, old[:], repl[:])
}

// TestCompressedLengthBomb reads small IPC files and streams whose
// compressed buffers declare 0x8000000000 bytes (and more). arrow-go
// allocates the declared length before decompressing: without the check of
// read_ipccheck.go this test ends the test process with "fatal error:
// runtime: out of memory" in ipc.(*ipcSource).buffer. With it, each read
// fails with one line wrapping ErrDecodedTooLarge and allocates nothing.
func TestCompressedLengthBomb(t *testing.T) {
	for _, file := range []bool{false, true} {
		plain := compressedEdges(t, file)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		if tbl, err := ReadEdgesFrom(bytes.NewReader(plain), "ok", ReadOptions{Format: map[bool]string{false: "arrows", true: "arrow"}[file], Allocator: mem}); err != nil || len(tbl.Edges.Src) != bombRows {
			t.Fatalf("file=%v: the unmodified input: %v", file, err)
		}
		mem.AssertSize(t, 0)
		for _, c := range []struct {
			size  uint64
			limit int64
		}{
			{0x8000000000, 1 << 30},
			{1 << 47, 0}, // more than any machine's memory: the default bound
			{1<<63 - 1, 0},
		} {
			name := fmt.Sprintf("file=%v/declared=%#x/limit=%d", file, c.size, c.limit)
			data := declareDecoded(t, plain, c.size)
			if len(data) > 2048 {
				t.Fatalf("%s: crafted input of %d bytes; want a small one", name, len(data))
			}
			for _, format := range []string{"arrow", "arrows"} {
				_, err := ReadEdgesFrom(bytes.NewReader(data), "bomb", ReadOptions{Format: format, Allocator: mem, MaxDecodedBytes: c.limit})
				if !errors.Is(err, ErrDecodedTooLarge) || !strings.HasPrefix(err.Error(), "arrowio: bomb: ") || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s as %s: %v; want one line wrapping ErrDecodedTooLarge", name, format, err)
				}
				mem.AssertSize(t, 0)
			}
		}
	}
}

// TestDecodedBytesBound: a valid compressed input is refused when it
// decodes to more than MaxDecodedBytes, and read at the exact bound.
func TestDecodedBytesBound(t *testing.T) {
	for _, file := range []bool{false, true} {
		data := compressedEdges(t, file)
		format := map[bool]string{false: "arrows", true: "arrow"}[file]
		decoded := int64(2 * 8 * bombRows)
		if _, err := ReadEdgesFrom(bytes.NewReader(data), "x", ReadOptions{Format: format, MaxDecodedBytes: decoded - 1}); !errors.Is(err, ErrDecodedTooLarge) {
			t.Errorf("%s one byte under the bound: %v", format, err)
		}
		if _, err := ReadEdgesFrom(bytes.NewReader(data), "x", ReadOptions{Format: format, MaxDecodedBytes: decoded}); err != nil {
			t.Errorf("%s at the bound: %v", format, err)
		}
	}
}

// TestIPCMessageBytesCorrupt: buffers outside the body and negative
// declared lengths are refused, not handed to arrow-go.
func TestIPCMessageBytesCorrupt(t *testing.T) {
	data := compressedEdges(t, false)
	mr := ipc.NewMessageReader(bytes.NewReader(data))
	defer mr.Release()
	if _, err := mr.Message(); err != nil { // schema
		t.Fatal(err)
	}
	// The stream's second message: framing, metadata, body.
	metaLen := int(binary.LittleEndian.Uint32(data[4:]))
	pos := 8 + metaLen
	batchMetaLen := int(binary.LittleEndian.Uint32(data[pos+4:]))
	meta := data[pos+8 : pos+8+batchMetaLen]
	msg, err := mr.Message()
	if err != nil {
		t.Fatal(err)
	}
	bodyLen := int(msg.BodyLen())
	body := data[pos+8+batchMetaLen : pos+8+batchMetaLen+bodyLen]
	n, err := IPCMessageBytes(meta, body, -1)
	if err != nil || n != 2*8*bombRows {
		t.Fatalf("valid batch: %d bytes, %v; want %d", n, err, 2*8*bombRows)
	}
	if _, err := IPCMessageBytes(meta, body[:bodyLen/2], -1); err == nil || !strings.Contains(err.Error(), "outside the message body") {
		t.Errorf("truncated body: %v", err)
	}
	neg := declareDecoded(t, body, 1<<63+5)
	if _, err := IPCMessageBytes(meta, neg, -1); err == nil || !strings.Contains(err.Error(), "declares") {
		t.Errorf("negative declared length: %v", err)
	}
}

// TestWriteIPCBombSeeds keeps the fuzz seeds of testdata/fuzz/FuzzReadIPC
// in step with compressedEdges: with PATHCTL_WRITE_SEEDS=1 it rewrites them,
// otherwise it checks that they are there.
func TestWriteIPCBombSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzReadIPC")
	seeds := map[string][]byte{
		"zstd-stream-declares-128TiB": declareDecoded(t, compressedEdges(t, false), 1<<47),
		"zstd-file-declares-128TiB":   declareDecoded(t, compressedEdges(t, true), 1<<47),
	}
	for name, data := range seeds {
		path := filepath.Join(dir, name)
		text := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
		if os.Getenv("PATHCTL_WRITE_SEEDS") == "1" {
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("fuzz seed missing: %v (PATHCTL_WRITE_SEEDS=1 go test -run TestWriteIPCBombSeeds ./arrowio writes it)", err)
		}
	}
}

// TestStreamBodyAgainstInputSize: a stream message whose body is longer
// than what the input holds is refused before its body is allocated, when
// the input's size is known (a file, a byte slice).
func TestStreamBodyAgainstInputSize(t *testing.T) {
	data := compressedEdges(t, false)
	cut := data[:len(data)-64]
	path := writeTemp(t, "cut.arrows", cut)
	for _, read := range []func() (*EdgeTable, error){
		func() (*EdgeTable, error) { return ReadEdges(path, ReadOptions{}) },
		func() (*EdgeTable, error) { return ReadEdgesFrom(bytes.NewReader(cut), "cut.arrows", ReadOptions{}) },
	} {
		if _, err := read(); err == nil || !strings.Contains(err.Error(), "bytes left in the input") {
			t.Errorf("truncated stream: %v; want the body refused against the input's size", err)
		}
	}
	// Through a pipe the size is unknown: the body is read as it arrives
	// and the stream found truncated.
	if _, err := ReadEdgesFrom(io.MultiReader(bytes.NewReader(cut)), "cut.arrows", ReadOptions{}); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("truncated stream through a pipe: %v", err)
	}
}

// FuzzIPCMessageBytes: IPCMessageBytes parses untrusted flatbuffers; it
// returns a count or an error, never panics, and a count it returns is
// within the budget.
func FuzzIPCMessageBytes(f *testing.F) {
	data := compressedEdges(f, false)
	metaLen := int(binary.LittleEndian.Uint32(data[4:]))
	pos := 8 + metaLen
	batchMetaLen := int(binary.LittleEndian.Uint32(data[pos+4:]))
	meta := data[pos+8 : pos+8+batchMetaLen]
	body := data[pos+8+batchMetaLen:]
	f.Add(meta, body, int64(-1))
	f.Add(meta, declareDecoded(f, body, 0x8000000000), int64(4<<30))
	f.Add(data[8:8+metaLen], []byte{}, int64(0))
	f.Fuzz(func(t *testing.T, meta, body []byte, budget int64) {
		n, err := IPCMessageBytes(meta, body, budget)
		if err == nil && (n < 0 || (budget >= 0 && n > budget)) {
			t.Fatalf("%d decoded bytes under a budget of %d", n, budget)
		}
	})
}
