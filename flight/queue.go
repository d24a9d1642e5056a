package flight

import (
	"context"
	"sync"
)

// fairQueue hands out the server's computation slots (--max-concurrent)
// fairly among clients. A query that waits gets a round: how many queries
// of its client were running or waiting when it arrived (0 for a client's
// only query). When a slot frees, it goes to the waiting query of the
// lowest round, and among those to the one waiting longest. So a client's
// second query waits behind every other client's first, and one client
// sending many queries cannot starve the others.
//
// A client is its session token when authentication is on, otherwise its
// connection (peer address and port); see clientKey.
type fairQueue struct {
	mu      sync.Mutex
	free    int
	seq     uint64
	running map[string]int
	waiting map[string][]*queued
	// granted, when set (by tests, under mu), is told each client given a
	// slot, in the order they get it.
	granted func(client string)
}

type queued struct {
	round   int
	seq     uint64
	ready   chan struct{}
	granted bool
}

func newFairQueue(slots int) *fairQueue {
	return &fairQueue{free: slots, running: map[string]int{}, waiting: map[string][]*queued{}}
}

// acquire waits for a slot for client; the caller calls release(client)
// when done. It returns ctx's error if ctx ends first.
func (q *fairQueue) acquire(ctx context.Context, client string) error {
	q.mu.Lock()
	if q.free > 0 && len(q.waiting) == 0 {
		q.free--
		q.running[client]++
		if q.granted != nil {
			q.granted(client)
		}
		q.mu.Unlock()
		return nil
	}
	q.seq++
	w := &queued{round: q.running[client] + len(q.waiting[client]), seq: q.seq, ready: make(chan struct{})}
	q.waiting[client] = append(q.waiting[client], w)
	q.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if w.granted { // granted while giving up: pass the slot on
		q.releaseLocked(client)
		return ctx.Err()
	}
	ws := q.waiting[client]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(q.waiting, client)
	} else {
		q.waiting[client] = ws
	}
	return ctx.Err()
}

// release frees client's slot and grants it to the next in fair order.
func (q *fairQueue) release(client string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releaseLocked(client)
}

func (q *fairQueue) releaseLocked(client string) {
	if q.running[client]--; q.running[client] <= 0 {
		delete(q.running, client)
	}
	next, best := "", (*queued)(nil)
	for c, ws := range q.waiting {
		w := ws[0]
		if best == nil || w.round < best.round || (w.round == best.round && w.seq < best.seq) {
			next, best = c, w
		}
	}
	if best == nil {
		q.free++
		return
	}
	if ws := q.waiting[next][1:]; len(ws) == 0 {
		delete(q.waiting, next)
	} else {
		q.waiting[next] = ws
	}
	q.running[next]++
	best.granted = true
	if q.granted != nil {
		q.granted(next)
	}
	close(best.ready)
}
