package gpu

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Result is a CUresult, the status every driver call returns.
type Result int32

// The statuses the package looks at by value; Err names every other one
// through cuGetErrorName.
const (
	Success              Result = 0
	ResultInvalidValue   Result = 1
	ResultOutOfMemory    Result = 2
	ResultNoDevice       Result = 100
	ResultNotFound       Result = 500
	ResultInvalidContext Result = 201
)

// knownNames name the common statuses when the driver cannot be asked.
var knownNames = map[Result]string{
	0:   "CUDA_SUCCESS",
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	200: "CUDA_ERROR_INVALID_IMAGE",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	218: "CUDA_ERROR_INVALID_PTX",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	500: "CUDA_ERROR_NOT_FOUND",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	719: "CUDA_ERROR_LAUNCH_FAILED",
	999: "CUDA_ERROR_UNKNOWN",
}

// Name is the driver's name of r, such as "CUDA_ERROR_OUT_OF_MEMORY".
func (r Result) Name() string {
	if d, err := loadDriver(); err == nil && d.cuGetErrorName != nil {
		var p *byte
		if d.cuGetErrorName(r, &p) == Success && p != nil {
			return goString(p)
		}
	}
	if s, ok := knownNames[r]; ok {
		return s
	}
	return "CUDA_ERROR_UNKNOWN_STATUS"
}

// Err is nil when r is Success and otherwise an error naming the call and
// the status, such as "gpu: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)".
func (r Result) Err(call string) error {
	if r == Success {
		return nil
	}
	return &DriverError{Call: call, Result: r}
}

// DriverError is a driver call that returned a status other than success.
type DriverError struct {
	Call   string
	Result Result
}

func (e *DriverError) Error() string {
	return fmt.Sprintf("gpu: %s: %s (%d)", e.Call, e.Result.Name(), int32(e.Result))
}

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	var b strings.Builder
	for ptr := unsafe.Pointer(p); *(*byte)(ptr) != 0; ptr = unsafe.Add(ptr, 1) {
		b.WriteByte(*(*byte)(ptr))
	}
	return b.String()
}

// driver is the table of bound driver functions. Field names are the
// exported symbol names, which the loader binds by reflection.
type driver struct {
	library string // the name dlopen succeeded with

	cuInit                                      func(flags uint32) Result
	cuDriverGetVersion                          func(version *int32) Result
	cuDeviceGet                                 func(dev *int32, ordinal int32) Result
	cuDeviceGetCount                            func(count *int32) Result
	cuDeviceGetName                             func(name *byte, length int32, dev int32) Result
	cuDeviceTotalMem_v2                         func(bytes *uint64, dev int32) Result
	cuDeviceGetAttribute                        func(value *int32, attrib int32, dev int32) Result
	cuDevicePrimaryCtxRetain                    func(ctx *uintptr, dev int32) Result
	cuDevicePrimaryCtxRelease_v2                func(dev int32) Result
	cuCtxSetCurrent                             func(ctx uintptr) Result
	cuCtxSynchronize                            func() Result
	cuModuleLoadData                            func(module *uintptr, image unsafe.Pointer) Result
	cuModuleUnload                              func(module uintptr) Result
	cuModuleGetFunction                         func(fn *uintptr, module uintptr, name string) Result
	cuMemAlloc_v2                               func(dptr *uint64, size uint64) Result
	cuMemFree_v2                                func(dptr uint64) Result
	cuMemGetInfo_v2                             func(free, total *uint64) Result
	cuMemcpyHtoD_v2                             func(dst uint64, src unsafe.Pointer, size uint64) Result
	cuMemcpyDtoH_v2                             func(dst unsafe.Pointer, src uint64, size uint64) Result
	cuMemcpyDtoHAsync_v2                        func(dst unsafe.Pointer, src uint64, size uint64, stream uintptr) Result
	cuMemsetD32_v2                              func(dst uint64, value uint32, count uint64) Result
	cuMemHostAlloc                              func(p *unsafe.Pointer, size uint64, flags uint32) Result
	cuMemFreeHost                               func(p unsafe.Pointer) Result
	cuMemHostRegister_v2                        func(p unsafe.Pointer, size uint64, flags uint32) Result
	cuMemHostUnregister                         func(p unsafe.Pointer) Result
	cuStreamCreate                              func(stream *uintptr, flags uint32) Result
	cuStreamDestroy_v2                          func(stream uintptr) Result
	cuStreamSynchronize                         func(stream uintptr) Result
	cuStreamWaitEvent                           func(stream uintptr, event uintptr, flags uint32) Result
	cuEventCreate                               func(event *uintptr, flags uint32) Result
	cuEventRecord                               func(event uintptr, stream uintptr) Result
	cuEventSynchronize                          func(event uintptr) Result
	cuEventElapsedTime                          func(ms *float32, start, end uintptr) Result
	cuEventDestroy_v2                           func(event uintptr) Result
	cuOccupancyMaxActiveBlocksPerMultiprocessor func(blocks *int32, fn uintptr, blockSize int32, dynamicSmem uint64) Result
	cuLaunchKernel                              func(fn uintptr, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMem uint32, stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) Result
	cuGetErrorName                              func(r Result, name **byte) Result
	cuDeviceCanAccessPeer                       func(can *int32, dev, peer int32) Result
	cuCtxEnablePeerAccess                       func(peer uintptr, flags uint32) Result
	cuMemcpyPeer                                func(dst uint64, dstCtx uintptr, src uint64, srcCtx uintptr, size uint64) Result
	cuMemcpyPeerAsync                           func(dst uint64, dstCtx uintptr, src uint64, srcCtx uintptr, size uint64, stream uintptr) Result
	cuMemcpyDtoD_v2                             func(dst, src uint64, size uint64) Result
}

