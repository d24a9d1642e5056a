package main

import (
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress draws a bar of sources done, pairs per second and the time left
// on stderr, only when stderr is a terminal and --quiet is off.
type progress struct {
	bar      *progressbar.ProgressBar
	vertices int64
	start    time.Time
}

func newProgress(e *env, quiet bool, vertices int) *progress {
	p := &progress{vertices: int64(vertices), start: time.Now()}
	if quiet || !e.stderrIsTTY {
		return p
	}
	p.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("sources"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)
	return p
}

func (p *progress) update(done, total int64) {
	if p.bar == nil {
		return
	}
	secs := time.Since(p.start).Seconds()
	p.bar.Describe(fmt.Sprintf("%s pairs/s", humanCount(float64(done*p.vertices)/max(secs, 1e-9))))
	p.bar.ChangeMax64(total)
	_ = p.bar.Set64(done)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
