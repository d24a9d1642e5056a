package ref

import (
	"container/heap"
	"errors"
	"fmt"
	"math"

	"github.com/pathctl/pathctl/graph"
)

// Dijkstra returns the distances from src over g's non-negative weights,
// Infinity where unreachable. It runs in O((n + m) log n) with a binary heap
// and lazy deletion. Negative weights give an error, and so does a path
// length that leaves the distance type (an error wrapping ErrOverflow):
// engines would drop or saturate it.
func Dijkstra[D graph.Number](g *graph.CSR, src graph.VertexID) ([]D, error) {
	if err := checkSource(g, src); err != nil {
		return nil, err
	}
	if g.HasNegative() {
		return nil, fmt.Errorf("ref: Dijkstra needs non-negative weights (min %v)", g.MinWeight)
	}
	w := graph.WeightsOf[D](g)
	dist := infinities[D](g.NumVertices)
	done := make([]bool, g.NumVertices)
	dist[src] = 0
	h := &minHeap[D]{{src, 0}}
	for h.Len() > 0 {
		it := heap.Pop(h).(item[D])
		u := it.v
		if done[u] {
			continue
		}
		done[u] = true
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			v := g.Targets[k]
			nd, ok := addChecked(dist[u], w[k])
			if !ok {
				return nil, overflow(src, u, v, dist[u], w[k])
			}
			if nd < dist[v] {
				dist[v] = nd
				heap.Push(h, item[D]{v, nd})
			}
		}
	}
	return dist, nil
}

// BellmanFord returns the distances from src over any weights. It runs at
// most n-1 rounds over every arc, O(n·m). When a negative cycle is reachable
// from src it returns a *graph.NegativeCycleError naming a vertex on it,
// found by walking predecessors n steps back from a vertex still relaxed in
// round n. A path length that leaves the distance type, above or below,
// gives an error wrapping ErrOverflow.
func BellmanFord[D graph.Number](g *graph.CSR, src graph.VertexID) ([]D, error) {
	if err := checkSource(g, src); err != nil {
		return nil, err
	}
	n := g.NumVertices
	w := graph.WeightsOf[D](g)
	inf := graph.Infinity[D]()
	dist := infinities[D](n)
	pred := make([]graph.VertexID, n)
	for i := range pred {
		pred[i] = -1
	}
	dist[src] = 0
	for round := 0; round < n; round++ {
		changed := graph.VertexID(-1)
		for u := 0; u < n; u++ {
			if dist[u] == inf {
				continue
			}
			for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
				v := g.Targets[k]
				nd, ok := addChecked(dist[u], w[k])
				if !ok {
					return nil, overflow(src, graph.VertexID(u), v, dist[u], w[k])
				}
				if nd < dist[v] {
					dist[v], pred[v] = nd, graph.VertexID(u)
					changed = v
				}
			}
		}
		if changed < 0 {
			return dist, nil
		}
		if round == n-1 {
			v := changed
			for range n {
				if pred[v] < 0 {
					return nil, fmt.Errorf("ref: source %d: predecessor walk left the graph at %d", src, v)
				}
				v = pred[v]
			}
			return nil, &graph.NegativeCycleError{Source: src, Vertex: v}
		}
	}
	return dist, nil
}

// FloydWarshall returns the n×n distance matrix, row s holding the distances
// from s, in O(n³) time and O(n²) memory. Weights may be negative; a negative
// cycle shows as a negative diagonal entry (the caller checks). For floats
// it adds path pieces in a different order than the single-source oracles,
// so compare it with them on weights whose sums are exact.
func FloydWarshall[D graph.Number](g *graph.CSR) [][]D {
	n := g.NumVertices
	w := graph.WeightsOf[D](g)
	d := make([][]D, n)
	for i := range d {
		d[i] = infinities[D](n)
		d[i][i] = 0
		for k := g.Offsets[i]; k < g.Offsets[i+1]; k++ {
			d[i][g.Targets[k]] = min(d[i][g.Targets[k]], w[k])
		}
	}
	inf := graph.Infinity[D]()
	for k := range n {
		for i := range n {
			if d[i][k] == inf {
				continue
			}
			for j := range n {
				if d[k][j] == inf {
					continue
				}
				if s := addClamped(d[i][k], d[k][j]); s < d[i][j] {
					d[i][j] = s
				}
			}
		}
	}
	return d
}

// BFS returns the hop counts from src, ignoring weights; math.MaxInt32
// (graph.Infinity[int32]) where unreachable. O(n + m).
func BFS(g *graph.CSR, src graph.VertexID) ([]int32, error) {
	if err := checkSource(g, src); err != nil {
		return nil, err
	}
	hops := infinities[int32](g.NumVertices)
	hops[src] = 0
	queue := []graph.VertexID{src}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			if v := g.Targets[k]; hops[v] == graph.Infinity[int32]() {
				hops[v] = hops[u] + 1
				queue = append(queue, v)
			}
		}
	}
	return hops, nil
}

