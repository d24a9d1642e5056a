//go:build !pathctl_debug

package gpu

// debugChecks is false without the pathctl_debug build tag: kernel errors
// show at the next synchronising call, which names the call, not the
// kernel (debugCheck).
const debugChecks = false
