//go:build !linux

package arrowio

// PhysicalMemory is the machine's RAM in bytes, 0 when unknown (not read
// outside Linux).
func PhysicalMemory() int64 { return 0 }
