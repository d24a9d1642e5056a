package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestProgressLinesEveryInterval: on a fake clock, updates every second
// for 12 s print a line at 5 s and at 10 s only, each with the
// percentage, the sources done, the elapsed and the remaining time.
func TestProgressLinesEveryInterval(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(1000, 0)
	p := newProgressLines(&buf, 5*time.Second, func() time.Time { return clock })
	for s := int64(1); s <= 12; s++ {
		clock = clock.Add(time.Second)
		p.update(s*100, 2000)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		"pathctl: progress  25.0%: 500 of 2000 sources, 5s elapsed, about 15s left",
		"pathctl: progress  50.0%: 1000 of 2000 sources, 10s elapsed, about 10s left",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	format := regexp.MustCompile(`^pathctl: progress +\d+\.\d%: \d+ of \d+ sources, \S+ elapsed, about \S+ left$`)
	for i, l := range lines {
		if l != want[i] || !format.MatchString(l) {
			t.Errorf("line %d = %q, want %q", i, l, want[i])
		}
	}
}

// TestProgressLinesOnlyOffTerminal: --progress or -v on a stderr that is
// no terminal prints lines (of a run here: a short interval); --quiet, or
// neither flag, prints none.
func TestProgressLinesOnlyOffTerminal(t *testing.T) {
	cases := []struct {
		flags map[string]bool
		lines bool
	}{
		{map[string]bool{"progress": true}, true},
		{map[string]bool{"verbose": true}, true},
		{map[string]bool{"progress": true, "quiet": true}, false},
		{map[string]bool{}, false},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		e := &env{stderr: &buf}
		p := newProgressOf(e, fakeFlags(c.flags), 10)
		if (p.lines != nil) != c.lines || p.bar != nil {
			t.Errorf("%v: lines %v, bar %v; want lines %v and no bar", c.flags, p.lines != nil, p.bar != nil, c.lines)
		}
	}
}

type fakeFlags map[string]bool

func (f fakeFlags) Bool(name string) bool { return f[name] }

// TestProgressFlagOnRun: pathctl run --progress on a log (a pipe) runs and
// keeps its summary; the flag is known to run.
func TestProgressFlagOnRun(t *testing.T) {
	r := pathctl(t, nil, "run", "../../testdata/sample.gr", "--progress", "--layout", "stats", "--engine", "cpu", "-o", t.TempDir()+"/s.arrow")
	if r.code != 0 || !strings.Contains(r.stderr, "2000 sources") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

// TestProgressEvery: --progress-every sets the least time between lines:
// a run of many small blocks with 1ns prints a line after each, ending at
// all of its sources.
func TestProgressEvery(t *testing.T) {
	r := pathctl(t, nil, "run", "../../testdata/sample.gr", "--progress", "--progress-every", "1ns", "--max-block", "100",
		"--layout", "stats", "--engine", "cpu", "-o", t.TempDir()+"/s.arrow")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Count(r.stderr, "pathctl: progress ")
	if lines < 10 || !strings.Contains(r.stderr, "100.0%: 2000 of 2000 sources") {
		t.Fatalf("%d progress lines for 20 blocks:\n%s", lines, r.stderr)
	}
}
