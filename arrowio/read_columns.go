package arrowio

// Finding the columns of an edge table in a schema: the source,
// destination and weight columns the options name (or the defaults), the
// kind of ids they hold and the id type both id columns widen to. It is
// apart from read_records.go because it looks at a schema only, before
// any batch is read.

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// idKind says whether a column holds integer or string ids.
type idKind uint8

const (
	kindInvalid idKind = iota
	kindInt
	kindString
)

// valueType is a column's type, or the value type of a dictionary column.
func valueType(t arrow.DataType) arrow.DataType {
	if d, ok := t.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return t
}

func idKindOf(t arrow.DataType) idKind {
	vt := valueType(t)
	switch {
	case arrow.IsInteger(vt.ID()):
		return kindInt
	case isStringType(vt):
		return kindString
	}
	return kindInvalid
}

func isWeightType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// columnSet locates the columns of an edge table in a schema.
type columnSet struct {
	src, dst, weight        int // field indices; weight is -1 when unweighted
	srcName, dstName, wName string
	srcType, dstType, wType arrow.DataType
	kind                    idKind
	idType                  arrow.DataType // Vertices.Type
	unsignedOrder           bool           // int ids compared as uint64
	guess                   weightGuess    // a weight column chosen without being named
}

func (c columnSet) fieldIndices() []int {
	idx := []int{c.src}
	if c.dst != c.src {
		idx = append(idx, c.dst)
	}
	if c.weight >= 0 {
		idx = append(idx, c.weight)
	}
	return idx
}

func columnNames(schema *arrow.Schema) string {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = fmt.Sprintf("%q", f.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// duplicateColumn is the error for a column name the schema holds more
// than once (at the 0-based positions idx): which one was meant is unknown.
func duplicateColumn(name, col string, idx []int) error {
	pos := make([]string, len(idx))
	for i, x := range idx {
		pos[i] = fmt.Sprint(x + 1)
	}
	return fmt.Errorf("arrowio: %s: column %q appears %d times (columns %s); rename all but one", name, col, len(idx), strings.Join(pos, ", "))
}

func findColumns(schema *arrow.Schema, name string, opt ReadOptions) (columnSet, error) {
	if opt.vertexTable {
		col, err := vertexColumn(fieldNames(schema), name, opt.SrcCol)
		if err != nil {
			return columnSet{}, err
		}
		opt.SrcCol, opt.DstCol = col, col
	}
	c := columnSet{weight: -1, srcName: opt.srcCol(), dstName: opt.dstCol(), wName: opt.weightCol()}
	find := func(col string) (int, error) {
		idx := schema.FieldIndices(col)
		if len(idx) == 0 {
			return -1, fmt.Errorf("arrowio: %s: no column %q (columns: %s)", name, col, columnNames(schema))
		}
		if len(idx) > 1 {
			return -1, duplicateColumn(name, col, idx)
		}
		return idx[0], nil
	}
	var err error
	if c.src, err = find(c.srcName); err != nil {
		return c, err
	}
	if c.dst, err = find(c.dstName); err != nil {
		return c, err
	}
	c.srcType, c.dstType = schema.Field(c.src).Type, schema.Field(c.dst).Type
	for _, col := range []struct {
		name string
		t    arrow.DataType
	}{{c.srcName, c.srcType}, {c.dstName, c.dstType}} {
		if idKindOf(col.t) == kindInvalid {
			return c, fmt.Errorf("arrowio: %s: column %q has type %s; ids must be integers (int8 … int64, uint8 … uint64) or strings (utf8, large_utf8, string_view, or a dictionary of them)", name, col.name, col.t)
		}
	}
	sk, dk := idKindOf(c.srcType), idKindOf(c.dstType)
	if sk != dk {
		return c, fmt.Errorf("arrowio: %s: column %q has type %s but column %q has type %s; ids must be both integers or both strings", name, c.srcName, c.srcType, c.dstName, c.dstType)
	}
	c.kind = sk
	if c.kind == kindInt {
		c.idType = commonIntType(valueType(c.srcType), valueType(c.dstType))
		c.unsignedOrder = c.idType.ID() == arrow.UINT64
	} else {
		c.idType = commonStringType(valueType(c.srcType), valueType(c.dstType))
	}
	if opt.Unweighted {
		return c, nil
	}
	idx := schema.FieldIndices(c.wName)
	if len(idx) == 0 {
		if opt.WeightCol != "" {
			return c, fmt.Errorf("arrowio: %s: no weight column %q (columns: %s)", name, c.wName, columnNames(schema))
		}
		if !opt.wantsGuess() {
			return c, nil
		}
		var w int
		if w, c.guess = guessWeightField(schema, c.src, c.dst); w < 0 {
			return c, nil
		}
		idx = []int{w}
		c.wName = c.guess.column
	}
	if len(idx) > 1 {
		return c, duplicateColumn(name, c.wName, idx)
	}
	c.weight = idx[0]
	c.wType = schema.Field(c.weight).Type
	if !isWeightType(c.wType) {
		return c, fmt.Errorf("arrowio: %s: column %q has type %s; weights must be integers (int8 … int64, uint8 … uint64) or floats (float16, float32, float64)", name, c.wName, c.wType)
	}
	return c, nil
}

var signedByWidth = map[int]arrow.DataType{
	8: arrow.PrimitiveTypes.Int8, 16: arrow.PrimitiveTypes.Int16,
	32: arrow.PrimitiveTypes.Int32, 64: arrow.PrimitiveTypes.Int64,
}

func isUnsigned(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func intWidth(t arrow.DataType) int { return t.(arrow.FixedWidthDataType).BitWidth() }

// commonIntType is the type both id columns widen to: the wider of two
// types of one signedness; for a signed and an unsigned type, a signed type
// wide enough for both (int64 for uint64, whose values must then fit).
func commonIntType(a, b arrow.DataType) arrow.DataType {
	if arrow.TypeEqual(a, b) {
		return a
	}
	ua, ub := isUnsigned(a), isUnsigned(b)
	wa, wb := intWidth(a), intWidth(b)
	if ua == ub {
		if wa >= wb {
			return a
		}
		return b
	}
	if ua { // make a the signed one
		wa, wb = wb, wa
	}
	return signedByWidth[min(64, max(wa, 2*wb))]
}

func commonStringType(a, b arrow.DataType) arrow.DataType {
	switch {
	case arrow.TypeEqual(a, b):
		return a
	case a.ID() == arrow.LARGE_STRING || b.ID() == arrow.LARGE_STRING:
		return arrow.BinaryTypes.LargeString
	}
	return arrow.BinaryTypes.String
}
