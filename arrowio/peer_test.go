//go:build linux

package arrowio

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sys/unix"

	"github.com/pathctl/pathctl/graph"
)

// testPeer is the reading side of a result peer, played by this process:
// it answers "size" and "grow" with anonymous mappings of its own (or as
// answer says), and records what the writer said.
type testPeer struct {
	conn    *os.File // the writer's end, for WriteOptions.ResultPeer
	lines   chan []string
	mapping []byte
	// values, when apart is set, receives the values (the answer names
	// it); valuesOff is where they lie in the file.
	apart     bool
	values    []byte
	valuesOff int64
	asked     []string // the requests, in order
	done      int64    // the size "done" gave; -1 without one
	why       string   // what "fallback" gave
}

// newTestPeer starts a peer; answer, when not nil, replaces the answer to
// request i (the reply line without its newline).
func newTestPeer(t testing.TB, answer func(i int, p *testPeer) string) *testPeer {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours := os.NewFile(uintptr(fds[0]), "peer")
	p := &testPeer{conn: os.NewFile(uintptr(fds[1]), "writer"), done: -1, lines: make(chan []string, 1)}
	t.Cleanup(func() { p.conn.Close() })
	go func() {
		defer ours.Close()
		in := bufio.NewReader(ours)
		for i := 0; ; i++ {
			line, err := in.ReadString('\n')
			if err != nil {
				close(p.lines)
				return
			}
			f := strings.Fields(line)
			p.asked = append(p.asked, strings.Join(f, " "))
			switch f[0] {
			case "size", "grow":
				n, _ := strconv.ParseInt(f[1], 10, 64)
				if f[0] == "size" {
					p.mapping, err = unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
				} else {
					var grown []byte
					grown, err = unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
					copy(grown, p.mapping)
					_ = unix.Munmap(p.mapping)
					p.mapping = grown
				}
				reply := fmt.Sprintf("addr %d %x", os.Getpid(), uintptr(unsafe.Pointer(&p.mapping[0])))
				if p.apart && len(f) == 4 {
					p.valuesOff, _ = strconv.ParseInt(f[2], 10, 64)
					vlen, _ := strconv.Atoi(f[3])
					if p.values == nil {
						p.values = make([]byte, vlen)
					}
					reply += fmt.Sprintf(" %x", uintptr(unsafe.Pointer(&p.values[0])))
				}
				if err != nil {
					reply = "no"
				}
				if answer != nil {
					if a := answer(i, p); a != "" {
						reply = a
					}
				}
				fmt.Fprintf(ours, "%s\n", reply)
			case "done":
				p.done, _ = strconv.ParseInt(f[1], 10, 64)
			case "fallback":
				p.why = strings.Join(f[1:], " ")
			}
		}
	}()
	return p
}

// goneTestPeer is a peer whose end of the socket is closed before the
// writer asks it anything.
func goneTestPeer(t *testing.T) *testPeer {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fds[0])
	p := &testPeer{conn: os.NewFile(uintptr(fds[1]), "writer"), done: -1, lines: make(chan []string)}
	close(p.lines)
	t.Cleanup(func() { p.conn.Close() })
	return p
}

// wait waits for the writer's end of the exchange.
func (p *testPeer) wait() {
	for range p.lines {
	}
}

// writeToPeer writes blocks as the CLI does, with peer as the result peer
// and a memfd as the file, then closes the writer's end of the socket (as
// the process's exit does); it returns the memfd's bytes.
func writeToPeer(t *testing.T, p *testPeer, v *Vertices, dt graph.DistType, blocks []*graph.Block, writes string) []byte {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	total := 0
	for _, b := range blocks {
		total += len(b.Sources)
	}
	path, f := newMemfd(t)
	writeMatrix(t, path, v, dt, blocks, WriteOptions{Allocator: mem, MatrixRows: total, Format: "arrow", MatrixWrites: writes, ResultPeer: p.conn})
	p.conn.Close()
	p.wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_ = f
	return data
}

