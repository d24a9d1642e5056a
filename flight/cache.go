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
	// device is the device memory of its CSR kept resident (0 when not
	// kept); index is the memory of the contraction hierarchy kept with
	// it (index.go; 0 when none); lastUse orders entries for eviction.
	// All are guarded by the cache's mutex.
	bytes   int64
	device  int64
	index   int64
	lastUse uint64
}

// graphCache keeps stored graphs in memory, by data file name, up to max
// bytes, host and device memory together (with their hierarchies): past it, the graphs used least
// recently are forgotten first (a job running on one keeps it until it
// ends; the next query reads it again). A graph larger than max alone is
// still served, then forgotten. Forgetting a graph whose CSR is resident
// on the device frees that copy (through forget), as do a drop and a
// replacement.
type graphCache struct {
	mu      sync.Mutex
	max     int64
	used    int64 // bytes of the loaded entries, device bytes included
	clock   uint64
	entries map[string]*loadedGraph
	// forget frees the device copy of a graph removed from the cache; it
	// is called without the mutex, for the graphs in unkept.
	forget func(*pipeline.Graph)
	unkept []*pipeline.Graph
}

// newGraphCache returns a cache of max bytes; forget, when not nil, frees
// the device copy of a graph the cache removes (see addDevice).
func newGraphCache(max int64, forget func(*pipeline.Graph)) *graphCache {
	return &graphCache{max: max, entries: map[string]*loadedGraph{}, forget: forget}
}

// forgetRemoved calls forget for the graphs with a device copy that the
// cache removed; every method that may remove entries defers it before it
// takes the mutex, so that it runs once the mutex is released.
func (c *graphCache) forgetRemoved() {
	c.mu.Lock()
	gs := c.unkept
	c.unkept = nil
	c.mu.Unlock()
	for _, g := range gs {
		c.forget(g)
	}
}

// roomOnDevice reports whether the entry holding g is resident already,
// and whether it would still fit the budget with device more bytes: a
// graph that would not is not made resident (it would be forgotten, and
// its copy freed, at once). A graph no entry holds has no room.
func (c *graphCache) roomOnDevice(g *pipeline.Graph, device int64) (resident, fits bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, lg := range c.entries {
		if lg.g == g && lg.bytes > 0 {
			return lg.device > 0, lg.bytes+device <= c.max
		}
	}
	return false, false
}

// addDevice counts device bytes of g's CSR, which the caller has just made
// resident, in the entry holding g, and evicts down to the budget. Where
// no entry holds g any more (dropped, replaced or evicted meanwhile), the
// copy is forgotten at once. Counting an entry twice counts it once.
func (c *graphCache) addDevice(g *pipeline.Graph, device int64) {
	defer c.forgetRemoved()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, lg := range c.entries {
		if lg.g != g || lg.bytes == 0 {
			continue
		}
		if lg.device == 0 {
			lg.device = device
			c.used += device
		}
		c.clock++
		lg.lastUse = c.clock
		c.shrink()
		return
	}
	if c.forget != nil {
		c.unkept = append(c.unkept, g)
	}
}

// addIndex counts the bytes of the contraction hierarchy kept with g in
// the entry holding g, once, and evicts down to the budget; where no
// entry holds g (dropped, replaced or evicted meanwhile) it does nothing.
func (c *graphCache) addIndex(g *pipeline.Graph, bytes int64) {
	defer c.forgetRemoved()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, lg := range c.entries {
		if lg.g == g && lg.bytes > 0 {
			if lg.index == 0 {
				lg.index = bytes
				c.used += bytes
			}
			c.shrink()
			return
		}
	}
}

// clear removes every entry, forgetting the device copies (at shutdown).
func (c *graphCache) clear() {
	c.removeIf(func(string) bool { return true })
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
	defer c.forgetRemoved()
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
	defer c.forgetRemoved()
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
	defer c.forgetRemoved()
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
		c.used -= lg.bytes + lg.device + lg.index
		delete(c.entries, data)
		if lg.device > 0 && c.forget != nil {
			c.unkept = append(c.unkept, lg.g)
		}
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

// stats returns the loaded entries' count and bytes, device bytes
// included.
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

// deviceStats returns the count and the device bytes of the entries whose
// CSR is resident on the device.
func (c *graphCache) deviceStats() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, lg := range c.entries {
		if lg.device > 0 {
			entries++
			bytes += lg.device
		}
	}
	return entries, bytes
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
	b += csrBytes(g)
	return max(b, 1)
}

// csrBytes is the memory of g's CSR: int64 offsets, int32 targets and a
// weight per arc, on the host as on the device.
func csrBytes(g *pipeline.Graph) int64 {
	c := g.CSR
	if c == nil {
		return 0
	}
	return 8*int64(len(c.Offsets)) + 4*int64(len(c.Targets)) + int64(len(c.Targets))*int64(c.Type.Size())
}
