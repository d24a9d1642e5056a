package arrowio

// Choosing columns that the options leave unnamed: the weight column of an
// edge table whose weight is not called "weight", and the id column of a
// vertex table.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// weightGuess is what findColumns and the CSV reader decided about a weight
// column that ReadOptions did not name and that is not called "weight". A
// lone numeric column besides the ids is the weight in every format,
// whatever text columns there are beside it.
type weightGuess struct {
	column string   // the column taken as the weight, "" if none
	unused []string // numeric columns left unused, when more than one could be the weight
	reason string   // why the one column in unused is not numeric after all (CSV)
}

// note is the sentence EdgeTable.WeightNote carries: what was done, without
// naming the flags or keywords of any one surface.
func (g weightGuess) note(defaultName string) string {
	switch {
	case g.column != "":
		return fmt.Sprintf("took column %q as the edge weight (no column is named %q)", g.column, defaultName)
	case g.reason != "":
		return fmt.Sprintf("column %q was not taken as the edge weight (%s); distances count edges", g.unused[0], g.reason)
	case len(g.unused) > 0:
		return fmt.Sprintf("no column is named %q, so distances count edges; the numeric columns %s are unused", defaultName, quoteAll(g.unused))
	}
	return ""
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// wantsGuess reports whether a weight column may be chosen for the user:
// none is named, Unweighted is false, and the default one is missing.
func (o *ReadOptions) wantsGuess() bool { return o.WeightCol == "" && !o.Unweighted && !o.vertexTable }

// guessWeightField picks the weight among the fields of schema other than
// the id columns src and dst: the only one of a weight type, if there is
// exactly one.
func guessWeightField(schema *arrow.Schema, src, dst int) (int, weightGuess) {
	var idx []int
	var names []string
	for i, f := range schema.Fields() {
		if i != src && i != dst && isWeightType(f.Type) && !isIndexColumn(f.Name) {
			idx = append(idx, i)
			names = append(names, f.Name)
		}
	}
	switch len(idx) {
	case 0:
		return -1, weightGuess{}
	case 1:
		return idx[0], weightGuess{column: names[0]}
	}
	return -1, weightGuess{unused: names}
}

// isIndexColumn reports whether a column is a row index that pandas wrote
// beside the data (to_parquet's "__index_level_0__", to_csv's unnamed first
// column, read back as "Unnamed: 0"): never a weight.
func isIndexColumn(name string) bool {
	name = strings.TrimSpace(name)
	return name == "" || strings.HasPrefix(name, "__index_level_") || strings.HasPrefix(name, "Unnamed: ")
}

// weightCandidate is a column of a CSV or TSV table, other than the ids,
// that may be the weight of a table naming none. The rule is the one typed
// formats apply to their fields: the column is numeric when it holds a
// number and every non-empty value parses as one (integers, decimals,
// exponents, and NaN or infinities, which are numbers that no weight may
// be). An empty cell is a null: it leaves the column numeric, and a null
// weight is refused, as a null in a Parquet weight column is. Its values
// are kept, parsed, while the column is numeric, so that it can be the
// weight once the last row tells that it is the only numeric column.
type weightCandidate struct {
	col     int
	name    string
	weights textWeights
	numbers int   // non-empty values read
	bad     error // the first null, NaN, infinite or out-of-range value: the error if taken
	text    bool  // a non-empty value is not a number
	// The first value that is not a number, with its line, when numbers
	// came before it: the note says why the column was not taken.
	textLine  int
	textValue string
}

// add reads the candidate's field of one row.
func (c *weightCandidate) add(field, name string, line int) {
	if c.text {
		return
	}
	s := strings.TrimSpace(field)
	if s != "" && !parsesAsNumber(s) {
		if c.numbers > 0 {
			c.textLine, c.textValue = line, field
		}
		c.text, c.weights, c.bad = true, textWeights{}, nil
		return
	}
	if s != "" {
		c.numbers++
	}
	if c.bad != nil {
		return
	}
	if err := c.weights.add(field, name, c.name, line); err != nil {
		c.bad, c.weights = err, textWeights{}
	}
}

// parsesAsNumber reports whether a trimmed CSV field is written as a
// number, finite or not.
func parsesAsNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// chooseWeightCandidate applies the rule of guessWeightField to the
// candidates read from every row: the only numeric one is the weight (its
// first bad value is the error); none or several leave distances counting
// edges, with a note naming the numeric ones, or the column that was
// numeric until a value that is not.
func chooseWeightCandidate(candidates []*weightCandidate) (weightGuess, *weightCandidate, error) {
	var numeric []*weightCandidate
	var names []string
	for _, c := range candidates {
		if !c.text && c.numbers > 0 {
			numeric, names = append(numeric, c), append(names, c.name)
		}
	}
	switch len(numeric) {
	case 1:
		if c := numeric[0]; c.bad != nil {
			return weightGuess{}, nil, c.bad
		}
		return weightGuess{column: names[0]}, numeric[0], nil
	case 0:
		for _, c := range candidates {
			if c.textLine > 0 {
				return weightGuess{unused: []string{c.name}, reason: fmt.Sprintf("line %d holds %q", c.textLine, c.textValue)}, nil, nil
			}
		}
		return weightGuess{}, nil, nil
	}
	return weightGuess{unused: names}, nil, nil
}

// vertexColumn chooses the id column of a vertex table: the one named, else
// the only column, else the one called "vertex" (as pathctl writes them) or
// "id".
func vertexColumn(columns []string, name, named string) (string, error) {
	switch {
	case named != "":
		if !slices.Contains(columns, named) {
			return "", fmt.Errorf("arrowio: %s: no vertex column %q (columns: %s)", name, named, quoteAll(columns))
		}
		return named, nil
	case len(columns) == 1:
		return columns[0], nil
	}
	for _, c := range []string{ColVertex, "id"} {
		if slices.Contains(columns, c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("arrowio: %s: a vertex table needs one id column, or one named %q or %q (columns: %s)", name, ColVertex, "id", quoteAll(columns))
}

func fieldNames(schema *arrow.Schema) []string {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	return names
}
