package arrowio

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/graph"
)

// Layout names the shape of a result (design.md, "Outputs").
type Layout string

// The result layouts.
const (
	// LayoutPairs has one row per reachable (source, target) pair.
	LayoutPairs Layout = "pairs"
	// LayoutMatrix has one row per source with every distance in vertex order.
	LayoutMatrix Layout = "matrix"
	// LayoutStats has one row per source with reductions of its distances.
	LayoutStats Layout = "stats"
	// LayoutNearest has one row per vertex some source reaches: its
	// distance to the nearest source, and that source.
	LayoutNearest Layout = "nearest"
	// LayoutBetweenness has one row per vertex: its betweenness
	// centrality (result_betweenness.go).
	LayoutBetweenness Layout = "betweenness"
	// LayoutEdgeBetweenness has one row per edge: its betweenness
	// centrality (result_betweenness.go).
	LayoutEdgeBetweenness Layout = "edge-betweenness"
)

// ParseLayout accepts "pairs", "matrix", "stats", "nearest",
// "betweenness" and "edge-betweenness".
func ParseLayout(s string) (Layout, error) {
	switch l := Layout(s); l {
	case LayoutPairs, LayoutMatrix, LayoutStats, LayoutNearest, LayoutBetweenness, LayoutEdgeBetweenness:
		return l, nil
	}
	return "", fmt.Errorf("arrowio: unknown layout %q (want pairs, matrix, stats, nearest, betweenness or edge-betweenness)", s)
}

// IsBetweenness reports whether l is one of the betweenness layouts, of
// vertices or of edges: their rows are not per source, and they share
// their options.
func (l Layout) IsBetweenness() bool {
	return l == LayoutBetweenness || l == LayoutEdgeBetweenness
}

// Schema metadata keys of a result. ResultSchema sets MetaLayout,
// MetaDistType and MetaNumVertices; callers add the others with
// ResultBuilder.SetMetadata.
const (
	MetaLayout      = "pathctl.layout"       // "pairs", "matrix" or "stats"
	MetaDistType    = "pathctl.dist_type"    // "int32", "int64", "float32" or "float64"
	MetaNumVertices = "pathctl.num_vertices" // vertex count n, decimal
	MetaAlgorithm   = "pathctl.algorithm"    // the algorithm that ran
	MetaVertices    = "pathctl.vertices"     // matrix: file holding the vertex order
)

// Column names of the result layouts.
const (
	ColSource       = "source"
	ColTarget       = "target"
	ColDistance     = "distance"
	ColPredecessor  = "predecessor"
	ColReachable    = "reachable"
	ColEccentricity = "eccentricity"
	ColSum          = "sum"
	ColCloseness    = "closeness"
	ColHarmonic     = "harmonic"
	ColVertex       = "vertex"
	ColRank         = "rank"
	ColPath         = "path"
	ColBetweenness  = "betweenness"
	ColSrc          = "src" // edge-betweenness: an edge's ends, as in the input
	ColDst          = "dst"
)

// MetaNumTargets is the schema metadata key of a result narrowed to some
// targets (Shape.Targets): their count, decimal.
const MetaNumTargets = "pathctl.num_targets"

// Shape narrows a result below all pairs (design.md, "Queries narrower
// than all pairs"). The zero value is every source to every vertex.
type Shape struct {
	// Targets, when above 0, is the number of target columns: the matrix
	// layout's list has that size (the origin–destination matrix).
	Targets int
	// Rank adds an int32 rank column (from 1) after the distance of the
	// pairs layout: the k nearest of each source.
	Rank bool
	// Paths adds a path column list<id> at the end of the pairs layout:
	// the vertices from the source to the target, both included, walked
	// back from the target along graph.Block.PathPred.
	Paths bool
}

// maxPairsRows caps the rows of one pairs record.
const maxPairsRows = 1 << 20

// maxPathVertices caps the path vertices of one pairs record with paths:
// a record ends early once its paths hold this many, so that the scratch
// and the path column (4 M ids: 16 MiB of dense ids, 32 MiB of int64 ids)
// stay bounded however long the paths are, and the list offsets (int32)
// cannot overflow. Paths of 1,000 vertices make records of about 4,000
// rows; a single path longer than the cap goes alone.
const maxPathVertices = 1 << 22

// IDType is the Arrow type in which results carry external ids: the input's
// integer type, utf8 for utf8 and string-view ids, large_utf8 for large_utf8.
func IDType(v *Vertices) arrow.DataType {
	if v.IsString() {
		if v.Type != nil && v.Type.ID() == arrow.LARGE_STRING {
			return arrow.BinaryTypes.LargeString
		}
		return arrow.BinaryTypes.String
	}
	if v.Type == nil {
		return arrow.PrimitiveTypes.Int64
	}
	switch v.Type.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return v.Type
	}
	return arrow.PrimitiveTypes.Int64
}