// libraryNames are the names dlopen tries, in order.
var libraryNames = []string{"libcuda.so.1", "libcuda.so"}

// LibraryError reports that no driver library could be opened.
type LibraryError struct {
	Tried []string // every name tried, with dlopen's reason
}

func (e *LibraryError) Error() string {
	return "gpu: CUDA driver library not found (tried " + strings.Join(e.Tried, "; ") + ")"
}

// SymbolError reports driver functions the library lacks.
type SymbolError struct {
	Library string
	Missing []string
}

func (e *SymbolError) Error() string {
	return fmt.Sprintf("gpu: %s lacks %s", e.Library, strings.Join(e.Missing, ", "))
}

// dlopenReason is dlopen's message for a failed open, or a sentence of
// ours where it gave none.
func dlopenReason(err error) string {
	if err == nil || strings.TrimSpace(err.Error()) == "" {
		return "could not be opened (dlopen gave no reason)"
	}
	return strings.TrimSpace(err.Error())
}

var (
	driverOnce sync.Once
	theDriver  *driver
	driverErr  error
)

// loadDriver opens and binds the driver library once per process.
func loadDriver() (*driver, error) {
	driverOnce.Do(func() { theDriver, driverErr = openDriver(libraryNames) })
	return theDriver, driverErr
}

// openDriver dlopens the first of names that opens and binds every field of
// driver, collecting every missing symbol into one error.
func openDriver(names []string) (*driver, error) {
	var tried []string
	var handle uintptr
	var lib string
	// dlerror's message is per OS thread: stay on one from dlopen to it.
	runtime.LockOSThread()
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			handle, lib = h, name
			break
		}
		tried = append(tried, name+": "+dlopenReason(err))
	}
	runtime.UnlockOSThread()
	if handle == 0 {
		return nil, &LibraryError{Tried: tried}
	}
	d := &driver{library: lib}
	v := reflect.ValueOf(d).Elem()
	t := v.Type()
	var missing []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type.Kind() != reflect.Func {
			continue
		}
		sym, err := purego.Dlsym(handle, f.Name)
		if err != nil || sym == 0 {
			missing = append(missing, f.Name)
			continue
		}
		// The fields are unexported: bind through a pointer to the field.
		ptr := reflect.NewAt(f.Type, unsafe.Pointer(v.Field(i).UnsafeAddr()))
		purego.RegisterFunc(ptr.Interface(), sym)
	}
	if len(missing) > 0 {
		return nil, &SymbolError{Library: lib, Missing: missing}
	}
	return d, nil
}

// ErrNoDevice is wrapped by the error Probe and New return when the driver
// loads but reports no CUDA device.
var ErrNoDevice = errors.New("no CUDA device")
