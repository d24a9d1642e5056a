package arrowio

// DIMACS shortest-path graphs (.gr), as the 9th DIMACS Implementation
// Challenge defines them:
//
//	c comment lines
//	p sp N M        one problem line: N vertices, M arcs
//	a U V W         M arc lines: from U to V (1-based) weighing W
//
// Vertices are 1..N, all of them, isolated ones included; external ids are
// int64 and weights int64. A count of arcs that differs from M is reported,
// which catches most truncated files.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/graph"
)

// nextField returns the next field of b starting at i, split on blanks.
func nextField(b []byte, i int) (field []byte, next int) {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	start := i
	for i < len(b) && b[i] != ' ' && b[i] != '\t' && b[i] != '\r' {
		i++
	}
	return b[start:i], i
}

// parseInt64 parses an optionally signed decimal integer without allocating.
func parseInt64(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, b = b[0] == '-', b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, ch := range b {
		c := ch - '0'
		if c > 9 || u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c)
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

// maxDIMACSLine bounds one line of a DIMACS file: an arc line is a few
// dozen bytes, comments rarely more than a hundred.
const maxDIMACSLine = 1 << 20

func readDIMACS(r io.Reader, name string, opt ReadOptions) (*EdgeTable, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxDIMACSLine)
	var (
		line        int
		n, m        int64
		seenProblem bool
		src, dst    []int32
		weights     []int64
		weighted    = !opt.Unweighted
		fields      [5][]byte
		problemLine int
	)
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("arrowio: %s: line %d: "+format, append([]any{name, line}, args...)...)
	}
	for sc.Scan() {
		line++
		if line%readerCheckRows == 0 {
			if err := opt.interrupted(name); err != nil {
				return nil, err
			}
		}
		b := sc.Bytes()
		count, next := 0, 0
		for count < len(fields) {
			var f []byte
			if f, next = nextField(b, next); len(f) == 0 {
				break
			}
			fields[count] = f
			count++
		}
		if count == 0 {
			continue
		}
		switch string(fields[0]) {
		case "c":
			continue
		case "p":
			if seenProblem {
				return nil, errorf("second problem line (the first is line %d)", problemLine)
			}
			if count != 4 || string(fields[1]) != "sp" {
				return nil, errorf("problem line %q is not \"p sp N M\"", b)
			}
			var ok1, ok2 bool
			n, ok1 = parseInt64(fields[2])
			m, ok2 = parseInt64(fields[3])
			if !ok1 || !ok2 || n < 0 || m < 0 {
				return nil, errorf("problem line %q: N and M must be non-negative integers", b)
			}
			if n > int64(maxVertexCount) {
				return nil, errorf("%d vertices, more than %d; dense ids are int32", n, maxVertexCount)
			}
			if limit := opt.maxVertices(); n > int64(limit) {
				return nil, errorf("the problem line declares %d vertices, more than the limit of %d (--max-vertices); vertices 1..N are allocated from the header, so raise the limit only for a graph that really has them", n, limit)
			}
			seenProblem, problemLine = true, line
			capacity := min(m, 1<<20) // grown as arcs arrive; m may lie
			src, dst = make([]int32, 0, capacity), make([]int32, 0, capacity)
			if weighted {
				weights = make([]int64, 0, capacity)
			}
		case "a":
			if !seenProblem {
				return nil, errorf("arc before the problem line \"p sp N M\"")
			}
			if count != 4 {
				return nil, errorf("arc line %q is not \"a U V W\"", b)
			}
			u, okU := parseInt64(fields[1])
			v, okV := parseInt64(fields[2])
			w, okW := parseInt64(fields[3])
			switch {
			case !okU || u < 1 || u > n:
				return nil, errorf("arc tail %q is not a vertex in 1..%d", fields[1], n)
			case !okV || v < 1 || v > n:
				return nil, errorf("arc head %q is not a vertex in 1..%d", fields[2], n)
			case !okW:
				return nil, errorf("arc weight %q is not an int64 integer", fields[3])
			}
			src, dst = append(src, int32(u-1)), append(dst, int32(v-1))
			if weighted {
				weights = append(weights, w)
			}
		default:
			return nil, errorf("unknown line type %q (want c, p or a)", fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("arrowio: %s: line %d is longer than %d bytes, the limit of a DIMACS line", name, line+1, maxDIMACSLine)
		}
		return nil, fmt.Errorf("arrowio: %s: after line %d: %w", name, line, err)
	}
	if err := opt.interrupted(name); err != nil {
		return nil, err
	}
	if !seenProblem {
		return nil, fmt.Errorf("arrowio: %s: no problem line \"p sp N M\"", name)
	}
	if int64(len(src)) != m {
		return nil, fmt.Errorf("arrowio: %s: line %d: the problem line announces %d arcs but %d were read (truncated file?)", name, problemLine, m, len(src))
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i) + 1
	}
	t := &EdgeTable{
		Name:     name,
		Vertices: &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ids},
		Edges:    graph.Edges{NumVertices: int(n), Src: src, Dst: dst},
	}
	if weighted {
		t.Edges.IntWeights = weights
		t.WeightType = arrow.PrimitiveTypes.Int64
	}
	return t, nil
}
