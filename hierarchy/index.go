package hierarchy

// The index file: a hierarchy written once (pathctl index) and read back
// for the same graph. Layout, little-endian:
//
//	magic          8 bytes  "PCTL-CH\x00"
//	version        uint32   indexVersion
//	flags          uint32   bit 0: weights are uint32 (else int64)
//	vertices       uint64   the graph's identity: vertex count,
//	arcs           uint64   arc count,
//	hash           uint64   and graphHash of its CSR arrays
//	fractionBits   uint32   distances in units of 2^-f
//	reserved       uint32   0
//	upArcs         uint64
//	downArcs       uint64
//	order          vertices × int32       vertex of each rank
//	up             vertices × uint32 arc counts by rank, upArcs × int32
//	               heads, upArcs weights (uint32 or int64, flag bit 0),
//	               upArcs × int32 bypassed ranks
//	down           the same with downArcs
//	checksum       uint64   CRC-64 (ECMA) of every byte before it
//
// Counts rather than offsets, and 32-bit weights wherever every weight
// fits (always for weights up to 2^32/n, the pathctl gen graphs among
// them), keep the file at 12 bytes per arc and 12 per vertex: about 2.9×
// the CSR's bytes (int64 offsets, int32 targets and weights) on road-like
// grids, whose hierarchies hold 2.2 arcs per arc of the graph.
//
// Read refuses an index of another graph (ErrMismatch), and a truncated or
// damaged one (ErrCorrupt); after the checksum it still checks every
// invariant the queries rely on, so no file makes a query index out of
// range.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"math"
	"math/bits"
	"runtime"

	"github.com/pathctl/pathctl/graph"
)

const (
	indexMagic   = "PCTL-CH\x00"
	indexVersion = 2
	// flagWeights32: the weights are stored as uint32.
	flagWeights32 = 1
	headerSize    = 8 + 4 + 4 + 3*8 + 4 + 4 + 2*8
)

var crcTable = crc64.MakeTable(crc64.ECMA)

// identity names the graph a hierarchy belongs to.
type identity struct {
	vertices, arcs, hash uint64
	reversed             bool
}

// identify hashes g's arrays: O(n + m).
func identify(g *graph.CSR) identity {
	h := newWordHash()
	flags := uint64(g.Type)
	if g.Weighted {
		flags |= 1 << 8
	}
	if g.Undirected {
		flags |= 1 << 9
	}
	h.add(flags)
	h.add(uint64(g.NumVertices))
	for _, o := range g.Offsets {
		h.add(uint64(o))
	}
	for _, t := range g.Targets {
		h.add(uint64(uint32(t)))
	}
	switch w := g.Weights.(type) {
	case []int32:
		for _, x := range w {
			h.add(uint64(uint32(x)))
		}
	case []int64:
		for _, x := range w {
			h.add(uint64(x))
		}
	case []float32:
		for _, x := range w {
			h.add(uint64(math.Float32bits(x)))
		}
	case []float64:
		for _, x := range w {
			h.add(math.Float64bits(x))
		}
	}
	return identity{vertices: uint64(g.NumVertices), arcs: uint64(len(g.Targets)), hash: h.sum()}
}

// wordHash is a 64-bit multiply–rotate hash over words (not
// cryptographic: it tells graphs apart, it does not authenticate them).
type wordHash struct{ h uint64 }

func newWordHash() wordHash { return wordHash{0x243f6a8885a308d3} }

func (w *wordHash) add(x uint64) {
	w.h = bits.RotateLeft64((w.h^x)*0x9e3779b97f4a7c15, 29)
}

func (w *wordHash) sum() uint64 {
	h := w.h
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// Write writes h as an index file (the layout above). It fails for a
// reversed hierarchy (write the forward one) and for w's errors.
func (h *Hierarchy) Write(w io.Writer) error {
	if h.id.reversed {
		return errors.New("hierarchy: cannot write a reversed hierarchy")
	}
	crc := crc64.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	e := encoder{w: bw}
	var flags uint32
	if h.weightsFit32() {
		flags |= flagWeights32
	}
	e.bytes([]byte(indexMagic))
	e.u32(indexVersion)
	e.u32(flags)
	e.u64(h.id.vertices)
	e.u64(h.id.arcs)
	e.u64(h.id.hash)
	e.u32(uint32(h.fractionBits))
	e.u32(0)
	e.u64(uint64(len(h.up.head)))
	e.u64(uint64(len(h.down.head)))
	e.i32s(h.order)
	for _, a := range []*arcs{&h.up, &h.down} {
		e.counts(a.off)
		e.i32s(a.head)
		if flags&flagWeights32 != 0 {
			e.u32s(a.w)
		} else {
			e.i64s(a.w)
		}
		e.i32s(a.mid)
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	if e.err != nil {
		return fmt.Errorf("hierarchy: writing the index: %w", e.err)
	}
	var sum [8]byte
	binary.LittleEndian.PutUint64(sum[:], crc.Sum64())
	if _, err := w.Write(sum[:]); err != nil {
		return fmt.Errorf("hierarchy: writing the index: %w", err)
	}
	return nil
}

// weightsFit32 reports whether every arc weight fits in a uint32.
func (h *Hierarchy) weightsFit32() bool {
	for _, half := range []*arcs{&h.up, &h.down} {
		for _, w := range half.w {
			if w > math.MaxUint32 {
				return false
			}
		}
	}
	return true
}

type encoder struct {
	w   *bufio.Writer
	buf []byte
	err error
}

func (e *encoder) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) u32(x uint32) { e.bytes(binary.LittleEndian.AppendUint32(e.buf[:0], x)) }
func (e *encoder) u64(x uint64) { e.bytes(binary.LittleEndian.AppendUint64(e.buf[:0], x)) }

// words writes n little-endian words of size bytes (4 or 8), the i-th
// at(i), in chunks of 8192 through e.buf.
func (e *encoder) words(n, size int, at func(i int) uint64) {
	for first := 0; first < n && e.err == nil; first += 8192 {
		e.buf = e.buf[:0]
		for i := first; i < min(first+8192, n); i++ {
			if size == 4 {
				e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(at(i)))
			} else {
				e.buf = binary.LittleEndian.AppendUint64(e.buf, at(i))
			}
		}
		e.bytes(e.buf)
	}
}