// CheckPredecessors checks pred against dist by properties: pred[src] and
// pred of every unreachable vertex is -1; for every other reachable v,
// pred[v] = u names an arc u->v of g with dist[v] == dist[u] + w(u,v) in D's
// arithmetic; and following pred from any vertex reaches src without a
// cycle. It runs in O(n + m).
func CheckPredecessors[D graph.Number](g *graph.CSR, src graph.VertexID, dist []D, pred []graph.VertexID) error {
	n := g.NumVertices
	if len(dist) != n || len(pred) != n {
		return fmt.Errorf("ref: %d distances and %d predecessors for %d vertices", len(dist), len(pred), n)
	}
	if err := checkSource(g, src); err != nil {
		return err
	}
	inf := graph.Infinity[D]()
	for v := range n {
		p := pred[v]
		switch {
		case graph.VertexID(v) == src || dist[v] == inf:
			if p != -1 {
				return fmt.Errorf("ref: source %d: vertex %d (distance %v) has predecessor %d, want -1", src, v, dist[v], p)
			}
			continue
		case p < 0 || int(p) >= n:
			return fmt.Errorf("ref: source %d: reachable vertex %d has predecessor %d", src, v, p)
		}
		w, ok := arcWeight[D](g, p, graph.VertexID(v))
		if !ok {
			return fmt.Errorf("ref: source %d: predecessor %d of %d: no arc %d -> %d", src, p, v, p, v)
		}
		if got := graph.AddSaturating(dist[p], w); got != dist[v] {
			return fmt.Errorf("ref: source %d: dist[%d] = %v but dist[%d] + w = %v + %v = %v", src, v, dist[v], p, dist[p], w, got)
		}
	}
	// Every chain of predecessors ends at src: mark vertices known to lead
	// to src and walk each chain at most n steps.
	state := make([]uint8, n) // 0 unknown, 1 on the current walk, 2 leads to src
	state[src] = 2
	for v := range n {
		if dist[v] == inf {
			continue
		}
		x := graph.VertexID(v)
		for state[x] == 0 {
			state[x] = 1
			x = pred[x]
		}
		if state[x] == 1 {
			return fmt.Errorf("ref: source %d: predecessors of %d form a cycle through %d", src, v, x)
		}
		for y := graph.VertexID(v); state[y] == 1; y = pred[y] {
			state[y] = 2
		}
	}
	return nil
}

// arcWeight finds the arc u->v in u's row, which is sorted by target.
func arcWeight[D graph.Number](g *graph.CSR, u, v graph.VertexID) (D, bool) {
	lo, hi := g.Offsets[u], g.Offsets[u+1]
	for lo < hi {
		mid := lo + (hi-lo)/2
		switch t := g.Targets[mid]; {
		case t == v:
			return graph.WeightsOf[D](g)[mid], true
		case t < v:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

// ErrOverflow is wrapped by the oracles' error for a path length that the
// distance type cannot hold: an integer sum past the type's range or equal
// to its Infinity, or a float sum of finite terms that is infinite.
var ErrOverflow = errors.New("ref: path length overflows the distance type")

// addChecked returns d + w for a finite d, and false when the sum leaves
// D: it wraps around or reaches Infinity (integers), or is infinite
// (floats).
func addChecked[D graph.Number](d, w D) (D, bool) {
	s := d + w
	switch any(d).(type) {
	case int32, int64:
		if (w > 0 && s < d) || (w < 0 && s > d) || s == graph.Infinity[D]() {
			return s, false
		}
		return s, true
	}
	return s, !math.IsInf(float64(s), 0)
}

func overflow[D graph.Number](src, u, v graph.VertexID, d, w D) error {
	return fmt.Errorf("%w: from source %d, arc %d -> %d: %v + %v", ErrOverflow, src, u, v, d, w)
}

// addClamped is graph.AddSaturating that also keeps integer sums from
// wrapping below the smallest value (possible only around negative cycles).
func addClamped[D graph.Number](d, w D) D {
	s := graph.AddSaturating(d, w)
	if w < 0 && s > d {
		return minValue[D]()
	}
	return s
}

func minValue[D graph.Number]() D {
	var z D
	switch any(z).(type) {
	case int32:
		x := int32(math.MinInt32)
		return D(x)
	case int64:
		x := int64(math.MinInt64)
		return D(x)
	}
	return D(math.Inf(-1))
}

func checkSource(g *graph.CSR, src graph.VertexID) error {
	if src < 0 || int(src) >= g.NumVertices {
		return fmt.Errorf("ref: source %d outside [0, %d)", src, g.NumVertices)
	}
	return nil
}

func infinities[D graph.Number](n int) []D {
	d := make([]D, n)
	inf := graph.Infinity[D]()
	for i := range d {
		d[i] = inf
	}
	return d
}

type item[D graph.Number] struct {
	v graph.VertexID
	d D
}

type minHeap[D graph.Number] []item[D]

func (h minHeap[D]) Len() int           { return len(h) }
func (h minHeap[D]) Less(i, j int) bool { return h[i].d < h[j].d }
func (h minHeap[D]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap[D]) Push(x any)        { *h = append(*h, x.(item[D])) }
func (h *minHeap[D]) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
