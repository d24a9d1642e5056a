package plan

import "slices"

// Rows that arrive late (the GPU runner's shared hub rows, issue 19): on
// several devices each computes a share of the hub rows' last phase and
// sends it to the others, and a block on one device may start before the
// others' rows have landed. SplitLate orders the block's work so that
// what reads none of them runs first, while they cross the link.

// Early is a block's work split around rows that arrive late (SplitLate):
// the first Copies of Block.Copies, Mins of Block.Mins and Passes[0] of
// the first pass's leaves read no late row, nor a row written from one,
// and run before the late rows are waited for, with the kernel's phases
// unless KernelLate (some source's seeds read a late row); the rest, and
// the whole second pass, run after.
type Early struct {
	KernelLate bool
	Copies     int
	Mins       int
	Passes     [2]int
}

// lateKernelMaxSources is the most kernel sources a block split around
// late rows runs after the wait (SplitLate): the phases' frontier then
// needs a buffer of its own, as the block's rows hold the early part's,
// which for a few groups is a few rows. A larger kernel reading a late row
// waits for it before anything (its frontier may not fit beside it, and
// started from fewer seeds it would expand further). Not measured: R-MAT
// 18's blocks on two H200s hold one kernel source, whose seeds read no
// late row.
const lateKernelMaxSources = 4 * BatchWidth

// SplitLate orders b's work around the rows late reports as late
// (b.Early). A row written from a late one (a copy's, a minimum's or a
// leaf's destination, or every kernel row of a late kernel) is late too.
// A block whose kernel of more than lateKernelMaxSources sources reads a
// late row, or that derives and copies nothing (Rows nil), is not split
// (b.Early stays nil): it waits for the late rows first.
//
// The order is valid because each kind reads only what runs before it in
// Block's order (kernel rows, then copies, then minimums, then leaves of
// the first pass, then the second pass): an early item reads early rows
// only, which early items before it wrote; a late one runs after every
// early one and after the late items before it. The second pass writes
// rows in place that leaves of the first pass read, so it runs last.
// Taking the late minimums' early arcs before the wait, and the rest
// after (a second pass over their rows), made R-MAT 18's blocks 22 ms
// slower on two H200s (157 → 179 ms; docs/benchmarks-history.md, "The last phase's
// rows cross while the blocks work").
func (b *Block) SplitLate(late func(row int32) bool) {
	if b.Rows == nil {
		return
	}
	var e Early
	for _, s := range b.Seeds {
		if slices.ContainsFunc(b.MinArcs[s.First:s.First+s.Count], func(a MinArc) bool { return late(a.Row) }) {
			e.KernelLate = true
			break
		}
	}
	if e.KernelLate && len(b.Sources) > lateKernelMaxSources {
		return
	}
	written := map[int32]bool{} // rows written late, or from a late row
	if e.KernelLate {
		for _, r := range b.Rows {
			written[r] = true
		}
	}
	isLate := func(r int32) bool { return written[r] || late(r) }
	b.Copies, e.Copies = partition(b.Copies, func(c Copy) bool { return isLate(c.Src) })
	for _, c := range b.Copies[e.Copies:] {
		written[c.Dst] = true
	}
	b.Mins, e.Mins = partition(b.Mins, func(m MinDerivation) bool {
		return slices.ContainsFunc(b.MinArcs[m.First:m.First+m.Count], func(a MinArc) bool { return isLate(a.Row) })
	})
	for _, m := range b.Mins[e.Mins:] {
		written[m.Dst] = true
	}
	var first []Derivation
	first, e.Passes[0] = partition(b.Derive[:b.Passes[0]], func(d Derivation) bool { return isLate(d.Src) })
	b.Derive = append(first, b.Derive[b.Passes[0]:]...)
	b.Early = &e
}

// partition returns the items of s for which late is false, then those
// for which it is true, each in their order (a new slice), and the count
// of the first.
func partition[T any](s []T, late func(T) bool) ([]T, int) {
	out := make([]T, 0, len(s))
	for _, x := range s {
		if !late(x) {
			out = append(out, x)
		}
	}
	n := len(out)
	for _, x := range s {
		if late(x) {
			out = append(out, x)
		}
	}
	return out, n
}
