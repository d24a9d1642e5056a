package hierarchy

// Reading an index at the speed of the disk's cache. The header gives
// every array's place in the file, so the arrays are read in spans on
// every core (ReadAt), each span converted where it lands and its CRC-64
// computed beside. CRC-64 is linear: the checksum of a‖b is a's carried
// over b's length, added to b's, so the spans' checksums combine into the
// file's. An index of a million-vertex grid (117 MB) is read in tens of
// milliseconds rather than half a second, and no buffer of the file's
// size is made.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"runtime"

	"github.com/pathctl/pathctl/graph"
)

// spanBytes bounds a span, one task of the parallel read, in Read.
const spanBytes = 1 << 20

// readerAt gives r as an io.ReaderAt and its size: a regular file or a
// reader of known size (bytes.Reader) in place, any other reader read
// into memory.
func readerAt(r io.Reader) (io.ReaderAt, int64, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return f, fi.Size(), nil
		}
	}
	if s, ok := r.(interface {
		io.ReaderAt
		Size() int64
	}); ok {
		return s, s.Size(), nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	return bytes.NewReader(data), int64(len(data)), nil
}

// fileSpan is a part of the file (at, length bytes) that convert decodes.
type fileSpan struct {
	at, length int64
	convert    func(b []byte)
}

