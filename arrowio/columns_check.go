package arrowio

import (
	"errors"
	"fmt"
)

// ErrSameColumn is matched (errors.Is) by the error of a read whose options
// name one column for two roles: the source and destination columns, or
// the weight column and an id column. Read as asked, every row would be a
// self-loop (all distances 0) or ids would be weights; it is a mistake in
// the request, not in the data, so the CLI exits 2 on it and Flight answers
// InvalidArgument.
var ErrSameColumn = errors.New("arrowio: one column is named for two roles")

// sameColumnError names the two options that name one column. The flags
// are the CLI's (Flight's and Python's src_col, dst_col and weight_col say
// the same).
type sameColumnError struct {
	name         string // the input
	role1, role2 string // "source", "destination", "weight"
	flag1, flag2 string
	column, why  string
}

func (e *sameColumnError) Error() string {
	return fmt.Sprintf("arrowio: %s: the %s and %s columns (--%s, --%s) are both %q: %s; name two different columns",
		e.name, e.role1, e.role2, e.flag1, e.flag2, e.column, e.why)
}

func (e *sameColumnError) Is(target error) bool { return target == ErrSameColumn }

// checkColumns refuses options that name one column twice, before anything
// is read. A vertex table reads its one id column as both ends on purpose.
func (o *ReadOptions) checkColumns(name string) error {
	if o.vertexTable {
		return nil
	}
	src, dst := o.srcCol(), o.dstCol()
	if src == dst {
		return &sameColumnError{name: name, role1: "source", role2: "destination", flag1: "src-col", flag2: "dst-col",
			column: src, why: "every row would be a self-loop"}
	}
	if o.WeightCol == "" || o.Unweighted {
		return nil
	}
	for _, id := range []struct{ role, flag, col string }{{"source", "src-col", src}, {"destination", "dst-col", dst}} {
		if o.WeightCol == id.col {
			return &sameColumnError{name: name, role1: id.role, role2: "weight", flag1: id.flag, flag2: "weight-col",
				column: id.col, why: "its ids would be read as weights"}
		}
	}
	return nil
}
