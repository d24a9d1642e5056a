package pipeline

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// RowCheck compares the rows that one Run of a Prepared query emits for
// chosen sources with the serial oracle, so that a run checks its own
// answer (the benchmark checks the very run it times). In the matrix layout it compares every
// distance exactly, as Verify does. In the stats layout it compares
// reachable, eccentricity and integer sums exactly, and float sums,
// closeness and harmonic within the rounding that adding the same terms in
// another order allows (an engine may reduce in any order: the GPU does):
// n·2⁻⁵⁰ of the sum of the terms' magnitudes. The oracle is that of
// Verify, computed when the check is made, before the run.
//
// Rows are found by position (Run emits them in source order) and their
// source column must name the source expected there.
//
// Pass every record of the run, in order, to Observe (it fits Run's emit,
// or is called from one), then read Report.
type RowCheck struct {
	g      *Graph
	layout arrowio.Layout
	n      int
	// rows maps a row index of the run to the index of its check source.
	rows    map[int64]int
	sources []graph.VertexID
	oracle  []oracleRow
	seen    []bool
	next    int64 // row index of the next record's first row
	rep     VerifyReport
}

// oracleRow is the oracle's answer for one source, widened to float64
// (exact: distances lie below 2^53), +Inf where unreachable, with the stats
// derived from it and the magnitudes that bound their rounding.
type oracleRow struct {
	dist                []float64
	reachable           int64
	eccentricity        float64 // meaningful where reachable > 0
	sum                 float64 // exact for integer distances
	closeness           float64
	harmonic            float64
	absSum, absHarmonic float64
}

// NewRowCheck prepares the check of the rows that q.Run emits for
// checkSources (external ids, each among q's sources). q's layout must be
// matrix or stats. It runs the oracle on every check source, so its cost
// is Verify's for as many sources. Errors: another layout or a check
// source that q does not run (ErrInvalid), a negative cycle reachable
// from a check source (the oracle's *graph.NegativeCycleError).
func NewRowCheck(q *Prepared, checkSources []string) (*RowCheck, error) {
	g, opt, runSources := q.g, q.opt, q.sources
	if opt.Layout != arrowio.LayoutMatrix && opt.Layout != arrowio.LayoutStats {
		return nil, fmt.Errorf("%w: rows are checked in the matrix or stats layout, not %s", ErrInvalid, opt.Layout)
	}
	check, err := g.resolveSources(checkSources)
	if err != nil {
		return nil, err
	}
	firstRow := make(map[graph.VertexID]int64, len(check))
	for i := len(runSources) - 1; i >= 0; i-- {
		firstRow[runSources[i]] = int64(i)
	}
	c := &RowCheck{g: g, layout: opt.Layout, n: g.NumVertices(), rows: make(map[int64]int, len(check)),
		sources: check, oracle: make([]oracleRow, len(check)), seen: make([]bool, len(check))}
	hops := opt.Algorithm.CountsHops() && g.CSR.Weighted
	for i, s := range check {
		row, ok := firstRow[s]
		if !ok {
			return nil, fmt.Errorf("%w: check source %s is not a source of the run", ErrInvalid, g.vertexName(s))
		}
		if _, dup := c.rows[row]; !dup {
			c.rows[row] = i
		}
		switch {
		case roundsRuns(g, opt.Algorithm):
			c.oracle[i], err = oracleRowOf[float64](g.CSR, s, hops)
			c.oracle[i].round()
		case q.dist == graph.DistInt32:
			c.oracle[i], err = oracleRowOf[int32](g.CSR, s, hops)
		case q.dist == graph.DistInt64:
			c.oracle[i], err = oracleRowOf[int64](g.CSR, s, hops)
		case q.dist == graph.DistFloat32:
			c.oracle[i], err = oracleRowOf[float32](g.CSR, s, hops)
		default:
			c.oracle[i], err = oracleRowOf[float64](g.CSR, s, hops)
		}
		if err != nil {
			return nil, g.explain(err)
		}
	}
	return c, nil
}

