//go:build !linux

package arrowio

import (
	"errors"
	"os"
)

func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.New("not supported here") }

func unmapFile([]byte) error { return nil }

// inMemoryFile is false outside Linux: results keep the streaming writer.
func inMemoryFile(*os.File) bool { return false }

func adviseHugePages([]byte) {}

func prefault([]byte) error { return nil }
