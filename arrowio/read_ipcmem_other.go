//go:build !linux

package arrowio

// physicalMemory is the machine's RAM in bytes, 0 when unknown.
func physicalMemory() int64 { return 0 }
