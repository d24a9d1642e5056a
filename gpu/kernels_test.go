package gpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/pathctl/pathctl/internal/kerneltable"
)

// kernelSourcesHash recomputes what kernels/build.sh records: SHA-256 over
// the sorted *.cu and *.cuh files, each as its name, a newline, its length in
// bytes, a newline and its contents.
func kernelSourcesHash(dir string) (string, error) {
	var names []string
	for _, pat := range []string{"*.cu", "*.cuh"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return "", err
		}
		names = append(names, m...)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no kernel sources in %s", dir)
	}
	sort.Slice(names, func(i, j int) bool { return filepath.Base(names[i]) < filepath.Base(names[j]) })
	h := sha256.New()
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\n%d\n", filepath.Base(p), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func TestKernelImageMatchesSources(t *testing.T) {
	got, err := kernelSourcesHash(kernelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := kernelSourceHash(); got != want {
		t.Fatalf("kernel sources hash to %s but the embedded image was built from %s: run gpu/kernels/build.sh", got, want)
	}
}

func TestKernelImageIsFatbin(t *testing.T) {
	if len(kernelImage) < 64 {
		t.Fatalf("embedded kernel image is %d bytes", len(kernelImage))
	}
	if !bytes.HasPrefix(kernelImage, fatbinMagic) {
		t.Fatalf("embedded kernel image starts with % x, want the fatbin magic % x", kernelImage[:4], fatbinMagic)
	}
}

// TestKernelImageNamesEveryKernel checks that every kernel of the table is in
// the image (the names are stored as text in the ELF parts).
func TestKernelImageNamesEveryKernel(t *testing.T) {
	if len(kernelTable) == 0 {
		t.Fatal("the kernel table is empty")
	}
	for _, k := range kernelTable {
		if !bytes.Contains(kernelImage, append([]byte(k.name), 0)) {
			t.Errorf("kernel %s (%s) is not in the embedded image", k.name, k.source)
		}
	}
}

// kernelDir is gpu/kernels, from the package directory (go test) or the
// repository root (a copied test binary).
func kernelDir(t *testing.T) string {
	t.Helper()
	dir := "kernels"
	if _, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil {
		dir = filepath.Join("gpu", "kernels")
	}
	return dir
}

// TestKernelTableUpToDate regenerates kernels_gen.go from the kernel sources
// and compares it with the committed one.
func TestKernelTableUpToDate(t *testing.T) {
	dir := kernelDir(t)
	table, err := kerneltable.Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := table.Go()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "..", "kernels_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("gpu/kernels_gen.go is not what the kernel sources give: run gpu/kernels/build.sh --table")
	}
	if len(table.Kernels) != len(kernelTable) {
		t.Fatalf("the sources define %d kernels, the compiled table %d", len(table.Kernels), len(kernelTable))
	}
}

// TestKernelNamesInTheTable checks the kernel names the package's code
// launches: a literal name must be in the table, and a literal prefix
// ("stats_" + suffix) must begin some entry of it.
func TestKernelNamesInTheTable(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no Go sources beside the test binary (run from the gpu directory)")
	}
	prefixed := func(p string) bool {
		for _, k := range kernelTable {
			if strings.HasPrefix(k.name, p) {
				return true
			}
		}
		return false
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "launch" && sel.Sel.Name != "launchAsync") || len(x.Args) == 0 {
					return true
				}
				if lit, ok := x.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, _ := strconv.Unquote(lit.Value)
					checked++
					if _, ok := kernelIndex[name]; !ok {
						t.Errorf("%s: launches %s, which is not in the kernel table", fset.Position(lit.Pos()), name)
					}
				}
			case *ast.BinaryExpr:
				lit, ok := x.X.(*ast.BasicLit)
				if !ok || x.Op != token.ADD || lit.Kind != token.STRING {
					return true
				}
				p, _ := strconv.Unquote(lit.Value)
				if !kernelPrefix.MatchString(p) {
					return true
				}
				checked++
				if !prefixed(p) {
					t.Errorf("%s: kernel name prefix %q begins no kernel of the table", fset.Position(lit.Pos()), p)
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("found only %d kernel names in the package's code", checked)
	}
}

// kernelPrefix matches the literal first half of a kernel name built from a
// family and a type suffix.
var kernelPrefix = regexp.MustCompile(`^[a-z]+(_[a-z]+)*_$`)

// fakeModule is a driver whose module lacks the kernels in missing and
// fails every lookup with fail where that is set.
func fakeModule(missing map[string]bool, fail Result) *driver {
	d := &driver{}
	next := uintptr(1)
	d.cuModuleGetFunction = func(fn *uintptr, _ uintptr, name string) Result {
		if fail != Success {
			return fail
		}
		if missing[name] {
			return ResultNotFound
		}
		*fn = next
		next++
		return Success
	}
	return d
}

func TestResolveKernelsReportsEveryMissing(t *testing.T) {
	funcs, err := resolveKernels(fakeModule(nil, Success), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) != len(kernelTable) {
		t.Fatalf("resolved %d kernels of %d", len(funcs), len(kernelTable))
	}
	for i, f := range funcs {
		if f == 0 {
			t.Errorf("kernel %s resolved to 0", kernelTable[i].name)
		}
	}

	gone := []string{kernelTable[0].name, kernelTable[len(kernelTable)/2].name, kernelTable[len(kernelTable)-1].name}
	missing := map[string]bool{}
	for _, n := range gone {
		missing[n] = true
	}
	_, err = resolveKernels(fakeModule(missing, Success), 1)
	var ke *KernelError
	if !errors.As(err, &ke) {
		t.Fatalf("got %v, want a *KernelError", err)
	}
	if !slices.Equal(ke.Missing, gone) {
		t.Fatalf("missing %v, want %v", ke.Missing, gone)
	}
	for _, n := range gone {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("%q does not name %s", err, n)
		}
	}

	_, err = resolveKernels(fakeModule(nil, ResultInvalidContext), 1)
	var de *DriverError
	if !errors.As(err, &de) || de.Result != ResultInvalidContext {
		t.Fatalf("got %v, want the driver's CUDA_ERROR_INVALID_CONTEXT", err)
	}
}

