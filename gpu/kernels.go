package gpu

import (
	_ "embed"
	"fmt"
	"math"
	"strings"
)

// kernelImage is the fatbin that kernels/build.sh compiles from
// kernels/*.cu: SASS for sm_70 to sm_90 and compute_90 PTX.
//
//go:embed kernels/kernels.fatbin
var kernelImage []byte

// kernelHashFile is kernels/kernels.sha256: a comment line, then the hash of
// the kernel sources kernelImage was built from, as kernels/build.sh
// recorded it.
//
//go:embed kernels/kernels.sha256
var kernelHashFile string

// kernelSourceHash returns the hash line of kernelHashFile.
func kernelSourceHash() string {
	for _, line := range strings.Split(kernelHashFile, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return ""
}

// fatbinMagic opens every fatbin (little-endian 0xBA55ED50).
var fatbinMagic = []byte{0x50, 0xed, 0x55, 0xba}

// argKind is how the host passes one kernel parameter: the Go type its
// argument to launch must have.
type argKind uint8

const (
	argPointer argKind = iota // T*: a device address, uint64
	argInt32                  // int
	argInt64                  // long long
	argUint32                 // unsigned int, passed as a uint64 that fits
	argUint64                 // unsigned long long
	argFloat64                // double
)

// kernelParam is one parameter of a kernel entry point.
type kernelParam struct {
	name  string // as in the source
	ctype string // its C type
	kind  argKind
}

// kernelEntry is one extern "C" entry point of the kernel image, as
// kernels_gen.go lists them.
type kernelEntry struct {
	name   string
	source string // the .cu file that defines it
	params []kernelParam
}

// kernelIndex maps a kernel's name to its place in kernelTable.
var kernelIndex = func() map[string]int {
	m := make(map[string]int, len(kernelTable))
	for i, k := range kernelTable {
		m[k.name] = i
	}
	return m
}()

// KernelError reports kernels of the table that the loaded image lacks,
// every one of them: the image and the sources it was built from disagree.
type KernelError struct {
	Missing []string
}

func (e *KernelError) Error() string {
	return fmt.Sprintf("gpu: the kernel image lacks %d of its %d kernels: %s (rebuild it with gpu/kernels/build.sh)",
		len(e.Missing), len(kernelTable), strings.Join(e.Missing, ", "))
}

// lazyKernels resolves each kernel (cuModuleGetFunction) on its first
// launch instead of every kernel of the table when the device opens. Under
// the driver's lazy module loading (CUDA_MODULE_LOADING=LAZY, the default of
// Linux drivers since CUDA 12.2; the CLI sets it for older ones) resolving a
// kernel is what loads its code, so a run loads only the kernels it
// launches, not every kernel of the image: the device opens faster (docs/benchmarks-history.md,
// "Issue 18: the wall time of a small run"). A kernel the image lacks then
// fails its first launch, naming it, rather than the open; the table's
// hash test catches such an image at build time. false restores the
// eager lookup of every kernel at open.
const lazyKernels = true

// resolveKernel looks up the kernel called name in module: a
// *KernelError where the image lacks it.
func resolveKernel(d *driver, module uintptr, name string) (uintptr, error) {
	var f uintptr
	switch r := d.cuModuleGetFunction(&f, module, name); r {
	case Success:
		return f, nil
	case ResultNotFound:
		return 0, &KernelError{Missing: []string{name}}
	default:
		return 0, r.Err("cuModuleGetFunction " + name)
	}
}

// resolveKernels looks up every kernel of kernelTable in module, collecting
// the missing ones into one *KernelError; any other driver failure ends the
// lookup.
func resolveKernels(d *driver, module uintptr) ([]uintptr, error) {
	funcs := make([]uintptr, len(kernelTable))
	var missing []string
	for i, k := range kernelTable {
		switch r := d.cuModuleGetFunction(&funcs[i], module, k.name); r {
		case Success:
		case ResultNotFound:
			missing = append(missing, k.name)
		default:
			return nil, r.Err("cuModuleGetFunction " + k.name)
		}
	}
	if len(missing) > 0 {
		return nil, &KernelError{Missing: missing}
	}
	return funcs, nil
}

// argSlot is the 8-byte parameter slot of argument a for a parameter of
// kind, and whether a has the Go type that kind asks for.
func argSlot(kind argKind, a any) (uint64, bool) {
	switch v := a.(type) {
	case uint64:
		return v, kind == argPointer || kind == argUint64 || (kind == argUint32 && v <= math.MaxUint32)
	case int32:
		return uint64(uint32(v)), kind == argInt32
	case int64:
		return uint64(v), kind == argInt64
	case float64:
		return math.Float64bits(v), kind == argFloat64
	}
	return 0, false
}

// checkArgs reports arguments to kernel k that are too few, too many, or of
// the wrong Go type for their parameter (launchAsync checks the same while
// it fills the slots).
func checkArgs(k *kernelEntry, args []any) error {
	if len(args) != len(k.params) {
		return argCountError(k, len(args))
	}
	for i, a := range args {
		if _, ok := argSlot(k.params[i].kind, a); !ok {
			return argTypeError(k, i, a)
		}
	}
	return nil
}

func argCountError(k *kernelEntry, given int) error {
	return fmt.Errorf("gpu: %s takes %d arguments, given %d", k.name, len(k.params), given)
}

func argTypeError(k *kernelEntry, i int, a any) error {
	p := &k.params[i]
	return fmt.Errorf("gpu: %s: argument %d (%s %s) is %T %v", k.name, i, p.ctype, p.name, a, a)
}
