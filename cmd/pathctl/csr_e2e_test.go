package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// csrLine is the --verbose line that says where the CSR was built.
var csrLine = regexp.MustCompile(`(?m)^pathctl: CSR built on the (CPU|GPU) in [0-9.]+[µnm]?s`)

// TestVerboseSaysWhereTheCSRWasBuilt runs a random graph on every engine
// choice: --engine cpu builds and runs on the CPU and matches the oracle;
// --verbose prints one line saying where the CSR was built (the CPU for
// --engine cpu, and for auto wherever the run then went); --quiet prints
// nothing about it. Where no GPU is usable, auto says once that it uses
// the CPU.
func TestVerboseSaysWhereTheCSRWasBuilt(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 9))
	dir := t.TempDir()
	n := 80 + rng.IntN(40) // above the sources at which auto stays on the CPU
	arcs := map[[2]int]float64{}
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	for i := 0; i < n; i++ { // every vertex named
		fmt.Fprintf(&b, "%d,%d,%d\n", i, (i+1)%n, 1+rng.IntN(20))
	}
	for i := 0; i < n*3; i++ {
		u, v, w := rng.IntN(n), rng.IntN(n), 1+rng.IntN(20)
		fmt.Fprintf(&b, "%d,%d,%d\n", u, v, w)
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		f := strings.Split(line, ",")
		u, _ := strconv.Atoi(f[0])
		v, _ := strconv.Atoi(f[1])
		w, _ := strconv.ParseFloat(f[2], 64)
		if old, ok := arcs[[2]int{u, v}]; u != v && (!ok || w < old) {
			arcs[[2]int{u, v}] = w
		}
	}
	in := writeFile(t, dir, "g.csv", b.String())

	for _, engine := range []string{"cpu", "auto"} {
		out := filepath.Join(dir, engine+".csv")
		r := pathctl(t, nil, "run", in, "--engine", engine, "--verbose", "-o", out)
		if r.code != 0 {
			t.Fatalf("seed %d: --engine %s: exit %d: %s", seed, engine, r.code, r.stderr)
		}
		m := csrLine.FindAllStringSubmatch(r.stderr, -1)
		if len(m) != 1 {
			t.Fatalf("--engine %s --verbose: want one line saying where the CSR was built, got %q", engine, r.stderr)
		}
		ranOn := regexp.MustCompile(`pathctl: engine (cpu|gpu),`).FindStringSubmatch(r.stderr)
		if ranOn == nil {
			t.Fatalf("--engine %s --verbose: no engine line in %q", engine, r.stderr)
		}
		if engine == "cpu" && m[0][1] != "CPU" {
			t.Errorf("--engine cpu: CSR built on the %s", m[0][1])
		}
		if engine == "auto" && strings.ToLower(m[0][1]) != ranOn[1] {
			t.Errorf("--engine auto: CSR built on the %s, run on the %s", m[0][1], ranOn[1])
		}
		if fallbacks := strings.Count(r.stderr, "using the CPU engine"); fallbacks != 0 && (engine == "cpu" || fallbacks != 1 || ranOn[1] != "cpu") {
			t.Errorf("--engine %s: %d fallback notices: %q", engine, fallbacks, r.stderr)
		}
		_, rows := readCSVPairs(t, out)
		for s := 0; s < n; s++ {
			want := dijkstraOracle(n, arcs, s)
			for v := 0; v < n; v++ {
				got, ok := rows[fmt.Sprintf("%d>%d", s, v)]
				if math.IsInf(want[v], 1) {
					if ok {
						t.Fatalf("seed %d: --engine %s: %d>%d reachable, oracle says not", seed, engine, s, v)
					}
					continue
				}
				if d, err := strconv.ParseFloat(got[0], 64); !ok || err != nil || d != want[v] {
					t.Fatalf("seed %d: --engine %s: %d>%d = %v, oracle %v", seed, engine, s, v, got, want[v])
				}
			}
		}
	}

	r := pathctl(t, nil, "run", in, "--engine", "cpu", "--verbose", "--quiet", "-o", filepath.Join(dir, "quiet.csv"))
	if r.code != 0 || r.stderr != "" {
		t.Errorf("--quiet: exit %d, stderr %q", r.code, r.stderr)
	}
}
