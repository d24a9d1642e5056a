package arrowio

// CSV and TSV edge tables. A header row names the columns. Column types are
// pinned here rather than inferred from a first block: ids are int64 when
// every id is an integer, strings otherwise; weights are int64 when every
// weight is an integer, float64 otherwise. Ids are kept as integers while
// every one seen is written canonically (no sign, no leading zero); the first
// id that is not switches to interning the text, so that "007" and "7" stay
// distinct if the ids turn out to be strings after all.
//
// Fields are read as RFC 4180 says: spaces are part of a field, quoted or
// not, so string ids are kept verbatim (" a" and "a" are two vertices, as
// they are in Parquet). A number has one meaning whatever spaces surround
// it: weights, and ids of a column whose every id is an integer once its
// spaces are trimmed, are read as numbers ("1, 2, 3" is the edge 1 -> 2 of
// weight 3). Header names are trimmed: they name columns, not vertices.

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// maxTextLine bounds one line of a CSV or TSV edge table. encoding/csv
// holds a whole line (record) in memory, so without a bound one line of a
// GiB takes several; a line of an edge table is a few ids and a weight.
const maxTextLine = 1 << 20

// lineTooLongError reports a line over maxTextLine.
type lineTooLongError struct{ line int }

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("line %d is longer than %d bytes, the limit of a CSV or TSV line", e.line, maxTextLine)
}

// lineLimitReader passes r through, failing with a *lineTooLongError once a
// line (bytes between two newlines, quoted newlines counting as newlines)
// grows past limit.
type lineLimitReader struct {
	r        io.Reader
	limit    int
	lineLen  int // bytes since the last newline
	newlines int // newlines seen so far
	err      error
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	chunk := p[:n]
	first := bytes.IndexByte(chunk, '\n')
	switch {
	case first < 0:
		l.lineLen += n
	case l.lineLen+first > l.limit:
		l.lineLen += first
	default:
		last := bytes.LastIndexByte(chunk, '\n')
		if last-first > l.limit {
			// A chunk longer than the limit may hold a long line whole:
			// walk its lines.
			l.newlines++
			for lo := first + 1; ; {
				i := bytes.IndexByte(chunk[lo:], '\n')
				if i < 0 {
					l.lineLen = n - lo
					break
				}
				if i > l.limit {
					l.lineLen = i
					break
				}
				l.newlines++
				lo += i + 1
			}
		} else {
			l.newlines += bytes.Count(chunk, []byte{'\n'})
			l.lineLen = n - last - 1
		}
	}
	if l.lineLen > l.limit {
		l.err = &lineTooLongError{line: l.newlines + 1}
		return 0, l.err
	}
	return n, err
}

