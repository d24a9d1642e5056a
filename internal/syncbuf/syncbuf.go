// Package syncbuf is a bytes.Buffer that goroutines may write at once, for
// tests that collect logs and notices from concurrent work.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects writes from many goroutines; the zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
