package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBetweennessLayout: run --layout betweenness writes one row per
// vertex (the input's ids) with networkx's values: on the undirected
// 3-path a - b - c, normalized 0, 1, 0; unnormalized with endpoints 2, 3,
// 2; from the sources a and c with endpoints (networkx's k = 2 sample)
// 0.75, 1, 0.75; and --engine gpu computes on the device, or exits 4
// without one.
func TestBetweennessLayout(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "path.csv", "src,dst\na,b\nb,c\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "vertex,betweenness\na,0\nb,1\nc,0\n"},
		{[]string{"--normalized=false", "--endpoints"}, "vertex,betweenness\na,2\nb,3\nc,2\n"},
		{[]string{"--endpoints", "--sources", "a,c"}, "vertex,betweenness\na,0.75\nb,1\nc,0.75\n"},
		{[]string{"--k", "3", "--seed", "7"}, "vertex,betweenness\na,0\nb,1\nc,0\n"},
	} {
		out := filepath.Join(dir, "out.csv")
		args := append([]string{"run", in, "--undirected", "--layout", "betweenness", "--engine", "cpu", "-o", out}, c.args...)
		r := pathctl(t, nil, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(out); string(got) != c.want {
			t.Errorf("%v:\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
	// --engine gpu computes on the device, and where there is none fails
	// as every layout does (exit 4), leaving no output.
	out := filepath.Join(dir, "gpu.csv")
	r := pathctl(t, nil, "run", in, "--layout", "betweenness", "--engine", "gpu", "-o", out)
	if r.code == 4 && strings.Contains(r.stderr, "engine unavailable: the gpu engine") {
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--engine gpu without a GPU left %s", out)
		}
		return
	}
	if r.code != 0 {
		t.Fatalf("--engine gpu: exit %d: %s", r.code, r.stderr)
	}
	// Directed a → b → c: one path through b, of 2 ordered pairs.
	if got, _ := os.ReadFile(out); string(got) != "vertex,betweenness\na,0\nb,0.5\nc,0\n" {
		t.Errorf("--engine gpu, directed:\n%s", got)
	}
}

// TestBetweennessRefusals: the betweenness flags with another layout, --k
// beside --sources or past the vertices, and zero weights are usage errors
// (exit 2); negative weights exit 5 saying betweenness needs non-negative
// weights; no output is left behind.
func TestBetweennessRefusals(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,1\n2,3,2\n")
	negative := writeFile(t, dir, "neg.csv", "src,dst,weight\n1,2,1\n2,3,-2\n")
	zero := writeFile(t, dir, "zero.csv", "src,dst,weight\n1,2,0\n2,3,2\n")
	out := filepath.Join(dir, "x-out.csv")
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{in, "--k", "2"}, exitUsage, "--k is an option of --layout betweenness and edge-betweenness, not pairs"},
		{[]string{in, "--layout", "stats", "--endpoints"}, exitUsage, "--endpoints is an option of --layout betweenness"},
		{[]string{in, "--layout", "betweenness", "--k", "2", "--sources", "1"}, exitUsage, "give --k or --sources, not both"},
		{[]string{in, "--layout", "betweenness", "--k", "0"}, exitUsage, "--k 0: want 1 or more"},
		{[]string{in, "--layout", "betweenness", "--k", "4"}, exitUsage, "k 4 is more than the graph's 3 vertices"},
		{[]string{in, "--layout", "betweenness", "--seed", "4"}, exitUsage, "--seed draws the --k sample"},
		{[]string{zero, "--layout", "betweenness"}, exitUsage, "edge 1 -> 2 weighs 0"},
		{[]string{negative, "--layout", "betweenness"}, exitNegative, "betweenness needs non-negative weights"},
	} {
		r := pathctl(t, nil, append(append([]string{"run"}, c.args...), "-o", out)...)
		oneErrorLine(t, r, c.code, c.says)
	}
	assertNoOutput(t, dir, "-out.csv")
	// Counting hops, the weights do not matter.
	if r := pathctl(t, nil, "run", zero, "--layout", "betweenness", "--unweighted", "-o", filepath.Join(dir, "hops.csv")); r.code != 0 {
		t.Errorf("--unweighted: exit %d: %s", r.code, r.stderr)
	}
}

