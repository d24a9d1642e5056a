package pipeline

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestOpensEarly checks when the device is opened beside the
// read: as LoadGraph would open it, with the vertex count of "every
// source" guessed from the input's size.
func TestOpensEarly(t *testing.T) {
	cases := []struct {
		engine  string
		sources int
		bytes   int64
		want    bool
	}{
		{"", 0, 1 << 30, false},
		{"cpu", 0, 1 << 30, false},
		{"cpu", 1000, -1, false},
		{"tpu", 1000, -1, false},
		{"gpu", 1, 10, true},
		{"gpu", 0, -1, true},
		{"auto", minGPUSources - 1, 1 << 30, false},
		{"auto", minGPUSources, 10, true},
		{"auto", 0, -1, true},
		{"auto", 0, minEarlyOpenBytes - 1, false},
		{"auto", 0, minEarlyOpenBytes, true},
	}
	for _, c := range cases {
		if got := OpensEarly(LoadOptions{Engine: c.engine, Sources: c.sources}, c.bytes); got != c.want {
			t.Errorf("engine %q, %d sources, %d bytes: opens early %v, want %v", c.engine, c.sources, c.bytes, got, c.want)
		}
	}
}

// blockedOpener is a device opener that says when it starts and returns
// err only when released: a device that takes as long as the test wants.
type blockedOpener struct {
	started, release chan struct{}
	err              error
}

func newBlockedOpener(err error) *blockedOpener {
	return &blockedOpener{started: make(chan struct{}), release: make(chan struct{}), err: err}
}

func (b *blockedOpener) open() (graph.GPUDevice, error) {
	close(b.started)
	<-b.release
	return nil, b.err
}

// waitStarted fails the test unless the opener has started within a
// second, while the caller went on.
func (b *blockedOpener) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(time.Second):
		t.Fatal("the device opening did not start while the caller went on")
	}
}

// TestDeviceOpensBesideTheRead checks the overlap: the opening starts and
// runs while the caller reads (here: builds a table), LoadGraph waits only
// for what is left of it, takes its result as its own (auto keeps the
// failure and runs on the CPU; gpu fails with ErrUnavailable) and logs
// that the device opened beside the read.
func TestDeviceOpensBesideTheRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noGPU := errors.New("gpu: no device here")
	for _, engine := range []string{"auto", "gpu"} {
		opener := newBlockedOpener(noGPU)
		opening := devices.OpenWith(opener.open)
		opener.waitStarted(t) // started, and startOpening returned: no wait
		tbl := randomTable(rng, 2*minGPUSources, 8*minGPUSources, testgraphs.Int)
		const rest = 30 * time.Millisecond
		go func() {
			time.Sleep(rest)
			close(opener.release)
		}()
		var log bytes.Buffer
		g, err := LoadGraph(tbl, LoadOptions{Engine: engine, Device: opening, Log: &log})
		if engine == "gpu" {
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), noGPU.Error()) {
				t.Errorf("gpu: LoadGraph's error %v, want ErrUnavailable saying %q", err, noGPU)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			times := g.Times()
			// The wait ends when LoadGraph sees the opening's end, a
			// handoff later than the opening's own clock stops (37.55 ms
			// against 37.36 ms under the race detector): a few
			// milliseconds of that are no wait longer than the opening.
			const handoff = 5 * time.Millisecond
			if !times.Early || times.DeviceWait < rest/2 || times.DeviceOpen+handoff < times.DeviceWait || g.BuiltOn() != "cpu" {
				t.Errorf("auto: times %+v, built on %s; want an early opening waited for about %s, the CSR on the CPU", times, g.BuiltOn(), rest)
			}
			if !errors.Is(g.gpuErr, noGPU) {
				t.Errorf("auto: the graph keeps %v as why there is no GPU, want %v", g.gpuErr, noGPU)
			}
			if !strings.HasPrefix(log.String(), "pathctl: CSR built on the CPU in ") {
				t.Errorf("auto: log %q", log.String())
			}
			g.Close()
		}
		if err := opening.Close(); err != nil {
			t.Errorf("%s: Close after LoadGraph took the opening: %v", engine, err)
		}
		if _, _, _, err := opening.Take(); !errors.Is(err, graph.ErrOpeningTaken) {
			t.Errorf("%s: a second take: %v", engine, err)
		}
	}
}