// DistArrowType is the Arrow type of distances of type t.
func DistArrowType(t graph.DistType) arrow.DataType {
	switch t {
	case graph.DistInt32:
		return arrow.PrimitiveTypes.Int32
	case graph.DistInt64:
		return arrow.PrimitiveTypes.Int64
	case graph.DistFloat32:
		return arrow.PrimitiveTypes.Float32
	default:
		return arrow.PrimitiveTypes.Float64
	}
}

// ResultSchema is the schema of a result (design.md, "Outputs"):
//
//   - pairs: source, target (id type), distance (t), and with withPred a
//     nullable predecessor (id type), null for the source itself;
//   - matrix: source, distance fixed_size_list<t>[n] in vertex order, with
//     null entries for unreachable vertices under integer types and +Inf
//     under float types;
//   - stats: source, reachable int64, eccentricity (t, null when reachable
//     is 0), sum (int64 for integer t, float64 for float t), closeness
//     float64, harmonic float64.
//
// Ids carry the type IDType(v) gives. The metadata holds MetaLayout,
// MetaDistType and MetaNumVertices. An unknown layout gives the pairs schema;
// use ParseLayout to validate names.
func ResultSchema(layout Layout, v *Vertices, t graph.DistType, withPred bool) *arrow.Schema {
	return ShapedSchema(layout, v, t, withPred, Shape{})
}

// ShapedSchema is ResultSchema narrowed to shape: a matrix list of
// shape.Targets distances, a rank column in pairs, and MetaNumTargets.
func ShapedSchema(layout Layout, v *Vertices, t graph.DistType, withPred bool, shape Shape) *arrow.Schema {
	s := resultSchema(layout, v, t, withPred, shape)
	if shape.Targets <= 0 {
		return s
	}
	md := s.Metadata()
	meta := arrow.NewMetadata(append(md.Keys(), MetaNumTargets), append(md.Values(), strconv.Itoa(shape.Targets)))
	return arrow.NewSchema(s.Fields(), &meta)
}

func resultSchema(layout Layout, v *Vertices, t graph.DistType, withPred bool, shape Shape) *arrow.Schema {
	width := v.Len()
	if shape.Targets > 0 {
		width = shape.Targets
	}
	id := IDType(v)
	dt := DistArrowType(t)
	meta := arrow.NewMetadata(
		[]string{MetaLayout, MetaDistType, MetaNumVertices},
		[]string{string(layout), t.String(), strconv.Itoa(v.Len())},
	)
	var fields []arrow.Field
	switch layout {
	case LayoutBetweenness:
		return betweennessSchema(v)
	case LayoutEdgeBetweenness:
		return edgeBetweennessSchema(v)
	case LayoutNearest:
		fields = []arrow.Field{
			{Name: ColVertex, Type: id},
			{Name: ColDistance, Type: dt},
			{Name: ColSource, Type: id},
		}
	case LayoutMatrix:
		fields = []arrow.Field{
			{Name: ColSource, Type: id},
			{Name: ColDistance, Type: matrixListType(width, t)},
		}
	case LayoutStats:
		sum := arrow.DataType(arrow.PrimitiveTypes.Int64)
		if t.IsFloat() {
			sum = arrow.PrimitiveTypes.Float64
		}
		fields = []arrow.Field{
			{Name: ColSource, Type: id},
			{Name: ColReachable, Type: arrow.PrimitiveTypes.Int64},
			{Name: ColEccentricity, Type: dt, Nullable: true},
			{Name: ColSum, Type: sum},
			{Name: ColCloseness, Type: arrow.PrimitiveTypes.Float64},
			{Name: ColHarmonic, Type: arrow.PrimitiveTypes.Float64},
		}
	default:
		meta = arrow.NewMetadata(
			[]string{MetaLayout, MetaDistType, MetaNumVertices},
			[]string{string(LayoutPairs), t.String(), strconv.Itoa(v.Len())},
		)
		fields = []arrow.Field{
			{Name: ColSource, Type: id},
			{Name: ColTarget, Type: id},
			{Name: ColDistance, Type: dt},
		}
		if shape.Rank {
			fields = append(fields, arrow.Field{Name: ColRank, Type: arrow.PrimitiveTypes.Int32})
		}
		if withPred {
			fields = append(fields, arrow.Field{Name: ColPredecessor, Type: id, Nullable: true})
		}
		if shape.Paths {
			fields = append(fields, arrow.Field{Name: ColPath, Type: arrow.ListOf(id)})
		}
	}
	return arrow.NewSchema(fields, &meta)
}

func matrixListType(n int, t graph.DistType) *arrow.FixedSizeListType {
	// Arrow has no fixed-size list of zero elements; a graph without
	// vertices has no sources either, so its matrix has no rows and the
	// list size of its schema is never used.
	n = max(n, 1)
	return arrow.FixedSizeListOfField(int32(n), arrow.Field{Name: "item", Type: DistArrowType(t), Nullable: true})
}
