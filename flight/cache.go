package flight

import (
	"sync"

	"github.com/pathctl/pathctl/pipeline"
)

// loadedGraph is a stored graph read back into memory, once.
type loadedGraph struct {
	once sync.Once
	g    *pipeline.Graph
	err  error
	// bytes is the graph's memory (graphBytes) once loaded, 0 before;
	// lastUse orders entries for eviction. Both are guarded by the
	// cache's mutex.
	bytes   int64
	lastUse uint64
}

// graphCache keeps stored graphs in memory, by data file name, up to max
// bytes: past it, the graphs used least recently are forgotten first (a
// job running on one keeps it until it ends; the next query reads it
// again). A graph larger than max alone is still served, then forgotten.
type graphCache struct {
	mu      sync.Mutex
	max     int64
	used    int64 // bytes of the loaded entries
	clock   uint64
	entries map[string]*loadedGraph
}

func newGraphCache(max int64) *graphCache {
	return &graphCache{max: max, entries: map[string]*loadedGraph{}}
}

// entry returns the entry of data, adding an empty one (to be loaded by
// its once) if there is none, and marks it used.
func (c *graphCache) entry(data string) *loadedGraph {
	c.mu.Lock()
	defer c.mu.Unlock()
	lg, ok := c.entries[data]
	if !ok {
		lg = &loadedGraph{}
		c.entries[data] = lg
	}
	c.clock++
	lg.lastUse = c.clock
	return lg
}

// loaded records the size of lg, which its once has just loaded as data,
// and evicts down to the budget. An entry that failed to load is removed.
func (c *graphCache) loaded(data string, lg *loadedGraph) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[data] != lg {
		return // dropped or replaced while loading
	}
	if lg.err != nil {
		delete(c.entries, data)
		return
	}
	if lg.bytes == 0 {
		lg.bytes = graphBytes(lg.g)
		c.used += lg.bytes
	}
	c.clock++
	lg.lastUse = c.clock // the query that loaded it uses it now
	c.shrink()
}

// put adds a graph loaded elsewhere (an upload) as data, replacing any
// entry of that name, and evicts down to the budget.
func (c *graphCache) put(data string, g *pipeline.Graph) {
	lg := &loadedGraph{g: g, bytes: graphBytes(g)}
	lg.once.Do(func() {})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(data)
	c.clock++
	lg.lastUse = c.clock
	c.entries[data] = lg
	c.used += lg.bytes
	c.shrink()
}

// removeIf removes every entry whose data name drop reports true for.
func (c *graphCache) removeIf(drop func(data string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for data := range c.entries {
		if drop(data) {
			c.removeLocked(data)
		}
	}
}

func (c *graphCache) removeLocked(data string) {
	if lg, ok := c.entries[data]; ok {
		c.used -= lg.bytes
		delete(c.entries, data)
	}
}

// shrink forgets loaded entries, least recently used first, until the
// loaded bytes fit the budget. Entries still loading weigh nothing yet
// and stay.
func (c *graphCache) shrink() {
	for c.used > c.max {
		victim, oldest := "", ^uint64(0)
		for data, lg := range c.entries {
			if lg.bytes > 0 && lg.lastUse < oldest {
				victim, oldest = data, lg.lastUse
			}
		}
		if victim == "" {
			return
		}
		c.removeLocked(victim)
	}
}

// stats returns the loaded entries' count and bytes.
func (c *graphCache) stats() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, lg := range c.entries {
		if lg.bytes > 0 {
			entries++
		}
	}
	return entries, c.used
}

// graphBytes estimates the memory of a loaded graph: its edge table (ids,
// weights, external vertex ids) and its CSR.
func graphBytes(g *pipeline.Graph) int64 {
	var b int64
	if t := g.Table; t != nil {
		e := &t.Edges
		b += 4*int64(len(e.Src)+len(e.Dst)) + 8*int64(len(e.IntWeights)) + 4*int64(len(e.Float32Weights)) + 8*int64(len(e.Float64Weights))
		if v := t.Vertices; v != nil {
			b += 8 * int64(len(v.Ints))
			for _, s := range v.Strings {
				b += 16 + int64(len(s))
			}
		}
	}
	if c := g.CSR; c != nil {
		b += 8*int64(len(c.Offsets)) + 4*int64(len(c.Targets)) + int64(len(c.Targets))*int64(c.Type.Size())
	}
	return max(b, 1)
}
