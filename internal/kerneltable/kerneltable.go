package kerneltable

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Kind is how the host passes one kernel parameter: the Go type of its
// argument, named after the constants of the gpu package.
type Kind string

// The kinds of parameter the kernels take.
const (
	Pointer Kind = "argPointer" // any T*: a device address (uint64)
	Int32   Kind = "argInt32"   // int
	Int64   Kind = "argInt64"   // long long
	Uint32  Kind = "argUint32"  // unsigned int (u32)
	Uint64  Kind = "argUint64"  // unsigned long long (u64)
	Float64 Kind = "argFloat64" // double
)

// Param is one parameter of an entry point.
type Param struct {
	Name string // as in the source
	Type string // the C type, typedefs of common.cuh spelled out
	Kind Kind
}

// Kernel is one entry point.
type Kernel struct {
	Name   string
	Source string // the .cu file that defines it
	Params []Param
}

// Table is what Parse finds in a kernel directory.
type Table struct {
	Threads int // PATHCTL_THREADS
	Kernels []Kernel
}

var (
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	funcMacro    = regexp.MustCompile(`(?m)^#define[ \t]+([A-Z_][A-Z0-9_]*)\(([^)]*)\)[ \t]*(.*)$`)
	objectMacro  = regexp.MustCompile(`(?m)^#define[ \t]+([A-Z_][A-Z0-9_]*)[ \t]+(\S.*)$`)
	invocation   = regexp.MustCompile(`(?m)^[ \t]*([A-Z_][A-Z0-9_]*)\(([^()]*)\)[ \t]*;?[ \t]*$`)
	entryPoint   = regexp.MustCompile(`extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(([^)]*)\)`)
	identifier   = regexp.MustCompile(`[A-Za-z_]\w*`)
	spaces       = regexp.MustCompile(`\s+`)
	paste        = regexp.MustCompile(`\s*##\s*`)
)

// typedefs are common.cuh's short names of unsigned types.
var typedefs = map[string]string{"u64": "unsigned long long", "u32": "unsigned int", "u8": "unsigned char"}

// kinds maps the C types a kernel may take by value to their Kind.
var kinds = map[string]Kind{
	"int": Int32, "long long": Int64, "unsigned int": Uint32,
	"unsigned long long": Uint64, "double": Float64,
}

// Parse reads the *.cu and *.cuh files of dir.
func Parse(dir string) (*Table, error) {
	common, err := os.ReadFile(filepath.Join(dir, "common.cuh"))
	if err != nil {
		return nil, fmt.Errorf("kerneltable: %w", err)
	}
	t := &Table{}
	for _, m := range objectMacro.FindAllStringSubmatch(clean(string(common)), -1) {
		if m[1] == "PATHCTL_THREADS" {
			if t.Threads, err = strconv.Atoi(strings.TrimSpace(m[2])); err != nil {
				return nil, fmt.Errorf("kerneltable: common.cuh: PATHCTL_THREADS is %q, not a number", m[2])
			}
		}
	}
	if t.Threads <= 0 {
		return nil, fmt.Errorf("kerneltable: common.cuh defines no PATHCTL_THREADS")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.cu"))
	if err != nil {
		return nil, fmt.Errorf("kerneltable: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("kerneltable: no .cu files in %s", dir)
	}
	sort.Strings(files)
	seen := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("kerneltable: %w", err)
		}
		name := filepath.Base(f)
		ks, err := parseSource(name, string(b))
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			if prev, ok := seen[k.Name]; ok {
				return nil, fmt.Errorf("kerneltable: %s: kernel %s is also defined in %s", name, k.Name, prev)
			}
			seen[k.Name] = name
			t.Kernels = append(t.Kernels, k)
		}
	}
	return t, nil
}

// clean drops comments and joins continued lines.
func clean(src string) string {
	src = blockComment.ReplaceAllString(src, " ")
	src = lineComment.ReplaceAllString(src, "")
	return strings.ReplaceAll(src, "\\\n", " ")
}

type macro struct {
	params []string
	body   string
}

