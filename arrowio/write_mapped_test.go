//go:build linux

package arrowio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sys/unix"

	"github.com/pathctl/pathctl/graph"
)

// newMemfd returns the /proc path of a new memfd, closed at the test's end.
func newMemfd(t testing.TB) (string, *os.File) {
	t.Helper()
	fd, err := unix.MemfdCreate("pathctl-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("no memfd here: %v", err)
	}
	f := os.NewFile(uintptr(fd), "memfd")
	t.Cleanup(func() { f.Close() })
	return fmt.Sprintf("/proc/self/fd/%d", fd), f
}

// mappedTestBlocks makes blocks of the given row counts over n vertices,
// seeded; nullRows says which blocks have unreachable pairs.
func mappedTestBlocks(seed uint64, n int, t graph.DistType, rows []int, nullRows []bool) []*graph.Block {
	rng := rand.New(rand.NewPCG(seed, 7))
	var blocks []*graph.Block
	src := 0
	for b, k := range rows {
		sources := make([]graph.VertexID, k)
		for i := range sources {
			sources[i] = graph.VertexID((src + i) % n)
		}
		src += k
		blk := graph.NewBlock(sources, n, t, false)
		fill := func(i int) (float64, bool) { // value, unreachable
			return float64(rng.IntN(1000)), nullRows[b] && rng.IntN(4) == 0
		}
		switch d := blk.Dist.(type) {
		case []int32:
			for i := range d {
				x, inf := fill(i)
				d[i] = int32(x)
				if inf {
					d[i] = graph.Infinity[int32]()
				}
			}
		case []int64:
			for i := range d {
				x, inf := fill(i)
				d[i] = int64(x)
				if inf {
					d[i] = graph.Infinity[int64]()
				}
			}
		case []float32:
			for i := range d {
				x, inf := fill(i)
				d[i] = float32(x) / 8
				if inf {
					d[i] = graph.Infinity[float32]()
				}
			}
		case []float64:
			for i := range d {
				x, inf := fill(i)
				d[i] = x / 8
				if inf {
					d[i] = graph.Infinity[float64]()
				}
			}
		}
		blocks = append(blocks, blk)
	}
	return blocks
}