func (e *encoder) i32s(xs []int32) {
	e.words(len(xs), 4, func(i int) uint64 { return uint64(uint32(xs[i])) })
}

// counts writes the arc count of each rank, off[r+1]-off[r].
func (e *encoder) counts(off []int64) {
	e.words(max(len(off)-1, 0), 4, func(r int) uint64 { return uint64(off[r+1] - off[r]) })
}

// u32s writes weights known to fit in a uint32.
func (e *encoder) u32s(xs []int64) { e.words(len(xs), 4, func(i int) uint64 { return uint64(xs[i]) }) }

func (e *encoder) i64s(xs []int64) { e.words(len(xs), 8, func(i int) uint64 { return uint64(xs[i]) }) }

// Read reads an index file that Write wrote for g. It fails with an error
// wrapping ErrCorrupt for a file that is not an index, truncated, damaged
// or of another version, and with one wrapping ErrMismatch when the index
// belongs to another graph (other vertex or arc count, or other arrays).
// It is Decode and CheckGraph, g's identity hashed beside the decoding,
// O(file + n + m).
func Read(r io.Reader, g *graph.CSR) (*Hierarchy, error) {
	if err := checkCSR(g); err != nil {
		return nil, err
	}
	ids := make(chan identity, 1)
	go func() { ids <- identify(g) }()
	h, err := Decode(r)
	want := <-ids
	if err != nil {
		return nil, err
	}
	if err := h.matches(want); err != nil {
		return nil, err
	}
	return h, nil
}

// Decode reads an index file that Write wrote, without its graph: a
// caller that reads the index beside the graph's edges checks it with
// CheckGraph before any query. It reads a file (or any io.ReaderAt of
// known size, as bytes.Reader) in place, span by span on every core,
// other readers into memory first. It fails with an error wrapping
// ErrCorrupt for a file that is not an index, truncated, damaged or of
// another version.
func Decode(r io.Reader) (*Hierarchy, error) {
	ra, size, err := readerAt(r)
	if err != nil {
		return nil, fmt.Errorf("hierarchy: reading the index: %w", err)
	}
	return decodeAt(ra, size, spanBytes)
}

// CheckGraph fails with an error wrapping ErrMismatch when h is not the
// hierarchy of g (other vertex or arc count, or other arrays), O(n + m).
func (h *Hierarchy) CheckGraph(g *graph.CSR) error {
	if err := checkCSR(g); err != nil {
		return err
	}
	return h.matches(identify(g))
}

// matches fails with ErrMismatch where h's identity is not want.
func (h *Hierarchy) matches(want identity) error {
	if h.id != want {
		return fmt.Errorf("%w: the index is of a graph of %d vertices and %d arcs (hash %016x), this one has %d and %d (hash %016x)",
			ErrMismatch, h.id.vertices, h.id.arcs, h.id.hash, want.vertices, want.arcs, want.hash)
	}
	return nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// checkArcs checks a half's arcs over spans of ranks on every core: each
// to a higher rank within n, each shortcut bypassing a lower rank, each
// weight within the sums' range. The error is that of the lowest rank
// found wrong.
func checkArcs(half *arcs, n int) error {
	if half.off[0] != 0 || half.off[n] != int64(len(half.head)) {
		return corrupt("arc offsets do not span the arcs")
	}
	const ranks = 1 << 16 // per span
	spans := (n + ranks - 1) / ranks
	errs := make([]error, spans)
	parallel(min(runtime.GOMAXPROCS(0), max(spans, 1)), spans, func(_, s int) {
		for r := s * ranks; r < min((s+1)*ranks, n); r++ {
			for k := half.off[r]; k < half.off[r+1]; k++ {
				if x := half.head[k]; x <= int32(r) || x >= int32(n) {
					errs[s] = corrupt("arc of rank %d to rank %d", r, x)
					return
				}
				if m := half.mid[k]; m < -1 || m >= int32(r) {
					errs[s] = corrupt("shortcut of rank %d bypasses rank %d", r, m)
					return
				}
				if w := half.w[k]; w < 0 || w > intLimit {
					errs[s] = corrupt("arc weight %d", w)
					return
				}
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