func readDelimited(r io.Reader, name, format string, opt ReadOptions) (t *EdgeTable, err error) {
	limited := &lineLimitReader{r: r, limit: maxTextLine}
	defer func() {
		var long *lineTooLongError
		if errors.As(limited.err, &long) {
			t, err = nil, fmt.Errorf("arrowio: %s: %w", name, long)
		}
	}()
	cr := csv.NewReader(limited)
	cr.ReuseRecord = true
	if format == FormatTSV {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("arrowio: %s: empty file; a header row naming the columns (%s, %s) is required", name, opt.srcCol(), opt.dstCol())
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	header = slices.Clone(header)
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	var dup error
	find := func(col string) int {
		var idx []int
		for i, h := range header {
			if h == col {
				idx = append(idx, i)
			}
		}
		if len(idx) > 1 && dup == nil {
			dup = duplicateColumn(name, col, idx)
		}
		if len(idx) == 0 {
			return -1
		}
		return idx[0]
	}
	listed := func() string {
		q := make([]string, len(header))
		for i, h := range header {
			q[i] = strconv.Quote(h)
		}
		return strings.Join(q, ", ")
	}
	if opt.vertexTable {
		col, err := vertexColumn(header, name, opt.SrcCol)
		if err != nil {
			return nil, err
		}
		opt.SrcCol, opt.DstCol = col, col
	}
	srcCol, dstCol, wCol := opt.srcCol(), opt.dstCol(), opt.weightCol()
	srcIdx, dstIdx, wIdx := find(srcCol), find(dstCol), -1
	for _, c := range []struct {
		name string
		idx  int
	}{{srcCol, srcIdx}, {dstCol, dstIdx}} {
		if c.idx < 0 {
			return nil, fmt.Errorf("arrowio: %s: no column %q in the header (columns: %s)", name, c.name, listed())
		}
	}
	if !opt.Unweighted {
		wIdx = find(wCol)
		if wIdx < 0 && opt.WeightCol != "" {
			return nil, fmt.Errorf("arrowio: %s: no weight column %q in the header (columns: %s)", name, wCol, listed())
		}
	}
	if dup != nil {
		return nil, dup
	}
	// Without a weight column named or called "weight", the other columns
	// are candidates, read beside the ids while their values are numbers
	// (weightCandidate); after the last row a lone numeric one is the
	// weight, as a lone numeric field is in every other format.
	var candidates []*weightCandidate
	if wIdx < 0 && opt.wantsGuess() {
		for i := range header {
			if i != srcIdx && i != dstIdx && !isIndexColumn(header[i]) {
				candidates = append(candidates, &weightCandidate{col: i, name: header[i]})
			}
		}
	}
	ids := &textIDs{intMode: true, allInt: true, srcKeys: []int64{}, dstKeys: []int64{}}
	var weights textWeights
	var lines lineMap
	if wIdx >= 0 {
		weights.ints = []int64{}
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		lines.add(line)
		if lines.rows%readerCheckRows == 0 {
			if err := opt.interrupted(name); err != nil {
				return nil, err
			}
		}
		if err := ids.add(rec[srcIdx], 0, name, srcCol, line); err != nil {
			return nil, err
		}
		if err := ids.add(rec[dstIdx], 1, name, dstCol, line); err != nil {
			return nil, err
		}
		for _, c := range candidates {
			c.add(rec[c.col], name, line)
		}
		if wIdx >= 0 {
			if err := weights.add(rec[wIdx], name, wCol, line); err != nil {
				return nil, err
			}
		}
	}
	if err := opt.interrupted(name); err != nil {
		return nil, err
	}
	guess, taken, err := chooseWeightCandidate(candidates)
	if err != nil {
		return nil, err
	}
	if taken != nil {
		wIdx, weights = taken.col, taken.weights
	}
	t = &EdgeTable{Name: name, WeightGuessed: guess.column, WeightNote: guess.note(defaultWeightCol)}
	if wIdx >= 0 {
		t.Edges.IntWeights, t.Edges.Float64Weights = weights.ints, weights.floats
		t.WeightType = arrow.PrimitiveTypes.Int64
		if weights.floats != nil {
			t.WeightType = arrow.PrimitiveTypes.Float64
		}
	}
	if t.Edges.Src, t.Edges.Dst, t.Vertices, err = ids.finish(name, srcCol, dstCol); err != nil {
		var limit *vertexLimitError
		if errors.As(err, &limit) {
			return nil, fmt.Errorf("arrowio: %s: column %q line %d: more than %d distinct vertices; dense ids are int32", name, limit.col, lines.line(limit.row), maxVertexCount)
		}
		return nil, err
	}
	t.Edges.NumVertices = t.Vertices.Len()
	return t, nil
}

// csvError names the file of a parse error. A quote after a space (`a, "b"`)
// is the one a reader that trimmed fields would have taken: the message
// says where a quoted field starts.
func csvError(name string, err error) error {
	if errors.Is(err, csv.ErrBareQuote) {
		return fmt.Errorf("arrowio: %s: %w (a quoted field starts right after the delimiter; spaces are part of a field)", name, err)
	}
	return fmt.Errorf("arrowio: %s: %w", name, err)
}

// textIDs gathers ids parsed from text: as int64 keys while every id is a
// canonical integer, then as interned strings (noting whether every distinct
// string still parses as an integer).
type textIDs struct {
	intMode          bool
	srcKeys, dstKeys []int64
	strs             *stringTable
	srcProv, dstProv []int32
	allInt           bool
	uniqueInts       []int64 // the integer value of each interned string, while allInt
}

// add takes one id as written: verbatim as a string, or as the integer it
// reads as once trimmed of white space. An id with spaces around it leaves
// the integer keys (which would lose the spaces) for interned text, where
// finish still merges it with its integer if every id is one.
func (t *textIDs) add(text string, column int, name, col string, line int) error {
	if text == "" {
		return fmt.Errorf("arrowio: %s: column %q line %d: empty (null) id", name, col, line)
	}
	if t.intMode {
		if v, ok := parseCanonicalInt(text); ok {
			if column == 0 {
				t.srcKeys = append(t.srcKeys, v)
			} else {
				t.dstKeys = append(t.dstKeys, v)
			}
			return nil
		}
		t.switchToStrings()
	}
	before := len(t.strs.values)
	id, ok := t.strs.intern(text)
	if !ok {
		return fmt.Errorf("arrowio: %s: column %q line %d: more than %d distinct vertices; dense ids are int32", name, col, line, maxVertexCount)
	}
	if len(t.strs.values) > before && t.allInt {
		if v, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64); err == nil {
			t.uniqueInts = append(t.uniqueInts, v)
		} else {
			t.allInt, t.uniqueInts = false, nil
		}
	}
	if column == 0 {
		t.srcProv = append(t.srcProv, id)
	} else {
		t.dstProv = append(t.dstProv, id)
	}
	return nil
}