// writeMatrix writes blocks as a matrix result to path with opt, as the
// CLI does, and returns the bytes written.
func writeMatrix(t *testing.T, path string, v *Vertices, dt graph.DistType, blocks []*graph.Block, opt WriteOptions) int64 {
	t.Helper()
	rb := NewResultBuilder(LayoutMatrix, v, dt, false, opt.Allocator)
	rb.SetMetadata(MetaAlgorithm, "test")
	w, err := CreateResult(path, rb.Schema(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, blk := range blocks {
		if err := rb.Block(blk, w.Write); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.BytesWritten()
}

// readIPCFile reads an IPC file's bytes with arrow-go, returning its
// schema and records (retained; release them).
func readIPCFile(t *testing.T, data []byte, mem memory.Allocator) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	r, err := ipc.NewMappedFileReader(data, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	return r.Schema(), recs
}

// TestMappedMatrixMatchesStreaming writes matrices through the one-batch
// writer into a memfd and through the streaming writer into a file, for
// every distance type, two id types and nulls in no block, the first, a
// later one and every one (the bitmap filled behind, and ahead): arrow-go
// must read the one-batch file as one record equal to the streamed ones
// joined, with the values on a page boundary of the file.
func TestMappedMatrixMatchesStreaming(t *testing.T) {
	const n = 13 // rows are not whole bytes of the bitmap
	rows := []int{3, 4, 1, 5}
	nullCases := map[string][]bool{
		"none":  {false, false, false, false},
		"first": {true, false, false, false},
		"later": {false, false, true, false},
		"every": {true, true, true, true},
	}
	ids := map[string]*Vertices{
		"int64": {Type: arrow.PrimitiveTypes.Int64, Ints: func() []int64 {
			x := make([]int64, n)
			for i := range x {
				x[i] = int64(i*7 - 20)
			}
			return x
		}()},
		"utf8": {Type: arrow.BinaryTypes.String, Strings: []string{"a", "bb", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "mmm"}},
	}
	dir := t.TempDir()
	seed := uint64(0)
	for idName, v := range ids {
		for _, dt := range []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64} {
			for nullName, nulls := range nullCases {
				seed++
				t.Run(fmt.Sprintf("%s/%s/%s", idName, dt, nullName), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					blocks := mappedTestBlocks(seed, n, dt, rows, nulls)
					total := 0
					for _, k := range rows {
						total += k
					}
					ref := filepath.Join(dir, fmt.Sprintf("ref%d.arrow", seed))
					writeMatrix(t, ref, v, dt, blocks, WriteOptions{Allocator: mem, MatrixRows: total})
					path, f := newMemfd(t)
					writes := []string{MatrixWritesMapped, MatrixWritesPositional, MatrixWritesPrefill}[seed%3]
					size := writeMatrix(t, path, v, dt, blocks, WriteOptions{Allocator: mem, MatrixRows: total, Format: "arrow", MatrixWrites: writes})
					fi, err := f.Stat()
					if err != nil || fi.Size() != size {
						t.Fatalf("memfd holds %d bytes (%v), writer says %d", fi.Size(), err, size)
					}
					data, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					refData, err := os.ReadFile(ref)
					if err != nil {
						t.Fatal(err)
					}
					schema, got := readIPCFile(t, data, mem)
					refSchema, want := readIPCFile(t, refData, mem)
					defer func() {
						for _, r := range append(got, want...) {
							r.Release()
						}
					}()
					if !schema.Equal(refSchema) || !schema.Metadata().Equal(refSchema.Metadata()) {
						t.Fatalf("schema %s, want %s", schema, refSchema)
					}
					if len(got) != 1 {
						t.Fatalf("%d record batches, want 1", len(got))
					}
					if !isTmpfs(ref) && len(want) != len(rows) {
						t.Fatalf("the streaming writer wrote %d batches, want %d", len(want), len(rows))
					}
					wantTable := array.NewTableFromRecords(refSchema, want)
					defer wantTable.Release()
					for c := range 2 {
						joined, err := array.Concatenate(wantTable.Column(c).Data().Chunks(), mem)
						if err != nil {
							t.Fatal(err)
						}
						if !array.Equal(got[0].Column(c), joined) {
							t.Errorf("column %s:\n got %v\nwant %v", schema.Field(c).Name, got[0].Column(c), joined)
						}
						joined.Release()
					}
					values := got[0].Column(1).(*array.FixedSizeList).ListValues().Data().Buffers()[1].Bytes()
					if off := uintptr(unsafe.Pointer(&values[0])) - uintptr(unsafe.Pointer(&data[0])); off%mappedValuesAlign != 0 {
						t.Errorf("values at file offset %d, not on a page", off)
					}
				})
			}
		}
	}
}

// isTmpfs reports whether path lies on a file system in memory, where the
// one-batch writer is used for files too.
func isTmpfs(path string) bool {
	var fs unix.Statfs_t
	return unix.Statfs(path, &fs) == nil && fs.Type == unix.TMPFS_MAGIC
}

// TestMappedMatrixOnTmpfs writes a matrix to a named file on tmpfs (the
// temporary file is mapped, then renamed): one batch, nothing else left in
// the directory.
func TestMappedMatrixOnTmpfs(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "pathctl-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.RemoveAll(dir)
	if !isTmpfs(dir) {
		t.Skip("/dev/shm is not tmpfs here")
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	v := &Vertices{Type: arrow.PrimitiveTypes.Int32, Ints: []int64{1, 2, 3, 4, 5, 6, 7}}
	blocks := mappedTestBlocks(3, 7, graph.DistInt32, []int{4, 3}, []bool{false, true})
	path := filepath.Join(dir, "m.arrow")
	writeMatrix(t, path, v, graph.DistInt32, blocks, WriteOptions{Allocator: mem, MatrixRows: 7})
	dirHoldsOnly(t, dir, "m.arrow")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := readIPCFile(t, data, mem)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(recs) != 1 || recs[0].NumRows() != 7 || recs[0].Column(1).(*array.FixedSizeList).ListValues().NullN() == 0 {
		t.Fatalf("%d batches; want one of 7 rows with nulls", len(recs))
	}
}

// TestMappedMatrixFailures: a run that aborts, and one that writes fewer
// or more rows than it sized the file for, leave an empty memfd.
func TestMappedMatrixFailures(t *testing.T) {
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{1, 2, 3, 4, 5}}
	blocks := mappedTestBlocks(5, 5, graph.DistInt32, []int{2, 3}, []bool{true, false})
	for _, c := range []struct {
		name  string
		rows  int
		write int // blocks written
		abort bool
	}{
		{"abort", 5, 1, true},
		{"short", 5, 1, false},
		{"long", 4, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path, f := newMemfd(t)
			rb := NewResultBuilder(LayoutMatrix, v, graph.DistInt32, false, mem)
			w, err := CreateResult(path, rb.Schema(), WriteOptions{Allocator: mem, MatrixRows: c.rows, Format: "arrow"})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := w.rw.(*mappedMatrix); !ok {
				t.Fatalf("a memfd output got %T, want the one-batch writer", w.rw)
			}
			var werr error
			for _, blk := range blocks[:c.write] {
				if werr = rb.Block(blk, w.Write); werr != nil {
					break
				}
			}
			switch {
			case c.abort:
				if err := w.Abort(); err != nil {
					t.Fatal(err)
				}
			case werr != nil:
				w.Abort()
			default:
				if err := w.Close(); err == nil {
					t.Fatal("Close of a matrix with the wrong row count succeeded")
				}
			}
			if c.name == "long" && werr == nil {
				t.Fatal("writing past the sized rows succeeded")
			}
			if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
				t.Fatalf("the memfd holds %d bytes after a failed run (%v), want 0", fi.Size(), err)
			}
		})
	}
}

