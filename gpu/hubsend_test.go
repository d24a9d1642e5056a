package gpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
)

// TestPackedSlots checks the layout of packed spans in a receiver's half.
func TestPackedSlots(t *testing.T) {
	if got := packedBytes(1); got != packedAlign {
		t.Errorf("packedBytes(1) = %d, want %d", got, packedAlign)
	}
	if got := packedBytes(129); got != 2*packedAlign { // 132 values, 264 bytes
		t.Errorf("packedBytes(129) = %d, want %d", got, 2*packedAlign)
	}
	at, total := packedSlots([]int64{1000, 0, 3}, 1)
	if at[0] != 0 || at[1] != packedBytes(1000) || at[2] != packedBytes(1000) || total != packedBytes(1000)+packedBytes(3) {
		t.Errorf("packedSlots = %v, %d", at, total)
	}
	for o, a := range at {
		if a%packedAlign != 0 {
			t.Errorf("slot %d at %d, not a multiple of %d", o, a, packedAlign)
		}
	}
}

// TestHubStageSlots checks where senders' packed spans land in a
// receiver's stage: in the half of the phase's parity, each at its
// sender's offset, and nowhere when the phase's spans overflow the half.
func TestHubStageSlots(t *testing.T) {
	st := &hubStage{at: 1 << 20, half: 4 * packedAlign}
	counts := []int64{0, 100, 300} // the receiver, then two senders
	for i, wantAt := range map[int]uint64{0: 1 << 20, 1: 1<<20 + 4*packedAlign, 2: 1 << 20} {
		a1, ok1 := st.slot(i, 1, 0, counts)
		a2, ok2 := st.slot(i, 2, 0, counts)
		if !ok1 || !ok2 || a1 != wantAt || a2 != wantAt+uint64(packedBytes(100)) {
			t.Errorf("phase %d: senders at %#x (%v) and %#x (%v), want %#x and %#x", i, a1, ok1, a2, ok2, wantAt, wantAt+uint64(packedBytes(100)))
		}
	}
	if _, ok := st.slot(0, 1, 0, []int64{0, 100, 1000}); ok {
		t.Error("spans of 1,100 distances fit a half of 1,024 bytes")
	}
}

