package hierarchy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// Infinity is the distance of an unreachable vertex in every answer of the
// package.
const Infinity = math.MaxInt64

// Errors that Build and Read wrap.
var (
	// ErrNegativeWeight: a contraction hierarchy needs non-negative weights.
	ErrNegativeWeight = errors.New("hierarchy: negative weights (use bellman-ford)")
	// ErrInexact: the graph's float weights have sums that float64 cannot
	// hold exactly (Exact reports false), or its integer sums could leave
	// int64.
	ErrInexact = errors.New("hierarchy: the weights' path sums are not exact")
	// ErrTooManyShortcuts: the contraction gave up because the shortcuts
	// passed Options.MaxShortcutsPerArc (graphs without a hierarchy, such
	// as R-MAT or social graphs).
	ErrTooManyShortcuts = errors.New("hierarchy: too many shortcuts")
	// ErrMismatch: an index file belongs to another graph.
	ErrMismatch = errors.New("hierarchy: the index belongs to another graph")
	// ErrCorrupt: an index file is truncated or damaged.
	ErrCorrupt = errors.New("hierarchy: corrupt index")
)

// Options tunes Build. The zero value takes every default.
type Options struct {
	// Workers is the number of goroutines that contract (witness
	// searches and priorities); 0 means runtime.GOMAXPROCS(0). The
	// hierarchy is the same for any count.
	Workers int
	// WitnessSettled bounds the vertices a witness search settles while
	// contracting (default DefaultWitnessSettled); SimulateSettled bounds
	// those of the searches that only estimate a priority (default
	// DefaultSimulateSettled). A search that stops at its bound adds the
	// shortcut it could not prove unneeded: the limits trade shortcuts
	// for build time, never correctness.
	WitnessSettled, SimulateSettled int
	// MaxShortcutsPerArc makes the contraction give up, with an error
	// wrapping ErrTooManyShortcuts, once it has added more than this many
	// shortcuts per arc of the graph (default DefaultMaxShortcutsPerArc).
	MaxShortcutsPerArc float64
	// MaxCoreDegree makes the contraction give up, with an error
	// wrapping ErrTooManyShortcuts, once the graph left to contract
	// (1,024 vertices or more) has more arcs per vertex on average than
	// this, plus a quarter of it for every halving of the vertices left
	// (default DefaultMaxCoreDegree).
	MaxCoreDegree float64
}

// Defaults of Options, measured on road-like grids (the package's
// benchmark, BenchmarkHierarchy).
const (
	DefaultWitnessSettled     = 200
	DefaultSimulateSettled    = 20
	DefaultMaxShortcutsPerArc = 4
	DefaultMaxCoreDegree      = 16
)

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.WitnessSettled <= 0 {
		o.WitnessSettled = DefaultWitnessSettled
	}
	if o.SimulateSettled <= 0 {
		o.SimulateSettled = DefaultSimulateSettled
	}
	if o.MaxCoreDegree <= 0 {
		o.MaxCoreDegree = DefaultMaxCoreDegree
	}
	if o.MaxShortcutsPerArc <= 0 {
		o.MaxShortcutsPerArc = DefaultMaxShortcutsPerArc
	}
	return o
}

// arcs is one half of the hierarchy in CSR form over ranks: the arcs of
// rank r are head[off[r]:off[r+1]] with weights w and, for a shortcut, the
// rank of the vertex it bypasses in mid (-1 for an arc of the graph).
type arcs struct {
	off  []int64
	head []int32
	w    []int64
	mid  []int32
}

// Hierarchy is a contraction hierarchy of one graph. Vertices are
// renumbered by rank (the order of contraction, 0 first). It is read-only
// after Build or Read, and safe for concurrent queries, each through its
// own Query.
type Hierarchy struct {
	n     int
	rank  []int32 // rank[v] of vertex v
	order []int32 // order[r] is the vertex of rank r
	// up holds, at rank r, the arcs r→x with x > r (forward searches).
	// down holds, at rank r, the arcs x→r with x > r, head x: the
	// backward searches follow them upward, and the PHAST sweep reads
	// them as the arcs into r from the ranks already swept.
	up, down arcs
	// fractionBits f: distances are in units of 2^-f of the graph's
	// weights (0 for integer weights).
	fractionBits int
	id           identity
	// derived is what is computed from h once, on first use (shared by
	// every run of a kept hierarchy): its sweep layout and its reverse.
	derived *derived
}

