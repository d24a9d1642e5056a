//go:build !linux

package main

// physicalMemory is the machine's memory in bytes, 0 when unknown: no
// warning about --mem is given on systems where it is not read.
func physicalMemory() int64 { return 0 }