func TestCheckArgs(t *testing.T) {
	k := &kernelTable[kernelIndex["delta_i32"]]
	good := []any{uint64(1), uint64(2), uint64(3), int32(4), uint64(5), int32(6), 0.5, uint64(7), uint64(8), uint64(9)}
	if err := checkArgs(k, good); err != nil {
		t.Fatalf("delta_i32 with its own parameters: %v", err)
	}
	if err := checkArgs(k, good[:9]); err == nil || !strings.Contains(err.Error(), "takes 10 arguments, given 9") {
		t.Errorf("too few arguments: %v", err)
	}
	bad := slices.Clone(good)
	bad[3] = int64(4) // int n given as int64
	if err := checkArgs(k, bad); err == nil || !strings.Contains(err.Error(), "argument 3 (int n) is int64") {
		t.Errorf("int64 for int: %v", err)
	}
	bad = slices.Clone(good)
	bad[6] = float32(0.5)
	if err := checkArgs(k, bad); err == nil {
		t.Error("float32 for double passed")
	}
	fill := &kernelTable[kernelIndex["batched_fill_b32"]]
	if err := checkArgs(fill, []any{uint64(1), int64(2), uint64(math.MaxUint32)}); err != nil {
		t.Errorf("batched_fill_b32 with a 32-bit value: %v", err)
	}
	if err := checkArgs(fill, []any{uint64(1), int64(2), uint64(math.MaxUint32) + 1}); err == nil {
		t.Error("batched_fill_b32 took a value wider than unsigned int")
	}
}

// TestLaunchPacksTheTableArguments launches through a fake driver: the
// kernel is the one resolved for its name, every argument reaches its slot,
// and arguments that do not fit the kernel's parameters stop the launch.
func TestLaunchPacksTheTableArguments(t *testing.T) {
	funcs, err := resolveKernels(fakeModule(nil, Success), 1)
	if err != nil {
		t.Fatal(err)
	}
	var block [2 * maxKernelArgs]uint64
	var launched []uintptr
	var got []uint64
	d := &driver{}
	d.cuLaunchKernel = func(fn uintptr, gridX, _, _, blockX, _, _, _ uint32, _ uintptr, params, _ unsafe.Pointer) Result {
		launched = append(launched, fn)
		if blockX != threadsPerBlock {
			t.Errorf("block of %d threads, want %d", blockX, threadsPerBlock)
		}
		k := &kernelTable[kernelIndex["delta_i32"]]
		table := unsafe.Slice((*unsafe.Pointer)(params), len(k.params))
		got = got[:0]
		for _, p := range table {
			got = append(got, *(*uint64)(p))
		}
		return Success
	}
	// With the pathctl_debug tag every launch is followed by a synchronise
	// of stream 0 (debugCheck); without it, by none.
	syncs := 0
	d.cuStreamSynchronize = func(stream uintptr) Result {
		if stream != 0 {
			t.Errorf("synchronised stream %#x after a launch, want the default stream 0", stream)
		}
		syncs++
		return Success
	}
	dv := &device{d: d, funcs: funcs, argBlock: unsafe.Pointer(&block[0])}
	args := []any{uint64(11), uint64(12), uint64(13), int32(-1), uint64(15), int32(16), 0.5, uint64(17), uint64(18), uint64(19)}
	if err := dv.launchAsync("delta_i32", 3, args...); err != nil {
		t.Fatal(err)
	}
	want := []uint64{11, 12, 13, 0xffffffff, 15, 16, math.Float64bits(0.5), 17, 18, 19}
	if !slices.Equal(got, want) {
		t.Errorf("slots %v, want %v", got, want)
	}
	if len(launched) != 1 || launched[0] != funcs[kernelIndex["delta_i32"]] {
		t.Errorf("launched %v, want the function resolved for delta_i32", launched)
	}
	args[3] = int64(16)
	if err := dv.launchAsync("delta_i32", 3, args...); err == nil || !strings.Contains(err.Error(), "(int n) is int64") {
		t.Errorf("an int64 for int n: %v", err)
	}
	if err := dv.launchAsync("delta_i32", 3, args[:4]...); err == nil {
		t.Error("four arguments for ten parameters launched")
	}
	if err := dv.launchAsync("delta_i33", 3, args...); err == nil || !strings.Contains(err.Error(), "no kernel delta_i33") {
		t.Errorf("an unknown kernel: %v", err)
	}
	if len(launched) != 1 {
		t.Errorf("%d launches, want only the first", len(launched))
	}
	wantSyncs := 0
	if debugChecks {
		wantSyncs = 1
	}
	if syncs != wantSyncs {
		t.Errorf("%d synchronises after one launch, want %d (debugChecks %v)", syncs, wantSyncs, debugChecks)
	}
	if debugChecks {
		// A fault the synchronise reports names the kernel that ran.
		const illegalAddress Result = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
		d.cuStreamSynchronize = func(uintptr) Result { return illegalAddress }
		args[3] = int32(-1)
		err := dv.launchAsync("delta_i32", 3, args...)
		var de *DriverError
		if !errors.As(err, &de) || de.Result != illegalAddress || !strings.Contains(err.Error(), "after kernel delta_i32") {
			t.Errorf("a fault after the launch: %v, want a *DriverError naming delta_i32", err)
		}
	}
}
