package hierarchy

// Witness searches of the contraction (contract.go): a Dijkstra over the
// remaining graph from an in-neighbour u of the vertex v being contracted,
// avoiding v (and, in a round, the vertices of the independent set
// contracted before v), bounded in the vertices it settles, and through
// no vertex of more than maxWitnessFanout arcs. A bounded
// search may miss a witness; it never reports one that is not a path.
//
// Hop limits on these searches (Geisberger et al.) were measured on
// road-like grids and not kept: with 3 to 5 hops the priorities are worse
// estimates and the contraction adds 1.5 to 4 % more shortcuts for no less
// work (the searches already stop at 20 settled vertices), and hop-limited
// contraction searches multiply the shortcuts.

// maxWitnessFanout is the most out-arcs of a vertex a witness path may
// pass through: a hub of an R-MAT or social graph, thousands of arcs,
// would put thousands of vertices in the queue of every search near it.
// Road-like grids stay below it until their last hundred vertices.
const maxWitnessFanout = 64

// witness is the workspace of one witness search.
type witness struct {
	node    []witnessNode
	touched []int32
	targets []witnessTarget
	stamp   uint32
	heap    distHeap
}

// witnessNode is a vertex's state in the searches, in one place so that
// a search touches one cache line per vertex.
type witnessNode struct {
	dist   int64  // Infinity when untouched
	target uint32 // == stamp for the search's targets not done
}

func newWitness(n int) *witness {
	ws := &witness{node: make([]witnessNode, n)}
	for i := range ws.node {
		ws.node[i].dist = Infinity
	}
	return ws
}

// dist is the length of the path the last search found to v, Infinity
// when it found none.
func (ws *witness) dist(v int32) int64 { return ws.node[v].dist }

// witnessTarget is a target of a search: an out-neighbour x of the
// vertex being contracted, and the length w(u,v)+w(v,x) a witness must not
// pass.
type witnessTarget struct {
	v     int32
	limit int64
}

// addTarget makes v a target of the next search, witnessed by a path of
// at most limit.
func (ws *witness) addTarget(v int32, limit int64) {
	ws.node[v].target = ws.stamp
	ws.targets = append(ws.targets, witnessTarget{v, limit})
}

// search runs Dijkstra from src over the remaining graph without skip and
// without the round's vertices numbered at most pos in b.roundPos, for
// the targets of addTarget. A target is done once a path to it is within
// its limit (a witness), or once it is settled beyond (none can be); the
// search stops when every target is done, when the queue's least
// distance passes the largest limit of a target not done, or when it has
// settled settled vertices. ws.dist then holds the length of some path avoiding those vertices, or
// Infinity.
func (ws *witness) search(b *builder, src, skip int32, pos uint32, settled int) {
	node := ws.node
	pending := len(ws.targets)
	bound := ws.bound()
	node[src].dist = 0
	ws.touched = append(ws.touched, src)
	ws.heap = append(ws.heap[:0], heapItem{0, src})
	roundPos := b.roundPos
	for len(ws.heap) > 0 && settled > 0 {
		it := ws.heap.pop()
		u := it.v
		nu := &node[u]
		if it.d > nu.dist {
			continue
		}
		if it.d > bound {
			return
		}
		settled--
		if nu.target == ws.stamp {
			// Settled beyond its limit: no witness for this target.
			nu.target = 0
			if pending--; pending == 0 {
				return
			}
			bound = ws.bound()
		}
		if len(b.out[u]) > maxWitnessFanout {
			continue
		}
		for _, a := range b.out[u] {
			x := a.to
			if x == skip {
				continue
			}
			if pos != 0 {
				if p := roundPos[x]; p != 0 && p <= pos {
					continue
				}
			}
			d := it.d + a.w
			nx := &node[x]
			if d > bound || d >= nx.dist {
				continue
			}
			if nx.dist == Infinity {
				ws.touched = append(ws.touched, x)
			}
			nx.dist = d
			if nx.target == ws.stamp && d <= ws.limit(x) {
				nx.target = 0 // witnessed
				if pending--; pending == 0 {
					return
				}
				bound = ws.bound()
			}
			ws.heap.push(heapItem{d, x}) // a witnessed target may lead to others
		}
	}
}

// bound is the largest limit of the targets not done.
func (ws *witness) bound() int64 {
	bound := int64(-1)
	for _, t := range ws.targets {
		if ws.node[t.v].target == ws.stamp {
			bound = max(bound, t.limit)
		}
	}
	return bound
}

// limit is target x's limit.
func (ws *witness) limit(x int32) int64 {
	for _, t := range ws.targets {
		if t.v == x {
			return t.limit
		}
	}
	return -1
}

// nextStamp starts a new target set, clearing the marks when the stamp
// wraps around.
func (ws *witness) nextStamp() {
	if ws.stamp++; ws.stamp == 0 {
		for i := range ws.node {
			ws.node[i].target = 0
		}
		ws.stamp = 1
	}
}

func (ws *witness) reset() {
	for _, v := range ws.touched {
		ws.node[v].dist = Infinity
	}
	ws.touched = ws.touched[:0]
	ws.targets = ws.targets[:0]
}
