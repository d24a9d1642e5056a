package arrowio

// The matrix writer's side of a result peer (WriteOptions.ResultPeer):
// opening a matrix whose values go into the memory of the reading process,
// sending the validity bitmap with the rows, and finishing the result
// there. The peer's memory and the exchange on its socket are in
// peer_linux.go (peer_other.go: no peer where there is no
// process_vm_writev); this file is what every system compiles.

import (
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/internal/trace"
)

// peerCopyChunk is the bytes one core writes into a result peer at a time:
// a 64 MiB record is 64 of them, so that 16 cores finish it together
// (in 4 MiB chunks, one each, the record waited for the slowest).
const peerCopyChunk = 1 << 20

// newPeerMatrix is newMappedMatrix for a result written into the memory
// of the process at the other end of conn (WriteOptions.ResultPeer); f,
// the file it would go to otherwise, is left empty.
func newPeerMatrix(f, conn *os.File, schema *arrow.Schema, rows int, mem memory.Allocator) (*mappedMatrix, error) {
	w, err := planMappedMatrix(schema, rows, mem)
	if err != nil {
		return nil, err
	}
	w.file = f
	total := w.bitmapOff + int64(roundUp(w.bitmapBytes(), 64))
	if w.mapping, err = shadowMapping(total); err != nil {
		return nil, fmt.Errorf("reserving the result's shadow: %w", err)
	}
	trace.Printf("arrowio", "asking the result peer for %d bytes", total+peerTailRoom(rows))
	w.peer, err = openPeerMemory(conn, total+peerTailRoom(rows), w.valuesOff, int64(w.valuesBytes()))
	trace.Printf("arrowio", "the result peer answered (%v)", err == nil)
	if err != nil {
		_ = unmapFile(w.mapping)
		return nil, err
	}
	return w, nil
}

// peerTailRoom is the room a peer is first asked for past the bitmap, for
// the source column and the footer: enough for ids of up to 56 bytes; a
// longer tail asks the peer to grow.
func peerTailRoom(rows int) int64 { return int64(rows)*64 + 1<<20 }

// finishPeer writes the head, the bitmap (where there are nulls) and end
// (the source column, the footer) at offset at into the peer, and tells
// it the result's size.
func (w *mappedMatrix) finishPeer(at int64, end []byte) error {
	size := at + int64(len(end))
	if err := w.peer.grow(size); err != nil {
		return err
	}
	if err := w.peer.writeAt(w.mapping[:w.valuesOff], 0); err != nil {
		return err
	}
	if err := w.sendBits(w.bitmapBytes()); err != nil {
		return err
	}
	if err := w.peer.writeAt(end, at); err != nil {
		return err
	}
	_ = unmapFile(w.mapping)
	w.mapping = nil
	w.size = size
	return w.peer.finish(size)
}

// sendBits writes the bitmap's bytes from the last sent up to end into the
// peer, once the bitmap is written at all (a null seen): the rows written
// so far fix every byte below end = their bits / 8, so that they go with
// the rows, beside their values, rather than all at the close (R-MAT 16:
// 274 MB, about 80 ms at the end of the run).
func (w *mappedMatrix) sendBits(end int) error {
	if w.nulls == 0 || end <= w.bitsSent {
		return nil
	}
	at := w.bitmapOff + int64(w.bitsSent)
	if err := w.peer.parallelWriteAt(w.mapping[at:w.bitmapOff+int64(end)], at, peerCopyChunk); err != nil {
		return err
	}
	w.bitsSent = end
	// The whole pages of the shadow's bitmap sent so far are not read
	// again (the close sends only the rest): their memory goes back, so
	// that the binary holds a page or so of the bitmap rather than all of
	// it (R-MAT 16: 274 MB, 3 % of the result).
	page := os.Getpagesize()
	lo := int64(roundUp(int(w.bitmapOff)+w.bitsFreed, page))
	hi := (w.bitmapOff + int64(end)) / int64(page) * int64(page)
	if hi > lo {
		releasePages(w.mapping[lo:hi])
		w.bitsFreed = int(hi - w.bitmapOff)
	}
	return nil
}