// oracleRowOf runs the oracle from s in D's arithmetic (BFS hop counts
// when hops) and reduces its distances to the stats of design.md
// ("Outputs") serially, in vertex order.
func oracleRowOf[D graph.Number](g *graph.CSR, s graph.VertexID, hops bool) (oracleRow, error) {
	var d []D
	var err error
	if hops {
		var h []int32
		h, err = ref.BFS(g, s)
		d = make([]D, len(h))
		for v, x := range h {
			if x == graph.Infinity[int32]() {
				d[v] = graph.Infinity[D]()
			} else {
				d[v] = D(x)
			}
		}
	} else {
		d, err = ref.Distances[D](g, s)
	}
	if err != nil {
		return oracleRow{}, err
	}
	inf := graph.Infinity[D]()
	r := oracleRow{dist: make([]float64, len(d))}
	for v, x := range d {
		if x == inf {
			r.dist[v] = math.Inf(1)
			continue
		}
		f := float64(x)
		r.dist[v] = f
		if graph.VertexID(v) == s {
			continue
		}
		if r.reachable == 0 || f > r.eccentricity {
			r.eccentricity = f
		}
		r.reachable++
		r.sum += f
		r.absSum += math.Abs(f)
		if f != 0 {
			r.harmonic += 1 / f
			r.absHarmonic += math.Abs(1 / f)
		}
	}
	if r.reachable > 0 && r.sum > 0 && len(d) > 1 {
		r.closeness = (float64(r.reachable) / r.sum) * (float64(r.reachable) / float64(len(d)-1))
	}
	return r, nil
}

// round makes r the oracle of a float32 result of float64 distances
// (rounding.go): its distances and eccentricity rounded to float32, its
// sums those of the float64 distances.
func (r *oracleRow) round() {
	for v, x := range r.dist {
		r.dist[v] = float64(float32(x))
	}
	r.eccentricity = float64(float32(r.eccentricity))
}