// TestHubRowsPacked shares the hub rows of two R-MAT graphs between two
// engines of one device (one context) and, where there is a second device,
// between devices 0 and 1 (statsOnSharedEngines, both at once: every
// source's stats must equal internal/ref's). The distances of the first
// fit in 16 bits, and its phases' spans must go packed; those of the
// second (weights 30,000-60,000: three hops pass 0xFFFF) do not, and its spans must go whole.
func TestHubRowsPacked(t *testing.T) {
	el, err := gen.RMAT(11, 8, 5, gen.WithWeights(1, 100))
	narrow := undirectedGraph(t, el, err)
	el, err = gen.RMAT(11, 8, 5, gen.WithWeights(30000, 60000))
	wide := undirectedGraph(t, el, err)
	pairs := map[string][]*Engine{"one device": {openEngine(t), openEngine(t)}}
	if second, err := New(WithDevice(1)); err != nil {
		t.Log("one device only, so not between devices: " + err.Error())
	} else {
		t.Cleanup(func() {
			if err := second.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		pairs["two devices"] = []*Engine{pairs["one device"][0], second}
	}
	for pname, engines := range pairs {
		for gname, g := range map[string]*graph.CSR{"narrow": narrow, "wide": wide} {
			t.Run(pname+"/"+gname, func(t *testing.T) {
				runners, errs, kept := statsOnSharedEngines(t, engines, g, true, "hubpack=1")
				for i, err := range errs {
					if err != nil {
						t.Fatalf("engine %d: %v", i, err)
					}
				}
				if !kept {
					t.Fatal("the graph's core does not fit as hub rows")
				}
				gr := runners[0].hubs.group
				gr.mu.Lock()
				packed, copies := gr.packed, gr.copies
				gr.mu.Unlock()
				switch {
				case gname == "narrow" && packed == 0:
					t.Errorf("none of %d spans went packed", copies)
				case gname == "wide" && packed != 0:
					t.Errorf("%d of %d spans went packed, with distances past 16 bits", packed, copies)
				}
				t.Logf("%d of %d spans packed: %s", packed, copies, runners[1].HubRowsReport())
			})
		}
	}
}

// TestHubPack16 packs int32 distances that start at an odd element (the
// rows' 4-byte alignment) and whose count is not a multiple of 4 into 16
// bits and widens them back, on one device: the values and infinity come
// back unchanged, the int32s past the count are untouched, and a value of
// 0xFFFF or more, or a negative one, sets the overflow flag.
func TestHubPack16(t *testing.T) {
	dv, err := openDevice(0)
	if err != nil {
		t.Skip("no CUDA device: " + err.Error())
	}
	defer dv.close()
	const count = 1_000_003
	rng := rand.New(rand.NewPCG(21, 7))
	host := make([]int32, count+2)
	for i := range host {
		switch rng.IntN(10) {
		case 0:
			host[i] = math.MaxInt32
		case 1:
			host[i] = 0xFFFE
		default:
			host[i] = int32(rng.IntN(0xFFFF))
		}
	}
	err = dv.do(func() error {
		src, err := dv.upload(unsafe.Slice((*byte)(unsafe.Pointer(&host[0])), 4*len(host)))
		if err != nil {
			return err
		}
		packed, err := dv.alloc(packedBytes(count))
		if err != nil {
			return err
		}
		out, err := dv.alloc(4 * int64(len(host)))
		if err != nil {
			return err
		}
		flag, err := dv.alloc(4)
		if err != nil {
			return err
		}
		defer func() { dv.free(&src); dv.free(&packed); dv.free(&out); dv.free(&flag) }()
		if err := dv.d.cuMemsetD32_v2(flag.ptr, 0, 1).Err("cuMemsetD32_v2"); err != nil {
			return err
		}
		if err := dv.d.cuMemsetD32_v2(out.ptr, 0x5a5a5a5a, uint64(len(host))).Err("cuMemsetD32_v2"); err != nil {
			return err
		}
		if err := pack16(dv, src.ptr+4, count, packed.ptr, flag.ptr); err != nil {
			return err
		}
		over, err := packedOverflow(dv, flag.ptr)
		if err != nil {
			return err
		}
		if over {
			t.Error("values below 0xFFFF and infinity set the overflow flag")
		}
		if err := unpack16(dv, packed.ptr, count, out.ptr+4); err != nil {
			return err
		}
		got := make([]int32, len(host))
		var stage pinned
		defer dv.freePinned(&stage)
		if err := dv.download(unsafe.Slice((*byte)(unsafe.Pointer(&got[0])), 4*len(got)), out.ptr, &stage); err != nil {
			return err
		}
		if got[0] != 0x5a5a5a5a || got[len(got)-1] != 0x5a5a5a5a {
			t.Errorf("the widening wrote outside its rows: %#x, %#x", got[0], got[len(got)-1])
		}
		bad := 0
		for i := 1; i <= count; i++ {
			if got[i] != host[i] {
				if bad++; bad <= 5 {
					t.Errorf("distance %d: %d after packing, %d before", i-1, got[i], host[i])
				}
			}
		}
		for _, v := range []int32{0xFFFF, 1 << 20, -5} {
			at := 1 + rng.IntN(count)
			one := []int32{v}
			if err := dv.d.cuMemcpyHtoD_v2(src.ptr+uint64(4*at), unsafe.Pointer(&one[0]), 4).Err("cuMemcpyHtoD_v2"); err != nil {
				return err
			}
			if err := pack16(dv, src.ptr+4, count, packed.ptr, flag.ptr); err != nil {
				return err
			}
			if over, err = packedOverflow(dv, flag.ptr); err != nil {
				return err
			}
			if !over {
				t.Errorf("%d at distance %d did not set the overflow flag", v, at-1)
			}
			one[0] = host[at]
			if err := dv.d.cuMemcpyHtoD_v2(src.ptr+uint64(4*at), unsafe.Pointer(&one[0]), 4).Err("cuMemcpyHtoD_v2"); err != nil {
				return err
			}
		}
		// The flag was cleared by the last read.
		if err := pack16(dv, src.ptr+4, count, packed.ptr, flag.ptr); err != nil {
			return err
		}
		if over, err = packedOverflow(dv, flag.ptr); err != nil || over {
			t.Errorf("the flag stayed set after packedOverflow read it (%v)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHubSend16 sends 2.7 GiB of int32 hub rows (R-MAT 18's largest
// phase share) from device 0 to device 1: whole, by cuMemcpyPeerAsync
// ("whole"); packed by device 0 straight into device 1's memory and widened
// there ("packed"); packed on device 0, copied, and widened ("packedcopy").
// It reports each step's milliseconds; it needs two devices.
func BenchmarkHubSend16(b *testing.B) {
	a, c := openTwoDevices(b)
	const count = (27 << 30) / 40 // 2.7 GiB of int32
	var src, local, flag, dst, staging devBuf
	check := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	check(a.do(func() error {
		var err error
		if src, err = a.alloc(4 * count); err != nil {
			return err
		}
		if local, err = a.alloc(packedBytes(count)); err != nil {
			return err
		}
		if flag, err = a.alloc(4); err != nil {
			return err
		}
		if err := a.d.cuMemsetD32_v2(flag.ptr, 0, 1).Err("cuMemsetD32_v2"); err != nil {
			return err
		}
		return a.d.cuMemsetD32_v2(src.ptr, 1234, count).Err("cuMemsetD32_v2")
	}))
	check(c.do(func() error {
		var err error
		if dst, err = c.alloc(4 * count); err != nil {
			return err
		}
		staging, err = c.alloc(packedBytes(count))
		return err
	}))
	defer a.do(func() error { return errors.Join(a.free(&src), a.free(&local), a.free(&flag)) })
	defer c.do(func() error { return errors.Join(c.free(&dst), c.free(&staging)) })
	check(a.do(func() error { _, err := enablePeer(a, c); return err }))
	check(c.do(func() error { _, err := enablePeer(c, a); return err }))
	timed := func(dv *device, f func() error) time.Duration {
		var took time.Duration
		check(dv.do(func() error {
			began := time.Now()
			if err := f(); err != nil {
				return err
			}
			err := errors.Join(dv.d.cuStreamSynchronize(0).Err("cuStreamSynchronize"), dv.d.cuStreamSynchronize(dv.peerStream).Err("cuStreamSynchronize"))
			took = time.Since(began)
			return err
		}))
		return took
	}
	report := func(b *testing.B, name string, d time.Duration) {
		b.ReportMetric(float64(d.Microseconds())/1000/float64(b.N), name+"-ms")
	}
	b.Run("whole", func(b *testing.B) {
		var send time.Duration
		for range b.N {
			send += timed(a, func() error {
				return a.d.cuMemcpyPeerAsync(dst.ptr, c.ctx, src.ptr, a.ctx, 4*count, a.peerStream).Err("cuMemcpyPeerAsync")
			})
		}
		report(b, "send", send)
	})
	b.Run("packed", func(b *testing.B) {
		var send, widen time.Duration
		for range b.N {
			send += timed(a, func() error { return pack16(a, src.ptr, count, staging.ptr, flag.ptr) })
			widen += timed(c, func() error { return unpack16(c, staging.ptr, count, dst.ptr) })
		}
		report(b, "send", send)
		report(b, "widen", widen)
	})
	b.Run("packedcopy", func(b *testing.B) {
		var pack, send, widen time.Duration
		for range b.N {
			pack += timed(a, func() error { return pack16(a, src.ptr, count, local.ptr, flag.ptr) })
			send += timed(a, func() error {
				return a.d.cuMemcpyPeerAsync(staging.ptr, c.ctx, local.ptr, a.ctx, uint64(packedBytes(count)), a.peerStream).Err("cuMemcpyPeerAsync")
			})
			widen += timed(c, func() error { return unpack16(c, staging.ptr, count, dst.ptr) })
		}
		report(b, "pack", pack)
		report(b, "send", send)
		report(b, "widen", widen)
	})
}
