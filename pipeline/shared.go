package pipeline

import (
	"errors"
	"sync"

	"github.com/pathctl/pathctl/gpu"
)

// SharedGPU is one GPU engine for the runs of many graphs (Options.GPU),
// as a server holds it: the device is opened by the first run that wants
// it and stays open until Close, so later runs skip opening it (a quarter
// of a second on an H100; each run still uploads its graph). Runs on it
// take turns, one at a time. Where the device cannot open, that error is
// kept: auto runs use the CPU without looking again, gpu runs fail with it.
// The zero value is ready to use.
type SharedGPU struct {
	once sync.Once
	e    *gpu.Engine
	err  error
	// turn is held by the run using the engine, and by Close.
	turn sync.Mutex
}

var errSharedClosed = errors.New("pipeline: the shared GPU engine is closed")

// acquire opens the engine if this is the first use and waits for the
// turn; release it with s.turn.Unlock.
func (s *SharedGPU) acquire() (*gpu.Engine, error) {
	s.once.Do(func() { s.e, s.err = newGPU() })
	if s.err != nil {
		return nil, s.err
	}
	s.turn.Lock()
	if s.e == nil {
		s.turn.Unlock()
		return nil, errSharedClosed
	}
	return s.e, nil
}

// Opened reports whether the engine is open.
func (s *SharedGPU) Opened() bool {
	s.turn.Lock()
	defer s.turn.Unlock()
	return s.e != nil
}

// Close waits for the run using the engine, if any, and closes it; later
// runs find it closed. Closing an engine never opened does nothing.
func (s *SharedGPU) Close() error {
	s.once.Do(func() { s.err = errSharedClosed }) // never opened: stays so
	s.turn.Lock()
	defer s.turn.Unlock()
	e := s.e
	s.e = nil
	if e == nil {
		return nil
	}
	return e.Close()
}