// TestMappedMatrixOnlyWhereItFits: without MatrixRows, for a compressed
// or a stream format, for another layout, and on a file on a disk, the
// streaming writer is used.
func TestMappedMatrixOnlyWhereItFits(t *testing.T) {
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{1, 2, 3}}
	matrix := ResultSchema(LayoutMatrix, v, graph.DistInt32, false)
	pairs := ResultSchema(LayoutPairs, v, graph.DistInt32, false)
	for _, c := range []struct {
		name   string
		schema *arrow.Schema
		opt    WriteOptions
		mapped bool
	}{
		{"one batch", matrix, WriteOptions{MatrixRows: 3, Format: "arrow"}, true},
		{"rows unknown", matrix, WriteOptions{Format: "arrow"}, false},
		{"zstd", matrix, WriteOptions{MatrixRows: 3, Format: "arrow", Compression: CompressionZstd}, false},
		{"stream", matrix, WriteOptions{MatrixRows: 3, Format: "arrows"}, false},
		{"parquet", matrix, WriteOptions{MatrixRows: 3, Format: "parquet"}, false},
		{"pairs", pairs, WriteOptions{MatrixRows: 3, Format: "arrow"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, _ := newMemfd(t)
			w, err := CreateResult(path, c.schema, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			if _, ok := w.rw.(*mappedMatrix); ok != c.mapped {
				t.Fatalf("one-batch writer: %v, want %v", ok, c.mapped)
			}
		})
	}
	dir := t.TempDir()
	if isTmpfs(dir) {
		t.Skip("the test's directory is on tmpfs")
	}
	w, err := CreateResult(filepath.Join(dir, "m.arrow"), matrix, WriteOptions{MatrixRows: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, ok := w.rw.(*mappedMatrix); ok {
		t.Fatal("a file on a disk got the one-batch writer")
	}
}

// memfdBenchRecords is an int32 matrix of 8,192 rows × 8,192 (256 MiB)
// in records of 512 rows, as the producer builds them, unreachable pairs
// in every 97th cell with nulls; release them when done.
func memfdBenchRecords(b *testing.B, nulls bool) (*ResultBuilder, []arrow.RecordBatch) {
	const n, rows = 8192, 512
	ints := make([]int64, n)
	for i := range ints {
		ints[i] = int64(i)
	}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ints}
	rb := NewResultBuilder(LayoutMatrix, v, graph.DistInt32, false, nil)
	var recs []arrow.RecordBatch
	for lo := 0; lo < n; lo += rows {
		sources := make([]graph.VertexID, rows)
		for i := range sources {
			sources[i] = graph.VertexID(lo + i)
		}
		blk := graph.NewBlock(sources, n, graph.DistInt32, false)
		d := graph.DistOf[int32](blk)
		for i := range d {
			d[i] = int32(i % 1000)
			if nulls && i%97 == 0 {
				d[i] = graph.Infinity[int32]()
			}
		}
		if err := rb.Block(blk, func(r arrow.RecordBatch) error { r.Retain(); recs = append(recs, r); return nil }); err != nil {
			b.Fatal(err)
		}
	}
	return rb, recs
}

// writeMemfdMatrix writes recs into a new memfd the way writes says
// ("stream": the streaming writer), sleeping gap before each record (a
// device computing the next block), and returns the time spent in Write
// and Close.
func writeMemfdMatrix(b *testing.B, rb *ResultBuilder, recs []arrow.RecordBatch, writes string, gap time.Duration) time.Duration {
	fd, err := unix.MemfdCreate("bench", unix.MFD_CLOEXEC)
	if err != nil {
		b.Skip(err)
	}
	defer unix.Close(fd)
	opt := WriteOptions{Format: "arrow"}
	if writes != "stream" {
		for _, r := range recs {
			opt.MatrixRows += int(r.NumRows())
		}
		opt.MatrixWrites = writes
	}
	w, err := CreateResult(fmt.Sprintf("/proc/self/fd/%d", fd), rb.Schema(), opt)
	if err != nil {
		b.Fatal(err)
	}
	var in time.Duration
	for _, r := range recs {
		time.Sleep(gap)
		t0 := time.Now()
		if err := w.Write(r); err != nil {
			b.Fatal(err)
		}
		in += time.Since(t0)
	}
	t0 := time.Now()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return in + time.Since(t0)
}

var matrixWriteModes = []string{"stream", MatrixWritesMapped, MatrixWritesPrefill, MatrixWritesPositional}

// BenchmarkMatrixToMemfd writes a 256 MiB int32 matrix (memfdBenchRecords)
// into a memfd through the streaming writer and the one-batch writer
// (copies into the mapping, the same with its pages populated ahead, and
// positioned writes), with and without unreachable pairs, back to back:
// the part of `pathctl run --layout matrix -o /dev/fd/N` after the engine.
func BenchmarkMatrixToMemfd(b *testing.B) {
	for _, nulls := range []bool{false, true} {
		rb, recs := memfdBenchRecords(b, nulls)
		for _, writes := range matrixWriteModes {
			b.Run(fmt.Sprintf("nulls=%v/%s", nulls, writes), func(b *testing.B) {
				for b.Loop() {
					writeMemfdMatrix(b, rb, recs, writes, 0)
				}
				b.ReportMetric(float64(8192*8192*4)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
		for _, r := range recs {
			r.Release()
		}
	}
}

// BenchmarkMatrixBesideCompute writes the same matrix with a pause of 40 ms
// before each of its 16 records, as a GPU run hands the writer a block
// while the device computes the next: writer-ms is the time spent in Write
// and Close, the part on the run's path (prefill moves the page
// allocations into the pauses).
func BenchmarkMatrixBesideCompute(b *testing.B) {
	rb, recs := memfdBenchRecords(b, true)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, writes := range matrixWriteModes {
		b.Run(writes, func(b *testing.B) {
			var in time.Duration
			for b.Loop() {
				in += writeMemfdMatrix(b, rb, recs, writes, 40*time.Millisecond)
			}
			b.ReportMetric(float64(in.Milliseconds())/float64(b.N), "writer-ms")
		})
	}
}

// TestParallelBitsPieces: copying and setting bits in pieces cut at
// multiples of a small piece size, side by side, gives the bitmap one
// serial copy gives, bits outside the range untouched (seeded).
func TestParallelBitsPieces(t *testing.T) {
	seed := uint64(11)
	rng := rand.New(rand.NewPCG(seed, 1))
	for trial := range 200 {
		size := 1 + rng.IntN(64)
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(rng.IntN(256))
		}
		dst := make([]byte, size+8)
		for i := range dst {
			dst[i] = byte(rng.IntN(256))
		}
		from := rng.IntN(8 * size)
		count := rng.IntN(8*size - from + 1)
		at := rng.IntN(8*len(dst) - count + 1)
		piece := 8 * (1 + rng.IntN(3))
		want := append([]byte(nil), dst...)
		bitutil.CopyBitmap(src, from, count, want, at)
		got := append([]byte(nil), dst...)
		if err := parallelCopyBits(got, at, src, from, count, piece); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d trial %d: copy of %d bits from %d to %d in pieces of %d:\n got %08b\nwant %08b", seed, trial, count, from, at, piece, got, want)
		}
		bitutil.SetBitsTo(want, int64(at), int64(count), true)
		if err := parallelSetBits(got, at, count, piece); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d trial %d: setting %d bits at %d in pieces of %d:\n got %08b\nwant %08b", seed, trial, count, at, piece, got, want)
		}
	}
}

// TestMappedFaultIsAnError: a write into a mapping past the end of its
// file (what a file system out of room does to a mapped write: SIGBUS)
// comes back as an error, not a crash.
func TestMappedFaultIsAnError(t *testing.T) {
	_, f := newMemfd(t)
	const size = 1 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	m, err := mapFile(f, size)
	if err != nil {
		t.Fatal(err)
	}
	defer unmapFile(m)
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	src := make([]byte, size)
	err = parallelCopy(m, src, 64<<10)
	if err == nil {
		t.Fatal("copying into a mapping past its file's end succeeded")
	}
	t.Logf("copy: %v", err)
	err = guardFaults(func() { m[0] = 1 })
	if err == nil {
		t.Fatal("writing past the file's end succeeded")
	}
	t.Logf("write: %v", err)
}

// bytesAsDist is b as a distance slice of type t.
func bytesAsDist(b []byte, t graph.DistType) any {
	switch t {
	case graph.DistInt64:
		return arrow.Int64Traits.CastFromBytes(b)
	case graph.DistFloat32:
		return arrow.Float32Traits.CastFromBytes(b)
	case graph.DistFloat64:
		return arrow.Float64Traits.CastFromBytes(b)
	}
	return arrow.Int32Traits.CastFromBytes(b)
}