// parseSource finds the entry points of one .cu file, in source order.
func parseSource(name, src string) ([]Kernel, error) {
	src = clean(src)
	macros := map[string]macro{}
	for _, m := range funcMacro.FindAllStringSubmatch(src, -1) {
		var params []string
		for _, p := range strings.Split(m[2], ",") {
			params = append(params, strings.TrimSpace(p))
		}
		macros[m[1]] = macro{params: params, body: m[3]}
	}
	// Drop the preprocessor lines, then expand the invocations in place.
	var code strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			code.WriteString(line)
			code.WriteByte('\n')
		}
	}
	var expandErr error
	expanded := invocation.ReplaceAllStringFunc(code.String(), func(call string) string {
		m := invocation.FindStringSubmatch(call)
		mac, ok := macros[m[1]]
		if !ok {
			return call
		}
		args := strings.Split(m[2], ",")
		if len(args) != len(mac.params) {
			expandErr = fmt.Errorf("kerneltable: %s: %s takes %d arguments, given %d", name, m[1], len(mac.params), len(args))
			return call
		}
		sub := map[string]string{}
		for i, p := range mac.params {
			sub[p] = strings.TrimSpace(args[i])
		}
		body := identifier.ReplaceAllStringFunc(mac.body, func(id string) string {
			if v, ok := sub[id]; ok {
				return v
			}
			return id
		})
		return paste.ReplaceAllString(body, "") + "\n"
	})
	if expandErr != nil {
		return nil, expandErr
	}
	var out []Kernel
	for _, m := range entryPoint.FindAllStringSubmatch(expanded, -1) {
		k := Kernel{Name: m[1], Source: name}
		for _, p := range strings.Split(m[2], ",") {
			param, err := parseParam(p)
			if err != nil {
				return nil, fmt.Errorf("kerneltable: %s: kernel %s: %w", name, k.Name, err)
			}
			k.Params = append(k.Params, param)
		}
		out = append(out, k)
	}
	return out, nil
}

// parseParam reads one parameter declaration such as "const T* weights"
// (after expansion: "const long long* offsets").
func parseParam(decl string) (Param, error) {
	decl = strings.TrimSpace(spaces.ReplaceAllString(decl, " "))
	ids := identifier.FindAllStringIndex(decl, -1)
	if len(ids) < 2 {
		return Param{}, fmt.Errorf("parameter %q has no type or no name", decl)
	}
	last := ids[len(ids)-1]
	name := decl[last[0]:last[1]]
	typ := strings.TrimSpace(decl[:last[0]])
	pointer := strings.Contains(typ, "*")
	base := strings.TrimSpace(strings.ReplaceAll(typ, "*", ""))
	base = strings.TrimSpace(strings.TrimPrefix(base, "const "))
	if t, ok := typedefs[base]; ok {
		typ = strings.Replace(typ, base, t, 1)
		base = t
	}
	typ = strings.ReplaceAll(typ, " *", "*")
	if pointer {
		return Param{Name: name, Type: typ, Kind: Pointer}, nil
	}
	k, ok := kinds[base]
	if !ok {
		return Param{}, fmt.Errorf("parameter %q has type %q, which the host cannot pass (add it to kerneltable's kinds and the gpu package's launch)", decl, base)
	}
	return Param{Name: name, Type: typ, Kind: k}, nil
}

// Go renders t as the gpu package's kernels_gen.go.
func (t *Table) Go() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by gpu/kernels/build.sh; DO NOT EDIT.\n")
	b.WriteString("// Regenerate with gpu/kernels/build.sh --table (no CUDA compiler needed).\n\n")
	b.WriteString("package gpu\n\n")
	b.WriteString("// threadsPerBlock is PATHCTL_THREADS of kernels/common.cuh: every kernel is\n")
	b.WriteString("// compiled with __launch_bounds__ of it and launched with blocks of it.\n")
	fmt.Fprintf(&b, "const threadsPerBlock = %d\n\n", t.Threads)
	b.WriteString("// kernelTable is every extern \"C\" entry point of kernels/*.cu, by file\n")
	b.WriteString("// and then in source order, with its parameters. The device resolves\n")
	b.WriteString("// them all when it loads the image.\n")
	b.WriteString("var kernelTable = [...]kernelEntry{\n")
	for _, k := range t.Kernels {
		fmt.Fprintf(&b, "\t{%q, %q, []kernelParam{", k.Name, k.Source)
		for i, p := range k.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{%q, %q, %s}", p.Name, p.Type, p.Kind)
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("kerneltable: formatting the table: %w", err)
	}
	return src, nil
}
