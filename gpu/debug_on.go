//go:build pathctl_debug

package gpu

// debugChecks is set by the pathctl_debug build tag: every kernel launch is
// followed by a synchronise and an error check naming the kernel
// (debugCheck).
const debugChecks = true