// derived holds a hierarchy's sweep layout (NewSweep) and reversed view
// (Reverse), each made once.
type derived struct {
	sweepOnce, reverseOnce sync.Once
	sweep                  *Sweep
	sweepErr               error
	reverse                *Hierarchy
}

// NumVertices is the graph's vertex count.
func (h *Hierarchy) NumVertices() int { return h.n }

// Rank returns the contraction rank of v (0 is contracted first).
func (h *Hierarchy) Rank(v graph.VertexID) int { return int(h.rank[v]) }

// Arcs is the number of arcs of the upward and downward graphs together
// (the graph's arcs kept plus the shortcuts).
func (h *Hierarchy) Arcs() int64 { return int64(len(h.up.head) + len(h.down.head)) }

// Bytes is the memory h holds: 4 bytes per vertex for its rank and 4 for
// its order, and per half 8 per vertex of offsets and 16 per arc (head,
// weight, bypassed rank). On road-like grids, whose hierarchies hold 2.2
// arcs per arc of the graph, that is about 4 times the CSR's bytes with
// int32 weights (TestBytes). A Reverse shares h's arrays.
func (h *Hierarchy) Bytes() int64 {
	b := 8 * int64(h.n)
	for _, a := range []*arcs{&h.up, &h.down} {
		b += 8*int64(len(a.off)) + 4*int64(len(a.head)) + 8*int64(len(a.w)) + 4*int64(len(a.mid))
	}
	return b
}

// Shortcuts is the number of shortcut arcs.
func (h *Hierarchy) Shortcuts() int64 {
	var s int64
	for _, m := range h.up.mid {
		if m >= 0 {
			s++
		}
	}
	for _, m := range h.down.mid {
		if m >= 0 {
			s++
		}
	}
	return s
}

// FractionBits is f where distances are in units of 2^-f of the graph's
// weights: 0 for integer and unweighted graphs, and for float weights the
// fraction bits that make every weight an integer (see Exact).
func (h *Hierarchy) FractionBits() int { return h.fractionBits }

// Float converts a distance of the package's answers into the graph's
// weight unit: d·2^-f, exact, and +Inf for Infinity.
func (h *Hierarchy) Float(d int64) float64 {
	if d == Infinity {
		return math.Inf(1)
	}
	return math.Ldexp(float64(d), -h.fractionBits)
}

// Reverse returns the hierarchy of the transposed graph (distances along
// incoming arcs, --reverse): the same ranks with the upward and downward
// halves swapped. It shares h's arrays. Its index identity is h's, so Write
// of a reversed hierarchy is refused.
func (h *Hierarchy) Reverse() *Hierarchy {
	h.derived.reverseOnce.Do(func() {
		r := *h
		r.up, r.down = h.down, h.up
		r.id.reversed = !h.id.reversed
		// The reverse of the reverse is h itself.
		r.derived = &derived{reverse: h}
		r.derived.reverseOnce.Do(func() {})
		h.derived.reverse = &r
	})
	return h.derived.reverse
}

// Exact reports whether Build accepts g's weights, so that every distance
// of the hierarchy equals Dijkstra's exactly: integer weights (or none)
// that are non-negative with n·max(w) within int64 with room to spare; or
// float weights (float32 or float64) that are finite, non-negative and all
// multiples of one power of two 2^-f with n·max(w)·2^f ≤ 2^53
// (graph.ExactFloatSums at 53 bits). The hierarchy then works on the
// integers w·2^f, and every sum of weights it forms is the exact real sum,
// which float64 holds. Float32 weights in [0.1, 10], for example, are
// multiples of 2^-27 and exact on graphs of up to about 6.7 million
// vertices; float64 weights drawn uniformly from [0, 1) are not (their sums
// round), and then auto keeps the search kernels. It reads every weight.
func Exact(g *graph.CSR) bool {
	_, _, err := unitWeights(g)
	return err == nil
}

// intLimit bounds n·max(w) for integer weights: a sum of a forward and a
// backward distance, each of up to n-1 arcs, stays below Infinity.
const intLimit = math.MaxInt64 / 4

