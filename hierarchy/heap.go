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
