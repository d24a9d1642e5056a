package arrowio

import "golang.org/x/sys/unix"

// PhysicalMemory is the machine's RAM in bytes, 0 when unknown (not read
// outside Linux).
func PhysicalMemory() int64 {
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		return 0
	}
	return int64(info.Totalram) * int64(info.Unit)
}