// unitWeights returns g's weights as int64 in units of 2^-f.
func unitWeights(g *graph.CSR) (w []int64, f int, err error) {
	if g.HasNegative() {
		return nil, 0, ErrNegativeWeight
	}
	switch ws := g.Weights.(type) {
	case []int32:
		w = make([]int64, len(ws))
		for i, x := range ws {
			w[i] = int64(x)
		}
		return w, 0, checkIntSums(g.NumVertices, w)
	case []int64:
		w = make([]int64, len(ws))
		copy(w, ws)
		return w, 0, checkIntSums(g.NumVertices, w)
	case []float32:
		vals := make([]float64, len(ws))
		for i, x := range ws {
			vals[i] = float64(x)
		}
		return floatUnits(g, vals)
	case []float64:
		return floatUnits(g, ws)
	case nil:
		if len(g.Targets) == 0 {
			return nil, 0, nil
		}
	}
	return nil, 0, fmt.Errorf("hierarchy: weights of type %T", g.Weights)
}

func checkIntSums(n int, w []int64) error {
	var top int64
	for _, x := range w {
		if x < 0 {
			return ErrNegativeWeight
		}
		top = max(top, x)
	}
	if !graph.IntSumsFit(n, uint64(top), intLimit) {
		return fmt.Errorf("%w: %d vertices with weights up to %d", ErrInexact, n, top)
	}
	return nil
}

// floatUnits scales float weights to integers when graph.ExactFloatSums
// holds at 53 bits.
func floatUnits(g *graph.CSR, vals []float64) ([]int64, int, error) {
	if !graph.ExactFloatSums(g, 53) {
		return nil, 0, fmt.Errorf("%w: float weights whose sums float64 rounds", ErrInexact)
	}
	f := 0
	for _, x := range vals {
		if x > 0 {
			f = max(f, fractionBits(x))
		}
	}
	w := make([]int64, len(vals))
	for i, x := range vals {
		w[i] = int64(math.Ldexp(x, f))
	}
	return w, f, nil
}

// fractionBits is the least f ≥ 0 for which x·2^f is an integer (x > 0,
// finite).
func fractionBits(x float64) int {
	mant, exp := math.Frexp(x)
	m := uint64(math.Ldexp(mant, 53))
	return max(0, 53-exp-bits.TrailingZeros64(m))
}

// Build contracts g's vertices in rounds of independent sets in the order
// of the priorities of contract.go, on Options.Workers goroutines, and
// returns the hierarchy, laid out for sweeps; it is the same for any
// number of workers. Time: about O(n · s · d log d) for witness searches
// of s settled vertices and degree d in the remaining graph (about 120 s
// of CPU for a 1000² grid); memory O(n·workers + m + shortcuts). It fails for negative weights
// (ErrNegativeWeight), weights whose sums are not exact (ErrInexact, see
// Exact), and graphs that need more than Options.MaxShortcutsPerArc
// shortcuts per arc (ErrTooManyShortcuts). Parallel arcs and self-loops
// cannot occur in a graph.CSR; zero weights, isolated vertices and
// disconnected parts are fine.
func Build(g *graph.CSR, opts Options) (*Hierarchy, error) {
	return BuildContext(context.Background(), g, opts)
}

// BuildContext is Build stopped by ctx: the contraction looks at ctx
// before each of its rounds of independent sets, and returns an error
// wrapping ctx.Err() once ctx is done.
func BuildContext(ctx context.Context, g *graph.CSR, opts Options) (*Hierarchy, error) {
	if err := checkCSR(g); err != nil {
		return nil, err
	}
	w, f, err := unitWeights(g)
	if err != nil {
		return nil, err
	}
	h, err := contract(ctx, g, w, opts.withDefaults())
	if err != nil {
		return nil, err
	}
	h.fractionBits = f
	h.id = identify(g)
	return h, nil
}

// checkCSR checks the shape Build relies on.
func checkCSR(g *graph.CSR) error {
	if g == nil {
		return errors.New("hierarchy: nil graph")
	}
	n := g.NumVertices
	if n < 0 || len(g.Offsets) != n+1 || g.Offsets[0] != 0 || g.Offsets[n] != int64(len(g.Targets)) {
		return errors.New("hierarchy: malformed CSR offsets")
	}
	for u := range n {
		if g.Offsets[u] > g.Offsets[u+1] {
			return errors.New("hierarchy: malformed CSR offsets")
		}
	}
	for _, v := range g.Targets {
		if v < 0 || int(v) >= n {
			return fmt.Errorf("hierarchy: arc target %d out of range", v)
		}
	}
	return nil
}
