package gpu

import (
	"errors"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkPeerCopyWhileBusy measures a copy of 2 GiB from device 0 into
// device 1 queued on device 0's peer stream while device 1 runs
// memory-bound kernels and waits for them every 5 launches as the batched
// rounds do: by a synchronous 4-byte read ("dtoh", what the rounds did
// before readBack) or by cuStreamSynchronize then the read ("stream",
// readBack). It reports how long the cuMemcpyPeerAsync call held the
// sender's thread, the copy's rate, and the longest wait of device 1 for
// a batch of its kernels (11.3 ms with no copy; 0 when alone); it needs
// two devices. Two H200s (docs/benchmarks-history.md, "Peer copies held up by the
// other device's reads (BenchmarkPeerCopyWhileBusy)"): dtoh 2.5 ms, 270
// GB/s and 12.0 ms; stream 41-71 µs, 391-394 GB/s and 11.7 ms; alone
// 37-38 µs and 394 GB/s.
func BenchmarkPeerCopyWhileBusy(b *testing.B) {
	a, c := openTwoDevices(b)
	const size = 2 << 30
	const busyWords = 1 << 31 // 8 GiB of fills per launch
	var src, dst, busy devBuf
	check := func(tb testing.TB, err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	check(b, a.do(func() error {
		var err error
		src, err = a.alloc(size)
		return err
	}))
	check(b, c.do(func() error {
		var err error
		if dst, err = c.alloc(size); err != nil {
			return err
		}
		busy, err = c.alloc(4 * busyWords)
		return err
	}))
	defer a.do(func() error { return a.free(&src) })
	defer c.do(func() error { return errors.Join(c.free(&dst), c.free(&busy)) })
	check(b, a.do(func() error { _, err := enablePeer(a, c); return err }))
	for _, how := range []string{"alone", "dtoh", "stream"} {
		b.Run(how, func(b *testing.B) {
			var call, took, longest time.Duration
			for range b.N {
				stop := make(chan struct{})
				var wg sync.WaitGroup
				var busyErr error
				if how != "alone" {
					started := make(chan struct{})
					wg.Go(func() {
						busyErr = c.do(func() error {
							host := make([]int32, 1)
							close(started)
							last := time.Now()
							for n := 0; ; n++ {
								select {
								case <-stop:
									return c.d.cuStreamSynchronize(0).Err("cuStreamSynchronize")
								default:
								}
								for range 5 {
									if err := c.launchAsync("batched_fill_b32", batchedGrid(busyWords), busy.ptr, int64(busyWords), uint64(n)); err != nil {
										return err
									}
								}
								var err error
								if how == "dtoh" {
									err = c.d.cuMemcpyDtoH_v2(unsafe.Pointer(&host[0]), busy.ptr, 4).Err("cuMemcpyDtoH_v2")
								} else {
									err = c.readBack(unsafe.Pointer(&host[0]), busy.ptr, 4, "fill")
								}
								if err != nil {
									return err
								}
								longest = max(longest, time.Since(last))
								last = time.Now()
							}
						})
					})
					<-started
					time.Sleep(20 * time.Millisecond)
				}
				check(b, a.do(func() error {
					began := time.Now()
					if err := a.d.cuMemcpyPeerAsync(dst.ptr, c.ctx, src.ptr, a.ctx, size, a.peerStream).Err("cuMemcpyPeerAsync"); err != nil {
						return err
					}
					call += time.Since(began)
					err := a.d.cuStreamSynchronize(a.peerStream).Err("cuStreamSynchronize")
					took += time.Since(began)
					return err
				}))
				close(stop)
				wg.Wait()
				check(b, busyErr)
			}
			b.ReportMetric(float64(call.Microseconds())/float64(b.N), "call-µs")
			b.ReportMetric(float64(size)*float64(b.N)/took.Seconds()/1e9, "GB/s")
			b.ReportMetric(float64(longest.Microseconds())/1000, "busy-max-ms")
		})
	}
}

// openTwoDevices opens devices 0 and 1 for a benchmark, closed at its
// end; it skips where there are not two.
func openTwoDevices(b *testing.B) (*device, *device) {
	a, err := openDevice(0)
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	b.Cleanup(func() { a.close() })
	c, err := openDevice(1)
	if err != nil {
		b.Skip("no second CUDA device: " + err.Error())
	}
	b.Cleanup(func() { c.close() })
	return a, c
}
