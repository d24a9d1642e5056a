package arrowio

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// peerMemory is memory of the process at the other end of a socket (the
// Python package, which started this one) that a result is written into
// with process_vm_writev(2): the kernel copies from this process's buffers
// straight into the reader's anonymous memory, faulting its pages in as
// it goes (see WriteOptions.ResultPeer for the exchange on the socket).
type peerMemory struct {
	conn net.Conn
	in   *bufio.Reader
	pid  int
	base uintptr
	size int64
	// The values' bytes [valuesOff, valuesOff+valuesLen) of the file,
	// told to the peer with the size; where the peer answers with an
	// address of its own for them (an array it holds: Python's out=),
	// valuesBase, they go there instead of to base+offset.
	valuesOff, valuesLen int64
	valuesBase           uintptr
}

// peerReplyTimeout bounds the wait for the reader's answer: it answers from
// a thread of its own at once; a peer that does not is not one.
const peerReplyTimeout = 60 * time.Second

// openPeerMemory asks the process at the other end of f (a connected Unix
// socket) for size bytes of its memory, and checks that this process may
// write there. A refusal, a bad answer or a write the kernel denies (no
// ptrace permission, a seccomp filter) is an error, and the peer is told
// to expect the result in the file instead.
func openPeerMemory(f *os.File, size, valuesOff, valuesLen int64) (*peerMemory, error) {
	conn, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("the result peer: %w", err)
	}
	p := &peerMemory{conn: conn, in: bufio.NewReader(conn), valuesOff: valuesOff, valuesLen: valuesLen}
	if err := p.ask("size", size); err != nil {
		p.decline(err)
		return nil, err
	}
	// A page of the head goes first: the write the kernel allows or not.
	if err := p.writeAt(make([]byte, min(size, 4096)), 0); err != nil {
		p.decline(err)
		return nil, err
	}
	return p, nil
}

// ask sends "VERB N VALUES_OFF VALUES_LEN" and reads the peer's "addr PID
// BASE [VALUES_BASE]" for n bytes.
func (p *peerMemory) ask(verb string, n int64) error {
	if _, err := fmt.Fprintf(p.conn, "%s %d %d %d\n", verb, n, p.valuesOff, p.valuesLen); err != nil {
		return fmt.Errorf("the result peer: %w", err)
	}
	_ = p.conn.SetReadDeadline(time.Now().Add(peerReplyTimeout))
	line, err := p.in.ReadString('\n')
	_ = p.conn.SetReadDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("the result peer did not answer: %w", err)
	}
	fields := strings.Fields(line)
	if (len(fields) != 3 && len(fields) != 4) || fields[0] != "addr" {
		return fmt.Errorf("the result peer answered %q", strings.TrimSpace(line))
	}
	pid, err1 := strconv.Atoi(fields[1])
	base, err2 := strconv.ParseUint(fields[2], 16, 64)
	var values uint64
	var err3 error
	if len(fields) == 4 {
		values, err3 = strconv.ParseUint(fields[3], 16, 64)
	}
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 || base == 0 || (len(fields) == 4 && values == 0) {
		return fmt.Errorf("the result peer answered %q", strings.TrimSpace(line))
	}
	p.pid, p.base, p.size, p.valuesBase = pid, uintptr(base), n, uintptr(values)
	return nil
}

// grow asks the peer for n bytes in all, its memory so far kept (it may
// move).
func (p *peerMemory) grow(n int64) error {
	if n <= p.size {
		return nil
	}
	return p.ask("grow", n)
}

// writeAt copies b to offset off of the file in the peer's memory. A
// write within the values goes to the peer's array for them, where it
// gave one; no write crosses the values' edges (the matrix writer writes
// them apart).
func (p *peerMemory) writeAt(b []byte, off int64) error {
	end := off + int64(len(b))
	if off < 0 || end > p.size {
		return fmt.Errorf("writing bytes [%d, %d) of a result peer of %d", off, end, p.size)
	}
	base := p.base + uintptr(off)
	if p.valuesBase != 0 && off < p.valuesOff+p.valuesLen && end > p.valuesOff {
		if off < p.valuesOff || end > p.valuesOff+p.valuesLen {
			return fmt.Errorf("writing bytes [%d, %d) across the values [%d, %d)", off, end, p.valuesOff, p.valuesOff+p.valuesLen)
		}
		base = p.valuesBase + uintptr(off-p.valuesOff)
	}
	for len(b) > 0 {
		local := []unix.Iovec{{Base: &b[0]}}
		local[0].SetLen(len(b))
		remote := []unix.RemoteIovec{{Base: base, Len: len(b)}}
		n, err := unix.ProcessVMWritev(p.pid, local, remote, 0)
		if err != nil {
			if errors.Is(err, unix.ESRCH) {
				return errors.New("the process reading the result has gone")
			}
			return fmt.Errorf("writing into the result reader's memory: %w", err)
		}
		if n == 0 {
			return errors.New("writing into the result reader's memory: no progress")
		}
		b, base = b[n:], base+uintptr(n)
	}
	return nil
}

// parallelWriteAt is writeAt on every core, in chunks of chunk bytes.
func (p *peerMemory) parallelWriteAt(b []byte, off int64, chunk int) error {
	return parallelRanges(len(b), chunk, func(lo, hi int) error {
		return p.writeAt(b[lo:hi], off+int64(lo))
	})
}

// finish tells the peer the result is complete, size bytes long.
func (p *peerMemory) finish(size int64) error {
	defer p.conn.Close()
	if _, err := fmt.Fprintf(p.conn, "done %d\n", size); err != nil {
		return fmt.Errorf("the result peer: %w", err)
	}
	return nil
}

// decline tells the peer the result goes to the file after all, and why.
func (p *peerMemory) decline(why error) {
	reason := strings.ReplaceAll(why.Error(), "\n", " ")
	_, _ = fmt.Fprintf(p.conn, "fallback %s\n", reason)
	_ = p.conn.Close()
}

// close drops the connection: the peer, reading no "done", keeps nothing.
func (p *peerMemory) close() { _ = p.conn.Close() }

// releasePages gives the memory of b's pages (whole pages of a private
// anonymous mapping) back to the system; they read as zeros after.
func releasePages(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }

// shadowMapping is size bytes of this process's address space, zero,
// whose pages exist only once written: the matrix writer's view of a
// result that lives in a peer's memory (its head and bitmap are composed
// here; its values are never touched here).
func shadowMapping(size int64) ([]byte, error) {
	return unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
}