// switchToStrings re-reads the integer ids so far as their (canonical) text.
func (t *textIDs) switchToStrings() {
	t.intMode = false
	t.strs = newStringTable()
	convert := func(keys []int64) []int32 {
		prov := make([]int32, len(keys), max(len(keys), 1024))
		for i, k := range keys {
			before := len(t.strs.values)
			prov[i], _ = t.strs.intern(strconv.FormatInt(k, 10))
			if len(t.strs.values) > before {
				t.uniqueInts = append(t.uniqueInts, k)
			}
		}
		return prov
	}
	t.srcProv, t.dstProv = convert(t.srcKeys), convert(t.dstKeys)
	t.srcKeys, t.dstKeys = nil, nil
}

func (t *textIDs) finish(name, srcCol, dstCol string) ([]int32, []int32, *Vertices, error) {
	if t.intMode {
		verts, src, dst, err := denseIntIDs(t.srcKeys, t.dstKeys, name, srcCol, dstCol)
		if err != nil {
			return nil, nil, nil, err
		}
		return src, dst, &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: verts}, nil
	}
	if !t.allInt {
		src, dst, v := t.strs.finish(t.srcProv, t.dstProv)
		v.Type = arrow.BinaryTypes.String
		return src, dst, v, nil
	}
	// Every id is an integer, some written non-canonically ("007", "+7",
	// " 7"): distinct strings may share a value.
	verts := slices.Clone(t.uniqueInts)
	slices.Sort(verts)
	verts = slices.Compact(verts)
	rank := make([]int32, len(t.uniqueInts))
	for p, v := range t.uniqueInts {
		i, _ := slices.BinarySearch(verts, v)
		rank[p] = int32(i)
	}
	src, dst := t.srcProv, t.dstProv
	parallelFor(len(src), func(a, b int) {
		for i := a; i < b; i++ {
			src[i], dst[i] = rank[src[i]], rank[dst[i]]
		}
	})
	return src, dst, &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: slices.Clip(verts)}, nil
}

// parseCanonicalInt parses a decimal integer written the way FormatInt
// writes it: an optional '-', no leading zeros, no "-0".
func parseCanonicalInt(s string) (int64, bool) {
	digits := s
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, digits = true, s[1:]
	}
	if len(digits) == 0 || len(digits) > 19 || (digits[0] == '0' && (len(digits) > 1 || neg)) {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i] - '0'
		if c > 9 {
			return 0, false
		}
		u = u*10 + uint64(c) // 19 digits cannot overflow uint64
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

// textWeights gathers weights parsed from text: int64 while every weight is
// an integer, float64 from the first one that is not.
type textWeights struct {
	ints   []int64
	floats []float64
}

func (w *textWeights) add(text string, name, col string, line int) error {
	s := strings.TrimSpace(text)
	if s == "" {
		return fmt.Errorf("arrowio: %s: column %q line %d: empty (null) weight", name, col, line)
	}
	if w.floats == nil {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			w.ints = append(w.ints, v)
			return nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return fmt.Errorf("arrowio: %s: column %q line %d: weight %q is out of range", name, col, line, text)
		}
		return fmt.Errorf("arrowio: %s: column %q line %d: weight %q is not a number", name, col, line, text)
	}
	if notFinite(f) {
		return fmt.Errorf("arrowio: %s: column %q line %d: weight %q is not finite", name, col, line, text)
	}
	if w.floats == nil {
		w.floats = make([]float64, len(w.ints), max(2*len(w.ints), 1024))
		for i, v := range w.ints {
			w.floats[i] = float64(v)
		}
		w.ints = nil
	}
	w.floats = append(w.floats, f)
	return nil
}

// lineMap maps data rows (0-based) to the lines they start on: row r is on
// line r+2 until a quoted field spans lines; only the rows where the offset
// changes are kept.
type lineMap struct {
	rows    int64
	changes []lineChange
}

type lineChange struct{ row, line int64 }

func (m *lineMap) add(line int) {
	if int64(line) != m.line(m.rows) {
		m.changes = append(m.changes, lineChange{m.rows, int64(line)})
	}
	m.rows++
}

func (m *lineMap) line(row int64) int64 {
	i, _ := slices.BinarySearchFunc(m.changes, row, func(c lineChange, r int64) int { return cmp.Compare(c.row, r) })
	if i < len(m.changes) && m.changes[i].row == row {
		return m.changes[i].line
	}
	if i == 0 {
		return row + 2
	}
	c := m.changes[i-1]
	return c.line + row - c.row
}
