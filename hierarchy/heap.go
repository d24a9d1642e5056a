package hierarchy

// heapItem is a tentative distance in a search's queue.
type heapItem struct {
	d int64
	v int32
}

// distHeap is a binary min-heap of tentative distances with lazy deletion:
// a vertex may be in it several times, and searches skip the entries
// above its current distance.
type distHeap []heapItem

func (h *distHeap) push(it heapItem) {
	*h = append(*h, it)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if q[p].d <= it.d {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = it
}

func (h *distHeap) pop() heapItem {
	q := *h
	top := q[0]
	last := q[len(q)-1]
	q = q[:len(q)-1]
	*h = q
	if len(q) == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= len(q) {
			break
		}
		if c+1 < len(q) && q[c+1].d < q[c].d {
			c++
		}
		if last.d <= q[c].d {
			break
		}
		q[i] = q[c]
		i = c
	}
	q[i] = last
	return top
}

// priorityQueue is an indexed binary min-heap of vertices by (priority,
// vertex id), so that the contraction order is deterministic.
type priorityQueue struct {
	key  []int64 // key[v]
	heap []int32
	pos  []int32 // pos[v] in heap, -1 when not queued
}

func newPriorityQueue(key []int64) *priorityQueue {
	n := len(key)
	q := &priorityQueue{key: key, heap: make([]int32, n), pos: make([]int32, n)}
	for v := range n {
		q.heap[v], q.pos[v] = int32(v), int32(v)
	}
	for i := n/2 - 1; i >= 0; i-- {
		q.down(i)
	}
	return q
}

func (q *priorityQueue) len() int { return len(q.heap) }

func (q *priorityQueue) less(a, b int32) bool {
	return q.key[a] < q.key[b] || (q.key[a] == q.key[b] && a < b)
}

// topKey is the least priority queued (the queue is not empty).
func (q *priorityQueue) topKey() int64 { return q.key[q.heap[0]] }

func (q *priorityQueue) pop() int32 {
	v := q.heap[0]
	last := len(q.heap) - 1
	q.swap(0, last)
	q.heap = q.heap[:last]
	q.pos[v] = -1
	if last > 0 {
		q.down(0)
	}
	return v
}

func (q *priorityQueue) push(v int32, key int64) {
	q.key[v] = key
	q.pos[v] = int32(len(q.heap))
	q.heap = append(q.heap, v)
	q.up(len(q.heap) - 1)
}

// update sets v's priority if v is queued.
func (q *priorityQueue) update(v int32, key int64) {
	i := q.pos[v]
	if i < 0 {
		return
	}
	q.key[v] = key
	q.up(int(i))
	q.down(int(q.pos[v]))
}

func (q *priorityQueue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.pos[q.heap[i]], q.pos[q.heap[j]] = int32(i), int32(j)
}

func (q *priorityQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(q.heap[i], q.heap[p]) {
			break
		}
		q.swap(i, p)
		i = p
	}
}

func (q *priorityQueue) down(i int) {
	n := len(q.heap)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && q.less(q.heap[c+1], q.heap[c]) {
			c++
		}
		if !q.less(q.heap[c], q.heap[i]) {
			return
		}
		q.swap(i, c)
		i = c
	}
}