// Observe checks the rows of rec that belong to check sources. It returns
// an error only when rec is not a result of the check's layout; wrong
// values are counted in the report.
func (c *RowCheck) Observe(rec arrow.RecordBatch) error {
	first := c.next
	c.next += rec.NumRows()
	for r := range rec.NumRows() {
		i, ok := c.rows[first+r]
		if !ok {
			continue
		}
		c.seen[i] = true
		ids, err := column(rec, arrowio.ColSource)
		if err != nil {
			return err
		}
		c.rep.Pairs++
		if name := c.g.vertexName(c.sources[i]); ids.IsNull(int(r)) || ids.ValueStr(int(r)) != name {
			c.mismatch("source %s: its row (%d) holds source %s", name, first+r, ids.ValueStr(int(r)))
			continue
		}
		if c.layout == arrowio.LayoutMatrix {
			err = c.checkMatrixRow(rec, int(r), i)
		} else {
			err = c.checkStatsRow(rec, int(r), i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Report is the outcome so far: Pairs counts the values compared (the
// source and n distances per matrix row, the source and 5 stats per stats
// row), Mismatches the values that differ plus the
// check sources that had no row. Engine and Algorithm are left for the
// caller, who knows the run's Summary.
func (c *RowCheck) Report() *VerifyReport {
	rep := c.rep
	for i, s := range c.sources {
		if !c.seen[i] {
			rep.Mismatches++
			if rep.First == "" {
				rep.First = fmt.Sprintf("source %s: no row in the result", c.g.vertexName(s))
			}
		}
	}
	for _, s := range c.sources {
		rep.Sources = append(rep.Sources, c.g.vertexName(s))
	}
	return &rep
}

// mismatch counts one differing value, describing the first.
func (c *RowCheck) mismatch(format string, args ...any) {
	c.rep.Mismatches++
	if c.rep.First == "" {
		c.rep.First = fmt.Sprintf(format, args...)
	}
}

func (c *RowCheck) checkMatrixRow(rec arrow.RecordBatch, r, i int) error {
	col, err := column(rec, arrowio.ColDistance)
	if err != nil {
		return err
	}
	list, ok := col.(*array.FixedSizeList)
	if !ok {
		return fmt.Errorf("pipeline: distance column of %s, want fixed_size_list", col.DataType())
	}
	lo, hi := list.ValueOffsets(r)
	values := list.ListValues()
	want := c.oracle[i].dist
	if int(hi-lo) != len(want) {
		return fmt.Errorf("pipeline: matrix row of %d distances, want %d", hi-lo, len(want))
	}
	s := c.sources[i]
	for v := range want {
		got, null, err := numberAt(values, int(lo)+v)
		if err != nil {
			return err
		}
		if null {
			got = math.Inf(1)
		}
		c.rep.Pairs++
		if got != want[v] {
			c.mismatch("distance %s -> %s: engine %s, oracle %s",
				c.g.vertexName(s), c.g.vertexName(graph.VertexID(v)), showFloat(got), showFloat(want[v]))
		}
	}
	return nil
}

func (c *RowCheck) checkStatsRow(rec arrow.RecordBatch, r, i int) error {
	var cells [5]float64
	var nulls [5]bool
	for k, name := range []string{arrowio.ColReachable, arrowio.ColEccentricity, arrowio.ColSum, arrowio.ColCloseness, arrowio.ColHarmonic} {
		col, err := column(rec, name)
		if err != nil {
			return err
		}
		if cells[k], nulls[k], err = numberAt(col, r); err != nil {
			return err
		}
	}
	reachable, ecc, sum, closeness, harmonic := cells[0], cells[1], cells[2], cells[3], cells[4]
	want := c.oracle[i]
	name := c.g.vertexName(c.sources[i])
	c.rep.Pairs += 5
	if nulls[0] || reachable != float64(want.reachable) {
		c.mismatch("source %s: reachable %v, oracle %d", name, reachable, want.reachable)
	}
	switch {
	case want.reachable == 0 && !nulls[1]:
		c.mismatch("source %s: eccentricity %v, oracle null (reaches nothing)", name, ecc)
	case want.reachable > 0 && (nulls[1] || ecc != want.eccentricity):
		c.mismatch("source %s: eccentricity %s, oracle %v", name, showNullable(ecc, nulls[1]), want.eccentricity)
	}
	// Rounding of a float sum of at most n terms, in any order: below
	// γ(n-1) = (n-1)·u/(1-(n-1)·u) < 2(n-1)·u (u = 2⁻⁵³) of the terms'
	// magnitudes for each order, so two orders differ by less than
	// n·2⁻⁵⁰ of them. Integer sums are exact.
	ulps := float64(c.n) * 0x1p-50
	sumSlack := 0.0
	if isFloatColumn(rec, arrowio.ColSum) {
		sumSlack = ulps * want.absSum
	}
	if nulls[2] || math.Abs(sum-want.sum) > sumSlack {
		c.mismatch("source %s: sum %v, oracle %v", name, sum, want.sum)
	}
	// closeness = r²/(sum·(n−1)): its relative error is the sum's, plus
	// a few roundings of the expression itself.
	closenessSlack := 4 * 0x1p-53 * math.Abs(want.closeness)
	if want.sum != 0 {
		closenessSlack += 2 * math.Abs(want.closeness) * sumSlack / math.Abs(want.sum)
	}
	if nulls[3] || math.Abs(closeness-want.closeness) > closenessSlack {
		c.mismatch("source %s: closeness %v, oracle %v", name, closeness, want.closeness)
	}
	if nulls[4] || math.Abs(harmonic-want.harmonic) > ulps*want.absHarmonic {
		c.mismatch("source %s: harmonic %v, oracle %v", name, harmonic, want.harmonic)
	}
	return nil
}

// column finds a result column by name.
func column(rec arrow.RecordBatch, name string) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("pipeline: result has no column %q", name)
	}
	return rec.Column(idx[0]), nil
}

func isFloatColumn(rec arrow.RecordBatch, name string) bool {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return false
	}
	switch rec.Schema().Field(idx[0]).Type.ID() {
	case arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// numberAt reads a numeric cell as float64, and whether it is null.
func numberAt(a arrow.Array, i int) (float64, bool, error) {
	if a.IsNull(i) {
		return 0, true, nil
	}
	switch x := a.(type) {
	case *array.Int32:
		return float64(x.Value(i)), false, nil
	case *array.Int64:
		return float64(x.Value(i)), false, nil
	case *array.Float32:
		return float64(x.Value(i)), false, nil
	case *array.Float64:
		return x.Value(i), false, nil
	}
	return 0, false, fmt.Errorf("pipeline: result column of %s, want a number", a.DataType())
}

func showFloat(d float64) string {
	if math.IsInf(d, 1) {
		return "unreachable"
	}
	return fmt.Sprint(d)
}

func showNullable(x float64, null bool) string {
	if null {
		return "null"
	}
	return fmt.Sprint(x)
}
