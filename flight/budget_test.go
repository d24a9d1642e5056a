package flight

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// waiting is the number of calls in b's queue.
func (b *memBudget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// waitQueued waits until b's queue holds n calls.
func waitQueued(t *testing.T, b *memBudget, n int) {
	t.Helper()
	waitFor(t, func() bool { return b.waiting() == n })
}

// TestMemBudgetTooLarge: a request over the whole budget fails at once,
// naming the flag, and leaves nothing held.
func TestMemBudgetTooLarge(t *testing.T) {
	b := newMemBudget(100)
	err := b.acquire(context.Background(), 101)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-memory") {
		t.Fatalf("acquire 101 of 100: %v; want RESOURCE_EXHAUSTED naming --max-memory", err)
	}
	if err := b.grow(context.Background(), 60, 41); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("grow 60 by 41 of 100: %v; want RESOURCE_EXHAUSTED", err)
	}
	if b.inUse() != 0 || !b.tryAcquire(100) {
		t.Errorf("in use %d after refusals; want the whole budget free", b.inUse())
	}
}

// TestMemBudgetFIFO: waiters are served in arrival order, a small request
// does not pass a large one that came first, and tryAcquire does not pass
// anyone.
func TestMemBudgetFIFO(t *testing.T) {
	b := newMemBudget(10)
	ctx := context.Background()
	if err := b.acquire(ctx, 8); err != nil {
		t.Fatal(err)
	}
	large, small := make(chan error, 1), make(chan error, 1)
	go func() { large <- b.acquire(ctx, 5) }()
	waitQueued(t, b, 1)
	go func() { small <- b.acquire(ctx, 1) }() // fits, but comes second
	waitQueued(t, b, 2)
	if b.tryAcquire(1) {
		t.Error("tryAcquire(1) passed two waiters")
	}
	b.release(3) // 5 free: the large one's turn; then 0 free
	if err := <-large; err != nil {
		t.Fatalf("large acquire: %v", err)
	}
	select {
	case err := <-small:
		t.Fatalf("the small acquire returned %v with nothing free", err)
	case <-time.After(20 * time.Millisecond):
	}
	b.release(5)
	if err := <-small; err != nil {
		t.Errorf("small acquire: %v", err)
	}
	if b.inUse() != 6 {
		t.Errorf("in use %d; want 6", b.inUse())
	}
}

// TestMemBudgetWaitEnds: a wait that outlasts its context fails (a
// deadline as RESOURCE_EXHAUSTED, a cancel as CANCELED), leaves the queue,
// and lets those behind it go.
func TestMemBudgetWaitEnds(t *testing.T) {
	b := newMemBudget(10)
	if err := b.acquire(context.Background(), 6); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := b.acquire(ctx, 5)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-memory") {
		t.Errorf("acquire past the deadline: %v; want RESOURCE_EXHAUSTED naming --max-memory", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.acquire(cctx, 5) }()
	waitQueued(t, b, 1)
	small := make(chan error, 1)
	go func() { small <- b.acquire(context.Background(), 4) }()
	waitQueued(t, b, 2)
	ccancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Errorf("cancelled acquire: %v; want CANCELED", err)
	}
	if err := <-small; err != nil { // 4 fits once the 5 ahead has left
		t.Errorf("acquire behind a cancelled one: %v", err)
	}
	if b.waiting() != 0 || b.inUse() != 10 {
		t.Errorf("queue %d, in use %d; want 0 and 10", b.waiting(), b.inUse())
	}
}

// TestMemBudgetGrowDeadlock: two uploads hold half the budget each and
// both want more. Neither can be served, and nothing else holds memory:
// the younger fails at once, and once it releases, the older is served.
func TestMemBudgetGrowDeadlock(t *testing.T) {
	b := newMemBudget(10)
	ctx := context.Background()
	b.acquire(ctx, 5) // the older upload
	b.acquire(ctx, 5) // the younger
	older := make(chan error, 1)
	go func() { older <- b.grow(ctx, 5, 3) }()
	waitQueued(t, b, 1)
	// An acquirer waits behind the growers.
	acquired := make(chan error, 1)
	go func() { acquired <- b.acquire(ctx, 2) }()
	waitQueued(t, b, 2)
	err := b.grow(ctx, 5, 3) // the younger: every byte is held by waiting growers
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("younger grow: %v; want RESOURCE_EXHAUSTED at once", err)
	}
	b.release(5) // the younger upload fails and releases
	select {
	case err := <-older:
		if err != nil {
			t.Errorf("older grow: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the older grow still waits after the younger released")
	}
	if err := <-acquired; err != nil {
		t.Errorf("acquire behind the growers: %v", err)
	}
	if b.inUse() != 10 {
		t.Errorf("in use %d; want 10", b.inUse())
	}
}

// TestMemBudgetGrowWaitsForQueries: a grower waits, not fails, while
// memory is held by someone not waiting (a query), which will release it.
func TestMemBudgetGrowWaitsForQueries(t *testing.T) {
	b := newMemBudget(10)
	ctx := context.Background()
	b.acquire(ctx, 4) // a query
	b.acquire(ctx, 5) // an upload
	grown := make(chan error, 1)
	go func() { grown <- b.grow(ctx, 5, 3) }()
	waitQueued(t, b, 1)
	select {
	case err := <-grown:
		t.Fatalf("grow returned %v while a query held what it needs", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.release(4)
	if err := <-grown; err != nil {
		t.Errorf("grow after the query released: %v", err)
	}
}

// TestMemBudgetUnbounded: a budget of 0 takes everything at once.
func TestMemBudgetUnbounded(t *testing.T) {
	b := newMemBudget(0)
	if err := b.acquire(context.Background(), 1<<60); err != nil || !b.tryAcquire(1<<60) {
		t.Errorf("unbounded budget refused: %v", err)
	}
	var none *memBudget
	if err := none.grow(context.Background(), 0, 1); err != nil || !none.startUpload(0) {
		t.Errorf("nil budget refused: %v", err)
	}
}

// TestUploadCount: startUpload counts up to its limit.
func TestUploadCount(t *testing.T) {
	b := newMemBudget(0)
	if !b.startUpload(2) || !b.startUpload(2) || b.startUpload(2) {
		t.Fatal("want two uploads counted in of 2, not a third")
	}
	b.endUpload()
	if !b.startUpload(2) {
		t.Error("an upload ended, yet the next is refused")
	}
}
