package flight

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/gen"
)

// memBudget is the server-wide byte budget (--max-memory) for what the
// requests in flight hold: an upload reserves the memory its decoding
// takes as its messages arrive (see uploadMemoryFactor), a query what its
// run and results take. A request that asks for more than is free waits in
// a FIFO queue until enough is released or its context ends; one that
// asks for more than the whole budget fails at once. Every error is a gRPC
// status naming --max-memory.
//
// A caller that holds bytes already and wants more calls grow, never
// acquire: growing waits ahead of the acquirers (finishing a request frees
// memory), and a holder waiting while holding could otherwise deadlock.
// When every byte in use is held by growers that wait, no release can come:
// the youngest grower fails at once with RESOURCE_EXHAUSTED, and the
// release that follows lets the older ones finish.
//
// A total of 0 is unbounded: every call succeeds at once, and used still
// counts. The methods of a nil *memBudget succeed at once too.
//
// memBudget also counts the uploads in progress, for --max-uploads
// (startUpload, endUpload).
type memBudget struct {
	total int64 // 0: unbounded

	mu   sync.Mutex
	used int64
	// waitingHeld is what the growers in queue hold.
	waitingHeld int64
	// queue holds the growers, then the acquirers, each in arrival order.
	queue []*budgetWaiter

	uploads atomic.Int64
}

// budgetWaiter is a call of acquire or grow waiting in queue.
type budgetWaiter struct {
	n, held int64
	grower  bool
	// done receives nil once n bytes are granted, or why they will not be.
	done chan error
}

// newMemBudget is a budget of total bytes; 0 means unbounded.
func newMemBudget(total int64) *memBudget { return &memBudget{total: max(total, 0)} }

// acquire takes n bytes, waiting in FIFO order until they are free or ctx
// ends. n over the whole budget fails at once.
func (b *memBudget) acquire(ctx context.Context, n int64) error {
	return b.wait(ctx, 0, n, false)
}

// grow adds n bytes to a reservation of held bytes that the caller holds,
// waiting ahead of acquire calls. On error the caller still holds held.
func (b *memBudget) grow(ctx context.Context, held, n int64) error {
	return b.wait(ctx, held, n, true)
}

// tryAcquire takes n bytes if they are free and nobody waits, without
// waiting; it reports whether it took them.
func (b *memBudget) tryAcquire(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total == 0 || (len(b.queue) == 0 && b.used+n <= b.total) {
		b.used += n
		return true
	}
	return false
}

// release gives back n bytes taken by acquire, tryAcquire or grow.
func (b *memBudget) release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.serveLocked()
}

// inUse is the number of bytes held now.
func (b *memBudget) inUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *memBudget) wait(ctx context.Context, held, n int64, grower bool) error {
	if b == nil || n <= 0 {
		return nil
	}
	if b.total > 0 && n > b.total-held {
		return status.Errorf(codes.ResourceExhausted,
			"flight: the request needs %s of memory, more than the server's whole budget of %s (--max-memory)",
			gen.HumanBytes(held+n), gen.HumanBytes(b.total))
	}
	b.mu.Lock()
	// Growers pass the acquirers; each kind waits behind its own kind.
	ahead := len(b.queue)
	if grower {
		ahead = b.growersLocked()
	}
	if b.total == 0 || (ahead == 0 && b.used+n <= b.total) {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, held: held, grower: grower, done: make(chan error, 1)}
	b.queue = slices.Insert(b.queue, ahead, w)
	if grower {
		b.waitingHeld += held
	}
	b.breakDeadlockLocked()
	b.mu.Unlock()

	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.removeLocked(w) { // granted or refused meanwhile
		return <-w.done
	}
	b.serveLocked() // the queue's head may have been w
	inUse := b.used
	if errors.Is(ctx.Err(), context.Canceled) {
		return status.Error(codes.Canceled, "flight: cancelled while waiting for memory (--max-memory)")
	}
	return status.Errorf(codes.ResourceExhausted,
		"flight: %s of memory did not come free in time: %s of the server's %s are in use (--max-memory)",
		gen.HumanBytes(n), gen.HumanBytes(inUse), gen.HumanBytes(b.total))
}

// growersLocked is the number of growers in queue (they come first).
func (b *memBudget) growersLocked() int {
	k := 0
	for k < len(b.queue) && b.queue[k].grower {
		k++
	}
	return k
}

// removeLocked takes w out of the queue, reporting whether it was there.
func (b *memBudget) removeLocked(w *budgetWaiter) bool {
	i := slices.Index(b.queue, w)
	if i < 0 {
		return false
	}
	b.queue = slices.Delete(b.queue, i, i+1)
	if w.grower {
		b.waitingHeld -= w.held
	}
	return true
}

// serveLocked grants the queue's head while it fits, then breaks a
// deadlock if one is left.
func (b *memBudget) serveLocked() {
	for len(b.queue) > 0 && b.used+b.queue[0].n <= b.total {
		w := b.queue[0]
		b.removeLocked(w)
		b.used += w.n
		w.done <- nil
	}
	b.breakDeadlockLocked()
}

// breakDeadlockLocked fails the youngest grower while the head of the queue
// does not fit and every byte in use is held by growers in queue: none of
// them can finish, and nothing else will release.
func (b *memBudget) breakDeadlockLocked() {
	for len(b.queue) > 0 && b.used+b.queue[0].n > b.total && b.used == b.waitingHeld {
		k := b.growersLocked()
		if k == 0 {
			return // cannot be: used == 0 and the head fits
		}
		w := b.queue[k-1]
		b.removeLocked(w)
		w.done <- status.Errorf(codes.ResourceExhausted,
			"flight: %s more memory cannot come free: the server's %s are held by uploads that wait for more as well (--max-memory)",
			gen.HumanBytes(w.n), gen.HumanBytes(b.total))
	}
}

// startUpload counts an upload in, unless limit are in progress already;
// it reports whether it did. Each counted upload calls endUpload.
func (b *memBudget) startUpload(limit int) bool {
	if b == nil {
		return true
	}
	if b.uploads.Add(1) > int64(limit) {
		b.uploads.Add(-1)
		return false
	}
	return true
}

// endUpload counts out an upload counted in by startUpload.
func (b *memBudget) endUpload() {
	if b != nil {
		b.uploads.Add(-1)
	}
}