// decodeAt parses and checks an index file of size bytes, read in spans
// of up to spanSize bytes (a multiple of 8).
func decodeAt(ra io.ReaderAt, size, spanSize int64) (*Hierarchy, error) {
	// 1. Magic, version, header.
	head := make([]byte, min(size, headerSize))
	if _, err := ra.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("hierarchy: reading the index: %w", err)
	}
	if len(head) < len(indexMagic) || !bytes.Equal(head[:len(indexMagic)], []byte(indexMagic)) {
		return nil, corrupt("not a pathctl hierarchy index")
	}
	if size < headerSize+8 {
		return nil, corrupt("truncated header (%d bytes)", size)
	}
	le := binary.LittleEndian
	if v := le.Uint32(head[8:]); v != indexVersion {
		return nil, corrupt("index version %d, this build reads %d", v, indexVersion)
	}
	flags := le.Uint32(head[12:])
	if flags&^flagWeights32 != 0 {
		return nil, corrupt("unknown flags")
	}
	id := identity{vertices: le.Uint64(head[16:]), arcs: le.Uint64(head[24:]), hash: le.Uint64(head[32:])}
	f := le.Uint32(head[40:])
	upArcs, downArcs := le.Uint64(head[48:]), le.Uint64(head[56:])
	if id.vertices > graph.MaxVertices || f > 1100 {
		return nil, corrupt("bad header")
	}
	n := id.vertices
	weightBytes := uint64(8)
	if flags&flagWeights32 != 0 {
		weightBytes = 4
	}
	arcBytes := 4 + weightBytes + 4
	rest := uint64(size - headerSize - 8)
	if upArcs > rest/arcBytes || downArcs > rest/arcBytes ||
		4*n+2*4*n+(upArcs+downArcs)*arcBytes != rest {
		return nil, corrupt("the file's length does not match its header (truncated or damaged file)")
	}
	// 2. Arrays, read and converted span by span (the counts into the
	// offsets' places, summed after), in the file's order.
	h := &Hierarchy{n: int(n), fractionBits: int(f), id: id, derived: &derived{}}
	var spans []fileSpan
	at := int64(headerSize)
	add := func(count, size uint64, convert func(lo int, b []byte)) {
		per := uint64(spanSize) / size
		for lo := uint64(0); lo < count; lo += per {
			length := int64(min(per, count-lo) * size)
			spans = append(spans, fileSpan{at, length, func(b []byte) { convert(int(lo), b) }})
			at += length
		}
	}
	int32s := func(out []int32) func(lo int, b []byte) {
		return func(lo int, b []byte) {
			for i := range out[lo : lo+len(b)/4] {
				out[lo+i] = int32(le.Uint32(b[4*i:]))
			}
		}
	}
	h.order = make([]int32, n)
	add(n, 4, int32s(h.order))
	for _, a := range []struct {
		half  *arcs
		count uint64
	}{{&h.up, upArcs}, {&h.down, downArcs}} {
		half := a.half
		half.off = make([]int64, n+1)
		add(n, 4, func(lo int, b []byte) {
			for i := range len(b) / 4 {
				half.off[lo+i+1] = int64(le.Uint32(b[4*i:]))
			}
		})
		half.head = make([]int32, a.count)
		add(a.count, 4, int32s(half.head))
		half.w = make([]int64, a.count)
		add(a.count, weightBytes, func(lo int, b []byte) {
			for i := range len(b) / int(weightBytes) {
				if weightBytes == 4 {
					half.w[lo+i] = int64(le.Uint32(b[4*i:]))
				} else {
					half.w[lo+i] = int64(le.Uint64(b[8*i:]))
				}
			}
		})
		half.mid = make([]int32, a.count)
		add(a.count, 4, int32s(half.mid))
	}
	sums, err := readSpans(ra, spans, spanSize)
	if err != nil {
		return nil, err
	}
	// 3. The checksum, the header's and the spans' combined.
	var tail [8]byte
	if _, err := ra.ReadAt(tail[:], size-8); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("hierarchy: reading the index: %w", err)
	}
	sum := crc64.Checksum(head, crcTable)
	carry := map[int64]*crcMatrix{}
	for i, s := range spans {
		if carry[s.length] == nil {
			m := crcZeros(s.length)
			carry[s.length] = &m
		}
		sum = carry[s.length].apply(sum) ^ sums[i]
	}
	if sum != le.Uint64(tail[:]) {
		return nil, corrupt("checksum mismatch (truncated or damaged file)")
	}
	for _, half := range []*arcs{&h.up, &h.down} {
		if !sumCounts(half.off, uint64(len(half.head))) {
			return nil, corrupt("arc counts do not add up to the arcs")
		}
	}
	// 4. Invariants: ranks a permutation, arcs to higher ranks, bypassed
	// ranks below both ends, weights within the sums' range.
	h.rank = make([]int32, n)
	for i := range h.rank {
		h.rank[i] = -1
	}
	for r, v := range h.order {
		if v < 0 || uint64(v) >= n || h.rank[v] >= 0 {
			return nil, corrupt("rank order is not a permutation")
		}
		h.rank[v] = int32(r)
	}
	for _, half := range []*arcs{&h.up, &h.down} {
		if err := checkArcs(half, int(n)); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// readSpans reads and converts every span on every core, and returns each
// span's CRC-64.
func readSpans(ra io.ReaderAt, spans []fileSpan, spanSize int64) ([]uint64, error) {
	workers := min(runtime.GOMAXPROCS(0), max(len(spans), 1))
	bufs := make([][]byte, workers)
	sums := make([]uint64, len(spans))
	errs := make([]error, len(spans))
	parallel(workers, len(spans), func(w, i int) {
		s := spans[i]
		if bufs[w] == nil {
			bufs[w] = make([]byte, spanSize)
		}
		b := bufs[w][:s.length]
		if _, err := ra.ReadAt(b, s.at); err != nil {
			errs[i] = err
			return
		}
		sums[i] = crc64.Checksum(b, crcTable)
		s.convert(b)
	})
	for _, err := range errs {
		if errors.Is(err, io.EOF) {
			return nil, corrupt("truncated file")
		}
		if err != nil {
			return nil, fmt.Errorf("hierarchy: reading the index: %w", err)
		}
	}
	return sums, nil
}

// sumCounts turns the arc counts in off[1:] into offsets, in place, and
// reports whether they add up to total.
func sumCounts(off []int64, total uint64) bool {
	var sum uint64
	for r := 1; r < len(off); r++ {
		sum += uint64(off[r])
		if sum > total {
			return false
		}
		off[r] = int64(sum)
	}
	return sum == total
}

// crcMatrix is a linear map on CRC-64 registers over GF(2): column i is
// the image of bit i.
type crcMatrix [64]uint64

func (m *crcMatrix) apply(x uint64) uint64 {
	var y uint64
	for i := 0; x != 0; i, x = i+1, x>>1 {
		if x&1 != 0 {
			y ^= m[i]
		}
	}
	return y
}

// times is the map m after a (a first, then m).
func (m *crcMatrix) times(a *crcMatrix) crcMatrix {
	var out crcMatrix
	for i := range out {
		out[i] = m.apply(a[i])
	}
	return out
}

// crcZeros is the map that feeding bytes zero bytes applies to the
// register of crc64's ECMA table (reflected: a bit shifts right, and the
// polynomial enters where a one leaves). Where C(x) is the checksum of x,
// C(a‖b) = crcZeros(len(b)).apply(C(a)) ^ C(b): the pre- and
// post-inversions of the register cancel, since the map is linear.
func crcZeros(bytes int64) crcMatrix {
	var bit crcMatrix // one zero bit
	bit[0] = crc64.ECMA
	for i := 1; i < 64; i++ {
		bit[i] = 1 << (i - 1)
	}
	power := bit
	for range 3 { // squared thrice: eight bits, one byte
		power = power.times(&power)
	}
	var out crcMatrix
	for i := range out {
		out[i] = 1 << i
	}
	for n := bytes; n > 0; n >>= 1 {
		if n&1 != 0 {
			out = out.times(&power)
		}
		power = power.times(&power)
	}
	return out
}
