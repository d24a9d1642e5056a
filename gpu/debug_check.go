package gpu

// debugCheck, in builds with the pathctl_debug tag, waits for the kernels
// queued on dv (the default stream 0, where every kernel runs) and turns a
// failure into a *DriverError naming kernel name, such as
// "gpu: cuStreamSynchronize after kernel csr_count:
// CUDA_ERROR_ILLEGAL_ADDRESS (700)" (design.md: "Every launch is followed
// by an error check in debug builds"). In other builds it does nothing. It
// runs on the device goroutine, right after a launch.
//
// A kernel's own faults (an out-of-bounds access, a trap) are reported by
// the first synchronising call after it, which in ordinary builds may come
// several launches later; with a synchronise after every launch the error
// names the kernel that failed. It does not wait for the result copies on
// the copy stream, but it ends the overlap of queued launches with the
// host, which is why it is off by default:
//
//	go test -tags pathctl_debug ./gpu/
//	CGO_ENABLED=0 go build -tags pathctl_debug -o bin/pathctl-debug ./cmd/pathctl
func debugCheck(dv *device, name string) error {
	if !debugChecks {
		return nil
	}
	return dv.d.cuStreamSynchronize(0).Err("cuStreamSynchronize after kernel " + name)
}
