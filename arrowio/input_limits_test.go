package arrowio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestDuplicateColumnsRefused(t *testing.T) {
	for _, c := range []struct{ name, body, col string }{
		{"src.csv", "src,dst,src\n1,2,3\n", `"src"`},
		{"dst.tsv", "dst\tsrc\tdst\n1\t2\t3\n", `"dst"`},
		{"weight.csv", "src,dst,weight,weight\n1,2,3,4\n", `"weight"`},
	} {
		_, err := ReadEdgesFrom(strings.NewReader(c.body), c.name, ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.col) || !strings.Contains(err.Error(), "appears 2 times") {
			t.Errorf("%s: err = %v, want one naming column %s twice", c.name, err, c.col)
		}
	}
	// --unweighted ignores the weight columns, duplicates included.
	if _, err := ReadEdgesFrom(strings.NewReader("src,dst,weight,weight\n1,2,3,4\n"), "w.csv", ReadOptions{Unweighted: true}); err != nil {
		t.Errorf("unweighted read of duplicate weights: %v", err)
	}

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for _, names := range [][]string{{"src", "dst", "src"}, {"src", "dst", "weight", "weight"}} {
		var cols []column
		for _, n := range names {
			cols = append(cols, column{name: n, dt: arrow.PrimitiveTypes.Int64, json: "[1, 2]"})
		}
		schema, recs := badRecords(t, mem, cols, 2)
		rr, err := array.NewRecordReader(schema, recs)
		if err != nil {
			t.Fatal(err)
		}
		data := writeIPCStream(t, schema, recs)
		rr.Release()
		releaseAll(recs)
		_, err = ReadEdgesFrom(bytes.NewReader(data), "dup.arrows", ReadOptions{Allocator: mem})
		want := `"` + names[len(names)-1] + `" appears 2 times`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q", names, err, want)
		}
	}
}