// TestBetweennessDryRun: --dry-run of the betweenness layout names the
// sources the run would sum over (the --k sample), the CPU engine (for so
// few sources) and the
// search per source, refuses what the run refuses with the run's words,
// and writes nothing.
func TestBetweennessDryRun(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,1\n2,3,2\n3,4,1\n4,5,3\n")
	zero := writeFile(t, dir, "zero.csv", "src,dst,weight\n1,2,0\n2,3,2\n")
	out := filepath.Join(dir, "x-out.csv")
	r := pathctl(t, nil, "run", in, "--layout", "betweenness", "--k", "3", "--seed", "2", "--dry-run", "-o", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, line := range []string{
		"sources:    3 (sampled with --seed 2)\n",
		"layout:     betweenness, 5 rows, float64 values\n",
		"engine:     cpu (3 sources: fewer than 64, faster than a GPU launch)\n",
		"algorithm:  betweenness (Brandes, Dijkstra per source)\n",
	} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("the dry run lacks %q:\n%s", line, r.stdout)
		}
	}
	r = pathctl(t, nil, "run", in, "--layout", "betweenness", "--unweighted", "--dry-run", "-o", out)
	if r.code != 0 || !strings.Contains(r.stdout, "sources:    5 (every vertex)\n") || !strings.Contains(r.stdout, "(Brandes, BFS per source)") {
		t.Errorf("--unweighted: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{in, "--k", "6"}, "k 6 is more than the graph's 5 vertices"},
		{[]string{zero}, "edge 1 -> 2 weighs 0"},
	} {
		r := pathctl(t, nil, append([]string{"run", "--layout", "betweenness", "--dry-run", "-o", out}, c.args...)...)
		oneErrorLine(t, r, exitUsage, c.says)
	}
	assertNoOutput(t, dir, "-out.csv")
}

// TestBetweennessInterrupted: SIGINT (Ctrl-C) ends a betweenness run
// mid-way as interrupted (130), leaving no file in the output's directory.
func TestBetweennessInterrupted(t *testing.T) {
	in := filepath.Join(t.TempDir(), "grid.parquet")
	if r := pathctl(t, nil, "gen", "grid", "--rows", "150", "--cols", "150", "-o", in); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	dir := t.TempDir()
	// 22,500 weighted sources on one thread: minutes of work.
	cmd := exec.Command(binPath, "run", in, "--layout", "betweenness", "--threads", "1", "-o", filepath.Join(dir, "b.arrow"), "--quiet")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	}()
	waitForTemporary(t, dir, done)
	time.Sleep(100 * time.Millisecond) // into the sources
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
		done <- err
	case <-time.After(10 * time.Second):
		t.Fatal("the run ignored SIGINT for 10 s")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit %v, want %d; stderr %q", err, exitInterrupted, errb.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("SIGINT left %s behind", entries[0].Name())
	}
}

// TestEdgeBetweennessLayout: run --layout edge-betweenness writes one row
// per edge (src, dst, betweenness) with networkx's values: on a → b → c,
// a → c, c → d each arc's share of the 12 ordered pairs; undirected and
// unnormalized, each edge once with both directions' paths, halved; the
// dry run counts the rows; --endpoints is refused.
func TestEdgeBetweennessLayout(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst\na,b\nb,c\na,c\nc,d\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "src,dst,betweenness\na,b,0.08333333333333333\na,c,0.16666666666666666\nb,c,0.16666666666666666\nc,d,0.25\n"},
		{[]string{"--undirected", "--normalized=false"}, "src,dst,betweenness\na,b,1\na,c,2\nb,c,2\nc,d,3\n"},
	} {
		out := filepath.Join(dir, "out.csv")
		r := pathctl(t, nil, append([]string{"run", in, "--layout", "edge-betweenness", "-o", out}, c.args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(out); string(got) != c.want {
			t.Errorf("%v:\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
	r := pathctl(t, nil, "run", in, "--undirected", "--layout", "edge-betweenness", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "layout:     edge-betweenness, 4 rows, float64 values\n") ||
		!strings.Contains(r.stdout, "algorithm:  edge betweenness (Brandes, BFS per source)\n") {
		t.Errorf("dry run: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pathctl(t, nil, "run", in, "--layout", "edge-betweenness", "--endpoints", "-o", filepath.Join(dir, "x-out.csv"))
	oneErrorLine(t, r, exitUsage, "endpoints is an option of the vertices' betweenness, not of edge-betweenness")
	assertNoOutput(t, dir, "-out.csv")
}

// TestBetweennessDocsSessions: the terminal sessions of docs/cli.md's
// "Betweenness centrality" ("$ pathctl ..." and what it prints) print what
// they show, run from the repository's root.
func TestBetweennessDocsSessions(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Betweenness centrality\n")
	if start < 0 {
		t.Fatal("docs/cli.md has no Betweenness centrality section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	ran := 0
	for _, block := range strings.Split(section, "```sh\n")[1:] {
		block = block[:strings.Index(block, "```")]
		if !strings.HasPrefix(block, "$ ") {
			continue
		}
		for _, step := range strings.Split(block, "$ ")[1:] {
			command, shown, _ := strings.Cut(step, "\n")
			args := strings.Fields(command)
			if args[0] != "pathctl" {
				t.Fatalf("a session runs %q, not pathctl", command)
			}
			cmd := exec.Command(binPath, args[1:]...)
			cmd.Dir = root
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v: %s", command, err, errb.String())
			}
			if out.String() != shown || errb.Len() > 0 {
				t.Errorf("%s printed\n%s\n(stderr %q); docs/cli.md shows\n%s", command, out.String(), errb.String(), shown)
			}
			ran++
		}
	}
	if ran < 2 {
		t.Errorf("%d sessions ran, want the vertex and the edge examples", ran)
	}
}
