package pipeline

import (
	"fmt"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// LoadOptions shape the graph built from an edge table.
type LoadOptions struct {
	// Undirected adds every row in both directions.
	Undirected bool
	// DistType overrides the distance type; 0 chooses by design.md's rule.
	DistType graph.DistType
}

// Graph is an edge table with its CSR, ready to run.
type Graph struct {
	Table      *arrowio.EdgeTable
	CSR        *graph.CSR
	Undirected bool
}

// LoadGraph builds the CSR of t. Errors name the table.
func LoadGraph(t *arrowio.EdgeTable, opt LoadOptions) (*Graph, error) {
	csr, err := graph.Build(&t.Edges, graph.BuildOptions{Undirected: opt.Undirected, DistType: opt.DistType})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	return &Graph{Table: t, CSR: csr, Undirected: opt.Undirected}, nil
}

// NumVertices is the vertex count.
func (g *Graph) NumVertices() int { return g.CSR.NumVertices }

// vertexName formats dense id v as its external id.
func (g *Graph) vertexName(v graph.VertexID) string {
	if v < 0 || int(v) >= g.Table.Vertices.Len() {
		return fmt.Sprint(v)
	}
	return g.Table.Vertices.Format(v)
}

// resolveSources maps external ids to dense ids; nil means every vertex.
func (g *Graph) resolveSources(ids []string) ([]graph.VertexID, error) {
	if ids == nil {
		all := make([]graph.VertexID, g.NumVertices())
		for i := range all {
			all[i] = graph.VertexID(i)
		}
		return all, nil
	}
	out := make([]graph.VertexID, 0, len(ids))
	for _, id := range ids {
		v, err := g.Table.Vertices.Lookup(id)
		if err != nil {
			return nil, fmt.Errorf("%w: source %q: %v", ErrInvalid, id, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// explain rewrites engine errors that carry dense ids with external ids.
func (g *Graph) explain(err error) error {
	switch e := err.(type) {
	case *graph.NegativeWeightError:
		return &externalError{err: e, msg: fmt.Sprintf(
			"%s: negative weight %v on edge %s -> %s: algorithm %q needs non-negative weights; use --algo bellman-ford",
			g.Table.Name, e.Weight, g.vertexName(e.From), g.vertexName(e.To), e.Algorithm)}
	case *graph.NegativeCycleError:
		return &externalError{err: e, msg: fmt.Sprintf(
			"%s: negative cycle through vertex %s (reachable from source %s)",
			g.Table.Name, g.vertexName(e.Vertex), g.vertexName(e.Source))}
	}
	return err
}

// externalError keeps the typed engine error for errors.As while its
// message speaks of external ids.
type externalError struct {
	err error
	msg string
}

func (e *externalError) Error() string { return e.msg }
func (e *externalError) Unwrap() error { return e.err }