// TestPeerMatrixMatchesFile writes matrices into a peer's memory and into
// a memfd: the peer's first "done" bytes must be the memfd's file, byte
// for byte, for every distance type, with and without nulls, both ways
// of writing (one stream, every core); the memfd stays empty.
func TestPeerMatrixMatchesFile(t *testing.T) {
	const n = 13
	rows := []int{3, 4, 1, 5}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29}}
	seed := uint64(40)
	for _, dt := range []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64} {
		for _, nulls := range [][]bool{{false, false, false, false}, {false, true, false, true}, {true, false, false, true}} {
			for _, writes := range []string{MatrixWritesPositional, MatrixWritesPrefill} {
				seed++
				t.Run(fmt.Sprintf("%s/nulls=%v/%s", dt, nulls, writes), func(t *testing.T) {
					blocks := mappedTestBlocks(seed, n, dt, rows, nulls)
					path, _ := newMemfd(t)
					writeMatrix(t, path, v, dt, blocks, WriteOptions{MatrixRows: 13, Format: "arrow", MatrixWrites: writes})
					want, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					p := newTestPeer(t, nil)
					left := writeToPeer(t, p, v, dt, blocks, writes)
					if len(left) != 0 {
						t.Errorf("the memfd holds %d bytes, want none", len(left))
					}
					if p.done != int64(len(want)) {
						t.Fatalf("done %d (requests %q, fallback %q), want %d", p.done, p.asked, p.why, len(want))
					}
					if got := p.mapping[:p.done]; !bytes.Equal(got, want) {
						t.Fatalf("the peer's %d bytes differ from the file's", len(got))
					}
					if len(p.asked) != 2 || !strings.HasPrefix(p.asked[0], "size ") {
						t.Errorf("lines %q, want size then done", p.asked)
					}
				})
			}
		}
	}
}

// TestPeerMatrixValuesApart has the peer name an array of its own for the
// values (Python's out=): they land there, the rest of the file in the
// mapping, whose values stay untouched; together they are the file.
func TestPeerMatrixValuesApart(t *testing.T) {
	const n = 11
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	for _, dt := range []graph.DistType{graph.DistInt32, graph.DistFloat64} {
		blocks := mappedTestBlocks(9, n, dt, []int{4, 7}, []bool{false, true})
		path, _ := newMemfd(t)
		writeMatrix(t, path, v, dt, blocks, WriteOptions{MatrixRows: n, Format: "arrow"})
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p := newTestPeer(t, nil)
		p.apart = true
		writeToPeer(t, p, v, dt, blocks, MatrixWritesPrefill)
		if p.done != int64(len(want)) {
			t.Fatalf("%s: done %d (%q), want %d", dt, p.done, p.asked, len(want))
		}
		got := p.mapping[:p.done]
		values := got[p.valuesOff : p.valuesOff+int64(len(p.values))]
		if !bytes.Equal(values, make([]byte, len(values))) {
			t.Errorf("%s: values were written into the mapping too", dt)
		}
		copy(values, p.values)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the mapping and the values apart differ from the file", dt)
		}
	}
}

// TestPeerMatrixGrows gives the sources ids long enough that the source
// column outgrows the room first asked for: the writer asks the peer to
// grow, and the bytes still match the file's.
func TestPeerMatrixGrows(t *testing.T) {
	const n = 6
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strings.Repeat(string(rune('a'+i)), 300<<10)
	}
	v := &Vertices{Type: arrow.BinaryTypes.String, Strings: ids}
	blocks := mappedTestBlocks(3, n, graph.DistInt32, []int{2, 4}, []bool{true, false})
	path, _ := newMemfd(t)
	writeMatrix(t, path, v, graph.DistInt32, blocks, WriteOptions{MatrixRows: n, Format: "arrow"})
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := newTestPeer(t, nil)
	writeToPeer(t, p, v, graph.DistInt32, blocks, MatrixWritesPrefill)
	if len(p.asked) != 3 || !strings.HasPrefix(p.asked[1], "grow ") {
		t.Fatalf("lines %q, want size, grow, done", p.asked)
	}
	if p.done != int64(len(want)) || !bytes.Equal(p.mapping[:p.done], want) {
		t.Fatalf("done %d, want the file's %d bytes", p.done, len(want))
	}
}

// TestPeerFallsBackToTheFile: a peer that refuses, answers nonsense, names
// memory this process cannot write, or is gone, gets "fallback" (where it
// still listens) and the file gets the whole matrix.
func TestPeerFallsBackToTheFile(t *testing.T) {
	const n = 9
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}}
	blocks := mappedTestBlocks(5, n, graph.DistFloat64, []int{4, 5}, []bool{false, true})
	path, _ := newMemfd(t)
	writeMatrix(t, path, v, graph.DistFloat64, blocks, WriteOptions{MatrixRows: n, Format: "arrow"})
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, answer := range map[string]string{
		"refused":   "no",
		"nonsense":  "addr x y",
		"unmapped":  fmt.Sprintf("addr %d %x", os.Getpid(), 4096), // the zero page: EFAULT
		"no answer": "close",
	} {
		t.Run(name, func(t *testing.T) {
			var p *testPeer
			if answer == "close" {
				p = goneTestPeer(t)
			} else {
				p = newTestPeer(t, func(int, *testPeer) string { return answer })
			}
			got := writeToPeer(t, p, v, graph.DistFloat64, blocks, MatrixWritesPrefill)
			if !bytes.Equal(got, want) {
				t.Fatalf("the file holds %d bytes unlike the %d written without a peer", len(got), len(want))
			}
			if p.done != -1 {
				t.Errorf("the peer was told done %d", p.done)
			}
			if answer != "close" && p.why == "" {
				t.Errorf("the peer was not told why (requests %q)", p.asked)
			}
		})
	}
}

