package gpu

// Copies of hub rows between devices (hubshare.go): a part's rows copied
// from its owner, device to device or peer to peer where the devices allow
// it, through the driver's staging in host memory otherwise.

// copyPart copies part p's rows from its owner's device into hs's hub
// rows, and waits for the copy (with the group's lock held, so that the
// owner cannot free them meanwhile). It reports whether the copy went
// device to device (one context, or peer to peer) rather than through
// the driver's staging in host memory.
func (hs *hubStore) copyPart(p *hubPart) (bool, error) {
	to := hs.r.buf.dist.ptr + uint64(int64(hs.rows.firstRow+p.lo)*hs.rowBytes())
	peer, _, err := copyDevice(hs.r.e.dev, hs.r.e.dev, p.owner.r.e.dev, to, p.at, uint64(int64(p.hi-p.lo)*hs.rowBytes()), true)
	return peer, err
}

// copyDevice copies size bytes at src on device from to dst on device to,
// from the goroutine of device cur (one of the two, whose context is
// current there), and waits for the copy unless wait is false and the
// copy is queued on cur's peer stream (queued; synchronize that stream
// for it). It reports whether the copy went device to device (one
// context, or peer to peer) rather than through the driver's staging in
// host memory.
func copyDevice(cur, to, from *device, dst, src, size uint64, wait bool) (peer, queued bool, err error) {
	d := to.d
	peer = true
	if to.ctx == from.ctx {
		if err := d.cuMemcpyDtoD_v2(dst, src, size).Err("cuMemcpyDtoD_v2"); err != nil {
			return false, false, err
		}
	} else {
		other := from
		if cur == from {
			other = to
		}
		if peer, err = enablePeer(cur, other); err != nil {
			return false, false, err
		}
		// On cur's peer stream, which waits for no kernel of either
		// device: the rows copied are final (the kernels that wrote them
		// were waited for), and the receiver's kernels meanwhile touch
		// other rows.
		if err := d.cuMemcpyPeerAsync(dst, to.ctx, src, from.ctx, size, cur.peerStream).Err("cuMemcpyPeerAsync"); err != nil {
			return false, false, err
		}
		if !wait {
			return peer, true, nil
		}
		return peer, false, d.cuStreamSynchronize(cur.peerStream).Err("cuStreamSynchronize (peer stream)")
	}
	return peer, false, d.cuCtxSynchronize().Err("cuCtxSynchronize")
}

// enablePeer lets dst's context read src's memory where the devices allow
// it, and reports whether they do (the driver stages copies through the
// host otherwise).
func enablePeer(dst, src *device) (bool, error) {
	var can int32
	if err := dst.d.cuDeviceCanAccessPeer(&can, dst.handle, src.handle).Err("cuDeviceCanAccessPeer"); err != nil {
		return false, err
	}
	if can == 0 {
		return false, nil
	}
	if r := dst.d.cuCtxEnablePeerAccess(src.ctx, 0); r != resultPeerAlreadyEnabled {
		if err := r.Err("cuCtxEnablePeerAccess"); err != nil {
			return false, err
		}
	}
	return true, nil
}