func TestDIMACSHeaderBomb(t *testing.T) {
	// 10^8 vertices from a 30-byte header: refused before any allocation.
	_, err := ReadEdgesFrom(strings.NewReader("p sp 100000000 1\na 1 2 1\n"), "bomb.gr", ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "--max-vertices") || !strings.Contains(err.Error(), "100000000") {
		t.Fatalf("err = %v, want a refusal naming the count and --max-vertices", err)
	}
	_, err = ReadEdgesFrom(strings.NewReader("p sp 5000 1\na 1 2 1\n"), "small.gr", ReadOptions{MaxVertices: 1000})
	if err == nil || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("err = %v, want the limit of 1000 named", err)
	}
	tbl, err := ReadEdgesFrom(strings.NewReader("p sp 5000 1\na 1 2 1\n"), "small.gr", ReadOptions{MaxVertices: 5000})
	if err != nil || tbl.Vertices.Len() != 5000 {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestTextLineLimit(t *testing.T) {
	long := "src,dst\n1,2\n3," + strings.Repeat("9", 2*maxTextLine) + "\n"
	_, err := ReadEdgesFrom(strings.NewReader(long), "long.csv", ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "line 3 is longer than") || !strings.HasPrefix(err.Error(), "arrowio: long.csv: ") {
		t.Fatalf("err = %v, want line 3 refused as too long", err)
	}
	_, err = ReadEdgesFrom(strings.NewReader("p sp 2 1\nc "+strings.Repeat("x", 2*maxDIMACSLine)+"\na 1 2 1\n"), "long.gr", ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "line 2 is longer than") {
		t.Fatalf("err = %v, want line 2 refused as too long", err)
	}
	// Many lines of moderate length are fine: the limit is per line.
	var b strings.Builder
	b.WriteString("src,dst\n")
	id := strings.Repeat("a", 1000)
	for i := range 3000 {
		b.WriteString(id + "x," + id + string(rune('a'+i%26)) + "\n")
	}
	if _, err := ReadEdgesFrom(strings.NewReader(b.String()), "many.csv", ReadOptions{}); err != nil {
		t.Fatal(err)
	}
}

// endlessRows is a text input that repeats row until deadline, then ends.
type endlessRows struct {
	head     string
	row      []byte
	deadline time.Time
	buf      []byte
}

func (e *endlessRows) Read(p []byte) (int, error) {
	if e.head != "" {
		n := copy(p, e.head)
		e.head = e.head[n:]
		return n, nil
	}
	if time.Now().After(e.deadline) {
		return 0, io.EOF
	}
	if len(e.buf) == 0 {
		e.buf = bytes.Repeat(e.row, 4096)
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	return n, nil
}

// endlessBatches is a RecordReader that repeats one batch until deadline.
type endlessBatches struct {
	rec      arrow.RecordBatch
	deadline time.Time
}

func (e *endlessBatches) Retain()                        {}
func (e *endlessBatches) Release()                       {}
func (e *endlessBatches) Schema() *arrow.Schema          { return e.rec.Schema() }
func (e *endlessBatches) Next() bool                     { return time.Now().Before(e.deadline) }
func (e *endlessBatches) RecordBatch() arrow.RecordBatch { return e.rec }
func (e *endlessBatches) Record() arrow.RecordBatch      { return e.rec }
func (e *endlessBatches) Err() error                     { return nil }

// TestReadStopsOnCancel cancels reads of inputs that would last 20 s and
// wants them to end within half a second of the cancel.
func TestReadStopsOnCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, recs := badRecords(t, mem, []column{
		{name: "src", dt: arrow.PrimitiveTypes.Int64, json: "[1, 2, 3, 4]"},
		{name: "dst", dt: arrow.PrimitiveTypes.Int64, json: "[2, 3, 4, 1]"},
	}, 4)
	defer releaseAll(recs)
	for _, c := range []struct {
		name string
		read func(ctx context.Context, deadline time.Time) error
	}{
		{"csv", func(ctx context.Context, deadline time.Time) error {
			_, err := ReadEdgesFrom(&endlessRows{head: "src,dst\n", row: []byte("1,2\n"), deadline: deadline}, "endless.csv", ReadOptions{Context: ctx})
			return err
		}},
		{"gr", func(ctx context.Context, deadline time.Time) error {
			_, err := ReadEdgesFrom(&endlessRows{head: "p sp 2 0\n", row: []byte("c comment\n"), deadline: deadline}, "endless.gr", ReadOptions{Context: ctx})
			return err
		}},
		{"records", func(ctx context.Context, deadline time.Time) error {
			_, err := EdgesFromRecords(&endlessBatches{rec: recs[0], deadline: deadline}, "endless", ReadOptions{Context: ctx, Allocator: mem})
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- c.read(ctx, time.Now().Add(20*time.Second)) }()
			time.Sleep(100 * time.Millisecond)
			cancel()
			start := time.Now()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
				if d := time.Since(start); d > 500*time.Millisecond {
					t.Fatalf("read ended %s after the cancel", d)
				}
			case <-time.After(2 * time.Second):
				t.Error("read still running 2 s after the cancel")
				<-done
			}
		})
	}
}

// TestLineLimitReader checks the limit and the line number on chunks of
// every size, smaller and larger than the limit.
func TestLineLimitReader(t *testing.T) {
	const limit = 10
	input := "short\n" + "0123456789\n" + "x\n" + strings.Repeat("y", limit+1) + "\nz\n"
	for _, chunk := range []int{1, 3, 7, 11, 16, 64} {
		l := &lineLimitReader{r: &chunkReader{s: input, n: chunk}, limit: limit}
		_, err := io.ReadAll(l)
		var long *lineTooLongError
		if !errors.As(err, &long) || long.line != 4 {
			t.Errorf("chunks of %d: err = %v, want line 4 too long", chunk, err)
		}
		ok := &lineLimitReader{r: &chunkReader{s: "short\n0123456789\nx\n0123456789", n: chunk}, limit: limit}
		if _, err := io.ReadAll(ok); err != nil {
			t.Errorf("chunks of %d: lines at the limit: %v", chunk, err)
		}
	}
}

// chunkReader returns s n bytes at a time.
type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}
