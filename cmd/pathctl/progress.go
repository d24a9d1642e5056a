package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
)

// progressEvery is the least time between two progress lines on a
// stderr that is no terminal (a log file, Airflow, cron, CI): often
// enough to show that a long run is alive, rarely enough to keep a log
// short.
const progressEvery = 5 * time.Second

// progressEveryFlag is --progress-every, hidden: the least time between
// two progress lines, progressEvery by default. The Python package's
// progress bar asks for lines more often than a log wants them.
func progressEveryFlag() cli.Flag {
	return &cli.DurationFlag{Name: "progress-every", Value: progressEvery, Hidden: true,
		Usage: "the least time between two progress lines of --progress"}
}

// durationReader is the part of *cli.Context that reads --progress-every.
type durationReader interface {
	Duration(name string) time.Duration
}

// progress draws a bar of sources done, pairs per second and the time left
// on stderr when stderr is a terminal and --quiet is off; on a stderr that
// is no terminal, with --progress or --verbose, it prints a line at most
// every progressEvery instead (progressLines).
type progress struct {
	bar      *progressbar.ProgressBar
	lines    *progressLines
	vertices int64
	start    time.Time
}

// flagReader is what newProgressOf reads of a command's flags.
type flagReader interface {
	Bool(name string) bool
}

// newProgressOf is newProgress as the flags of c ask: --quiet draws
// nothing, --progress or --verbose print lines where stderr is no
// terminal.
func newProgressOf(e *env, c flagReader, vertices int) *progress {
	p := newProgress(e, c.Bool("quiet"), vertices)
	if p.bar == nil && !c.Bool("quiet") && (c.Bool("progress") || c.Bool("verbose")) {
		every := progressEvery
		if d, ok := c.(durationReader); ok && d.Duration("progress-every") > 0 {
			every = d.Duration("progress-every")
		}
		p.lines = newProgressLines(e.stderr, every, time.Now)
	}
	return p
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
	if p.lines != nil {
		p.lines.update(done, total)
	}
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

// progressLines prints the progress of a run as lines, at most one every
// interval (the first an interval after the start):
//
//	pathctl: progress  42.0%: 4200 of 10000 sources, 5s elapsed, about 7s left
//
// The time left assumes the sources to come take as long as those done.
type progressLines struct {
	w           io.Writer
	interval    time.Duration
	now         func() time.Time
	start, last time.Time
}

func newProgressLines(w io.Writer, interval time.Duration, now func() time.Time) *progressLines {
	t := now()
	return &progressLines{w: w, interval: interval, now: now, start: t, last: t}
}

// update is called after every block with the sources done of total.
func (p *progressLines) update(done, total int64) {
	t := p.now()
	if t.Sub(p.last) < p.interval || total <= 0 {
		return
	}
	p.last = t
	elapsed := t.Sub(p.start)
	left := "unknown"
	if done > 0 {
		left = "about " + roundDuration(time.Duration(float64(elapsed)*float64(total-done)/float64(done))).String()
	}
	fmt.Fprintf(p.w, "pathctl: progress %5.1f%%: %d of %d sources, %s elapsed, %s left\n",
		100*float64(done)/float64(total), done, total, roundDuration(elapsed), left)
}

// roundDuration is d to the second, or to the millisecond below a second.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