// TestDeviceOpeningGivenUp checks the paths where the opened device is not
// used: LoadGraph on the CPU (few sources, a bad table, an unknown engine)
// gives the opening up without waiting for it, and Close without LoadGraph
// (a read that failed) waits for the open to end so that what it opened
// is closed.
func TestDeviceOpeningGivenUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	small := randomTable(rng, minGPUSources-1, 200, testgraphs.Int)
	big := randomTable(rng, 2*minGPUSources, 400, testgraphs.Int)
	cases := []struct {
		name string
		load func(o *devices.Opening) error
	}{
		{"few vertices", func(o *devices.Opening) error {
			_, err := LoadGraph(small, LoadOptions{Engine: "auto", Device: o})
			return err
		}},
		{"few sources", func(o *devices.Opening) error {
			_, err := LoadGraph(big, LoadOptions{Engine: "auto", Sources: 3, Device: o})
			return err
		}},
		{"engine cpu", func(o *devices.Opening) error {
			_, err := LoadGraph(big, LoadOptions{Engine: "cpu", Device: o})
			return err
		}},
		{"unknown engine", func(o *devices.Opening) error {
			if _, err := LoadGraph(big, LoadOptions{Engine: "tpu", Device: o}); !errors.Is(err, ErrInvalid) {
				t.Errorf("engine tpu: %v", err)
			}
			return nil
		}},
	}
	for _, bt := range []int{0, 3} { // refused by graph.Build, by the range check
		bad := badTables[bt]
		cases = append(cases, struct {
			name string
			load func(o *devices.Opening) error
		}{"bad table: " + bad.name, func(o *devices.Opening) error {
			opt := bad.opt
			opt.Engine, opt.Device = "auto", o
			if _, err := LoadGraph(&arrowio.EdgeTable{Edges: bad.edges, Name: "bad.csv"}, opt); err == nil {
				t.Errorf("bad table %s: no error", bad.name)
			}
			return nil
		}})
	}
	for _, c := range cases {
		opener := newBlockedOpener(errors.New("gpu: not used"))
		opening := devices.OpenWith(opener.open)
		opener.waitStarted(t)
		loaded := make(chan error, 1)
		go func() { loaded <- c.load(opening) }()
		select {
		case err := <-loaded:
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		case <-time.After(5 * time.Second):
			close(opener.release)
			t.Fatalf("%s: LoadGraph waited for a device it does not use", c.name)
		}
		if _, _, _, err := opening.Take(); !errors.Is(err, graph.ErrOpeningTaken) {
			t.Errorf("%s: the opening was not given up: take %v", c.name, err)
		}
		close(opener.release)
	}

	// A read that fails never reaches LoadGraph: Close waits for the open.
	opener := newBlockedOpener(nil)
	opening := devices.OpenWith(opener.open)
	opener.waitStarted(t)
	closed := make(chan error, 1)
	go func() { closed <- opening.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned before the open it must close ended")
	case <-time.After(20 * time.Millisecond):
	}
	close(opener.release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := opening.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestDeviceOpenedEarlyOnGPU runs the real engine opened beside a read: the
// graph is built on it and run on it (one context for both), the result is
// the CPU engine's, and an opening given up or closed without LoadGraph
// releases its device (a second engine opens after them all).
func TestDeviceOpenedEarlyOnGPU(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	tbl := randomTable(rng, 3*minGPUSources, 12*minGPUSources, testgraphs.Int)
	cpuGraph, err := LoadGraph(tbl, LoadOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := collectText(t, cpuGraph, Options{Resources: Resources{Engine: "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	// Loaded while the device still opens (the small table's CSR is built
	// on the CPU beside the open, long before it ends), and loaded once the
	// open ended (the CSR is built on the GPU).
	for _, waitOpen := range []bool{false, true} {
		opens := devices.Opens()
		opening := devices.Open(0)
		defer opening.Close()
		if waitOpen {
			for opening.Pending() {
				time.Sleep(time.Millisecond)
			}
		}
		g, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: "auto", Device: opening})
		if err != nil {
			t.Fatal(err)
		}
		times := g.Times()
		wantOn := map[bool]string{false: "cpu", true: "gpu"}[waitOpen]
		if g.BuiltOn() != wantOn || times.BesideOpen == waitOpen || !times.Early || times.DeviceOpen <= 0 || g.DeviceOpenTimes().Context <= 0 {
			t.Errorf("open waited for %v: built on %s, times %+v; want built on the %s, opened early, the engine kept", waitOpen, g.BuiltOn(), times, wantOn)
		}
		got, err := collectText(t, g, Options{Resources: Resources{Engine: "auto", Devices: []int{0}}})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("open waited for %v: the GPU run of the graph built beside the early device differs from the CPU engine's", waitOpen)
		}
		if n := devices.Opens() - opens; n != 1 {
			t.Errorf("open waited for %v: %d engines opened for the early build and its run, want 1", waitOpen, n)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Given up by LoadGraph (a small graph), and closed without LoadGraph.
	small := randomTable(rng, minGPUSources-1, 100, testgraphs.Int)
	if _, err := LoadGraph(small, LoadOptions{Engine: "auto", Device: devices.Open(0)}); err != nil {
		t.Fatal(err)
	}
	if err := devices.Open(0).Close(); err != nil {
		t.Fatalf("closing an early opening never used: %v", err)
	}
	e, err := newGPU()
	if err != nil {
		t.Fatalf("opening the device after the early openings: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDeviceOpeningGiveUp checks the exported ways to let go of an
// opening begun before the flags were parsed: GiveUp returns without
// waiting for the open, after LeaveToExit as before it; later takes fail;
// the nil opening ignores both; and a graph built on the CPU has no device
// to abandon or time.
func TestDeviceOpeningGiveUp(t *testing.T) {
	for _, exiting := range []bool{false, true} {
		opener := newBlockedOpener(errors.New("gpu: not used"))
		opening := devices.OpenWith(opener.open)
		opener.waitStarted(t)
		if exiting {
			opening.LeaveToExit()
		}
		gaveUp := make(chan struct{})
		go func() {
			opening.GiveUp()
			opening.GiveUp()
			close(gaveUp)
		}()
		select {
		case <-gaveUp:
		case <-time.After(5 * time.Second):
			t.Fatalf("exiting %v: GiveUp waited for the open", exiting)
		}
		if _, _, _, err := opening.Take(); !errors.Is(err, graph.ErrOpeningTaken) {
			t.Errorf("exiting %v: take after GiveUp: %v", exiting, err)
		}
		close(opener.release)
		if err := opening.Close(); err != nil {
			t.Errorf("exiting %v: Close after GiveUp: %v", exiting, err)
		}
	}
	var none *devices.Opening
	none.LeaveToExit()
	none.GiveUp()
	rng := rand.New(rand.NewPCG(11, 12))
	g, err := LoadGraph(randomTable(rng, 10, 30, testgraphs.Int), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.AbandonDevice(); err != nil || g.DeviceOpenTimes() != (graph.GPUOpenTimes{}) {
		t.Errorf("a graph built on the CPU: AbandonDevice %v, open times %+v", err, g.DeviceOpenTimes())
	}
}

// TestDeviceLeftToExitOnGPU runs the CLI's exit path on the real engine:
// a device opened before the read and marked LeaveToExit builds the graph
// and runs it with the CPU engine's result; AbandonDevice ends it without
// error, Close does nothing after it, and the process can still open and
// use the device (which a process about to exit never does, but it shows
// that nothing was left half torn down). An opening left to the exit and
// given up unused does not keep the device from opening either.
func TestDeviceLeftToExitOnGPU(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	tbl := randomTable(rng, 3*minGPUSources, 12*minGPUSources, testgraphs.Int)
	cpuGraph, err := LoadGraph(tbl, LoadOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := collectText(t, cpuGraph, Options{Resources: Resources{Engine: "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	opening := devices.Open(0)
	opening.LeaveToExit()
	defer opening.GiveUp()
	g, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: "auto", Device: opening})
	if err != nil {
		t.Fatal(err)
	}
	if g.BuiltOn() != "gpu" && !g.Times().BesideOpen {
		t.Fatalf("built on %s, times %+v; want the GPU, or the CPU beside the open", g.BuiltOn(), g.Times())
	}
	if ot := g.DeviceOpenTimes(); ot.Context <= 0 {
		t.Errorf("open times %+v: the context took no time", ot)
	}
	got, err := collectText(t, g, Options{Resources: Resources{Engine: "auto"}})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("the GPU run on the device left to the exit differs from the CPU engine's")
	}
	if err := g.AbandonDevice(); err != nil {
		t.Fatalf("AbandonDevice: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close after AbandonDevice: %v", err)
	}
	unused := devices.Open(0)
	unused.LeaveToExit()
	unused.GiveUp()
	again, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: "gpu"})
	if err != nil {
		t.Fatalf("opening the device again: %v", err)
	}
	defer again.Close()
	if got, err := collectText(t, again, Options{Resources: Resources{Engine: "gpu"}}); err != nil || got != want {
		t.Errorf("the run on a device opened after one was abandoned: %v, equal %v", err, got == want)
	}
}

// TestCSRBuiltBesideTheOpening checks the CSR built on the CPU while
// LoadGraph waits for an opening still under way: it is graph.Build's CSR,
// it is kept when the open fails (auto runs on the CPU with it, gpu fails as
// before), a table graph.Build refuses gives graph.Build's error, and an
// opening already ended builds nothing beside.
func TestCSRBuiltBesideTheOpening(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	tbl := randomTable(rng, 3*minGPUSources, 12*minGPUSources, testgraphs.Int)
	want, err := graph.Build(&tbl.Edges, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	noGPU := errors.New("gpu: no device here")
	for _, engine := range []string{"auto", "gpu"} {
		opener := newBlockedOpener(noGPU)
		opening := devices.OpenWith(opener.open)
		opener.waitStarted(t)
		time.AfterFunc(30*time.Millisecond, func() { close(opener.release) })
		var log bytes.Buffer
		g, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: engine, Device: opening, Log: &log})
		if engine == "gpu" {
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("gpu: %v, want ErrUnavailable", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		times := g.Times()
		if !times.BesideOpen || !times.Early || g.BuiltOn() != "cpu" || !errors.Is(g.gpuErr, noGPU) {
			t.Errorf("auto: times %+v, built on %s, GPU error %v; want the CSR built beside the open", times, g.BuiltOn(), g.gpuErr)
		}
		if diff := sameCSR(g.CSR, want); diff != "" {
			t.Errorf("auto: the CSR built beside the open: %s", diff)
		}
		if !strings.HasPrefix(log.String(), "pathctl: CSR built on the CPU in ") || !strings.Contains(log.String(), "while the device was opening") {
			t.Errorf("auto: log %q", log.String())
		}
	}

	// A table graph.Build refuses: its error, whichever build reports it.
	bad := randomTable(rng, 3*minGPUSources, 12*minGPUSources, testgraphs.Int)
	bad.Edges.Src[5] = int32(bad.Edges.NumVertices) // outside the vertex range
	_, wantErr := graph.Build(&bad.Edges, graph.BuildOptions{})
	opener := newBlockedOpener(noGPU)
	opening := devices.OpenWith(opener.open)
	opener.waitStarted(t)
	time.AfterFunc(20*time.Millisecond, func() { close(opener.release) })
	if _, err := LoadGraph(bad, LoadOptions{Engine: "auto", Device: opening}); err == nil || !strings.Contains(err.Error(), wantErr.Error()) {
		t.Errorf("a table graph.Build refuses: %v, want %v", err, wantErr)
	}

	// An opening that ended before the load: nothing is built beside it.
	opener = newBlockedOpener(noGPU)
	opening = devices.OpenWith(opener.open)
	close(opener.release)
	for opening.Pending() {
		time.Sleep(time.Millisecond)
	}
	g, err := LoadGraph(tbl, LoadOptions{Undirected: true, Engine: "auto", Device: opening})
	if err != nil {
		t.Fatal(err)
	}
	if times := g.Times(); times.BesideOpen || !times.Early {
		t.Errorf("an opening ended before the load: times %+v, want no build beside it", times)
	}
}
