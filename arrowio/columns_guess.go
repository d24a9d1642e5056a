package arrowio

// Choosing columns that the options leave unnamed: the weight column of an
// edge table whose weight is not called "weight", and the id column of a
// vertex table.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// weightGuess is what findColumns and the CSV reader decided about a weight
// column that ReadOptions did not name and that is not called "weight".
type weightGuess struct {
	column string   // the column taken as the weight, "" if none
	unused []string // numeric columns left unused, when more than one could be the weight
	reason string   // why a lone candidate was not taken after all (CSV)
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

// looksNumeric reports whether a CSV field reads as a finite number.
func looksNumeric(text string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	return err == nil && !notFinite(f)
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