// BenchmarkPeerWrite writes 4 GiB into an anonymous mapping (huge pages
// asked for) of this process through process_vm_writev, as the matrix
// writer writes a peer's: from records of src bytes cycled (64 MiB is a
// GPU run's record), every core, chunk bytes a call; and with copy, the
// same bytes copied by the cores straight into a mapping of their own.
func BenchmarkPeerWrite(b *testing.B) {
	const total = 4 << 30
	for _, c := range []struct {
		name       string
		src, chunk int
		copy       bool
	}{
		{"records=64MiB/chunk=4MiB", 64 << 20, 4 << 20, false},
		{"records=64MiB/chunk=16MiB", 64 << 20, 16 << 20, false},
		{"records=8MiB/chunk=4MiB", 8 << 20, 4 << 20, false},
		{"records=64MiB/copy", 64 << 20, 4 << 20, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := make([]byte, c.src)
			for i := range src {
				src[i] = byte(i)
			}
			b.SetBytes(total)
			for range b.N {
				dst, err := unix.Mmap(-1, 0, total, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
				if err != nil {
					b.Skip(err)
				}
				_ = unix.Madvise(dst, unix.MADV_HUGEPAGE)
				p := &peerMemory{pid: os.Getpid(), base: uintptr(unsafe.Pointer(&dst[0])), size: total}
				for off := 0; off < total; off += c.src {
					var err error
					if c.copy {
						err = parallelRanges(c.src, c.chunk, func(lo, hi int) error { copy(dst[off+lo:off+hi], src[lo:hi]); return nil })
					} else {
						err = p.parallelWriteAt(src, int64(off), c.chunk)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				_ = unix.Munmap(dst)
			}
		})
	}
}

// TestPeerWriteFailsMidway has the peer's memory past its first page
// become unwritable after the answer: the writes fail, the error
// comes back from Write or Close (not a panic, not a hang), the peer is
// told nothing is done, and every record is released.
func TestPeerWriteFailsMidway(t *testing.T) {
	const n = 700 // rows of 2.8 KB: several chunks' worth over the blocks
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: make([]int64, n)}
	for i := range v.Ints {
		v.Ints[i] = int64(i)
	}
	p := newTestPeer(t, func(i int, p *testPeer) string {
		if err := unix.Mprotect(p.mapping[4096:len(p.mapping)/4096*4096], unix.PROT_READ); err != nil {
			t.Error(err)
		}
		return ""
	})
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	blocks := mappedTestBlocks(3, n, graph.DistInt32, []int{300, 300, 100}, []bool{true, false, true})
	path, _ := newMemfd(t)
	rb := NewResultBuilder(LayoutMatrix, v, graph.DistInt32, false, mem)
	w, err := CreateResult(path, rb.Schema(), WriteOptions{Allocator: mem, MatrixRows: n, Format: "arrow", MatrixWrites: MatrixWritesPrefill, ResultPeer: p.conn})
	if err != nil {
		t.Fatal(err)
	}
	if !w.InPeer() {
		t.Fatal("the writer did not take the peer")
	}
	for _, blk := range blocks {
		if err = rb.Block(blk, w.Write); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Close()
	} else {
		w.Abort()
	}
	if err == nil || !strings.Contains(err.Error(), "result reader's memory") {
		t.Fatalf("got %v, want the failed write into the reader's memory", err)
	}
	p.conn.Close()
	p.wait()
	if p.done != -1 {
		t.Errorf("the peer was told done %d", p.done)
	}
}

// TestPeerMatrixLargeBitmap writes a matrix whose bitmap spans many pages
// (the shadow's pages are released once their bytes are sent): the
// peer's bytes are still the file's.
func TestPeerMatrixLargeBitmap(t *testing.T) {
	const n = 999 // rows are not whole bytes, nor whole pages, of the bitmap
	rows := []int{150, 171, 1, 177, 500}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: make([]int64, n)}
	for i := range v.Ints {
		v.Ints[i] = int64(3 * i)
	}
	for _, nulls := range [][]bool{{false, true, false, false, true}, {true, true, true, true, true}} {
		blocks := mappedTestBlocks(9, n, graph.DistInt32, rows, nulls)
		path, _ := newMemfd(t)
		writeMatrix(t, path, v, graph.DistInt32, blocks, WriteOptions{MatrixRows: n, Format: "arrow", MatrixWrites: MatrixWritesPrefill})
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p := newTestPeer(t, nil)
		writeToPeer(t, p, v, graph.DistInt32, blocks, MatrixWritesPrefill)
		if p.done != int64(len(want)) || !bytes.Equal(p.mapping[:p.done], want) {
			t.Fatalf("nulls %v: the peer's %d bytes differ from the file's %d", nulls, p.done, len(want))
		}
	}
}
