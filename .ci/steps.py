#!/usr/bin/env python3
"""Runs make targets as the steps of `make test`: the --first ones one after
the other, then the rest at most --jobs at a time, in the order given (put
the longest first). Every line a step prints comes out at once, prefixed
with the step's name, and also goes to out/test/STEP.log (--logs); when no step has
printed for 50 s (--quiet-after), a line says which are still running and
for how long.

At the end, one line with the GPU tests skipped for want of a GPU (from the
skip lists .ci/gotest.py writes, passed to make as GO_SKIPS), then one line
with each step's time and status, the total and the CPU time spent. Every
step runs even when one fails (a failed --first step stops it all, as the
others need it); the exit status is 1 when any failed. $MAKE is the make
command.

    .ci/steps.py [--jobs N] [--first TARGET]... TARGET...
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[1]


def clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 60}m{s % 60:02d}s"


class Steps:
    def __init__(self, make: str, skips: str, quiet_s: float, logs: Path) -> None:
        self.logs = logs
        self.make = shlex.split(make)
        self.quiet_s = quiet_s
        self.skips = skips
        self.lock = threading.Lock()
        self.last_line = time.monotonic()
        self.started: Dict[str, float] = {}
        self.elapsed: Dict[str, float] = {}
        self.cpu: Dict[str, float] = {}
        self.status: Dict[str, int] = {}

    def say(self, text: str) -> None:
        with self.lock:
            sys.stdout.write(text)
            sys.stdout.flush()
            self.last_line = time.monotonic()

    def run(self, target: str) -> int:
        """Runs `make TARGET`, streaming its lines with a prefix; returns its status."""
        name = target
        self.logs.mkdir(parents=True, exist_ok=True)
        log = open(self.logs / f"{name}.log", "w", encoding="utf-8", errors="replace")
        self.say(f"[{name}] start\n")
        start = time.monotonic()
        with self.lock:
            self.started[name] = start
        proc = subprocess.Popen(self.make + ["--no-print-directory", target, f"GO_SKIPS={self.skips}"],
                                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace")
            log.write(line)
            log.flush()
            self.say(f"[{name}] {line}" if line.endswith("\n") else f"[{name}] {line}\n")
        # wait4 for the CPU time of the step and everything it waited for.
        _, status, usage = os.wait4(proc.pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        proc.returncode = rc
        log.close()
        took = time.monotonic() - start
        with self.lock:
            del self.started[name]
            self.elapsed[name] = took
            self.cpu[name] = usage.ru_utime + usage.ru_stime
            self.status[name] = rc
        verdict = "ok" if rc == 0 else f"FAILED (status {rc}; log: {os.path.relpath(log.name, REPO)})"
        self.say(f"[{name}] {verdict} in {clock(took)} (CPU {clock(self.cpu[name])})\n")
        return rc

    def heartbeat(self, stop: threading.Event) -> None:
        while not stop.wait(min(5, self.quiet_s / 2)):
            with self.lock:
                quiet = time.monotonic() - self.last_line
                running = [f"{n} {clock(time.monotonic() - t)}" for n, t in self.started.items()]
            if running and quiet >= self.quiet_s:
                self.say(f"[steps] still running: {', '.join(running)}\n")

    def pool(self, targets: List[str], jobs: int) -> None:
        queue = list(targets)
        qlock = threading.Lock()

        def worker() -> None:
            while True:
                with qlock:
                    if not queue:
                        return
                    target = queue.pop(0)
                self.run(target)

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def gpu_skip_line(path: str) -> str:
    """One line: how many distinct GPU tests skipped for want of a GPU, by
    package, from the skip lists of every go test run."""
    tests = set()
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 3 and parts[2] == "gpu":
                    tests.add((parts[0], parts[1]))
    except FileNotFoundError:
        pass
    by_pkg = Counter(pkg.rsplit("/", 1)[-1] for pkg, _ in tests)
    detail = ", ".join(f"{p} {n}" for p, n in sorted(by_pkg.items()))
    text = f"GPU tests skipped for want of a GPU: {len(tests)}"
    if detail:
        text += f" ({detail}); make gpu-test runs them on a GPU machine"
    return text


# The lines of a failed step's log that say what failed: go test's FAIL
# lines and the test messages around them, pytest's, make's and a panic.
FAILURE = re.compile(r"--- FAIL|^FAIL|^panic:|_test\.go:\d+:|^E   |FAILED|Error \d+$|error:")


def failure_lines(log: Path, most: int = 12) -> list:
    """At most `most` lines of a failed step's log that name the failure, the
    last ones where there are more: they are printed again after every step
    ends, so that the end of the output (all a CI log may keep) shows why."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    hits = [l.rstrip() for l in lines if FAILURE.search(l)]
    return (hits or [l.rstrip() for l in lines])[-most:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="steps at a time after the --first ones")
    ap.add_argument("--first", action="append", default=[], help="a target run alone, before the others")
    ap.add_argument("--quiet-after", type=float, default=50, help="seconds without output before a line says what runs")
    ap.add_argument("--logs", type=Path, default=REPO / "out" / "test", help="where STEP.log go")
    ap.add_argument("targets", nargs="+")
    args = ap.parse_args()
    make = os.environ.get("MAKE", "make")
    fd, skips = tempfile.mkstemp(prefix="pathctl-skips-", suffix=".tsv")
    os.close(fd)
    steps = Steps(make, skips, args.quiet_after, args.logs)
    stop = threading.Event()
    beat = threading.Thread(target=steps.heartbeat, args=(stop,), daemon=True)
    beat.start()
    start = time.monotonic()
    try:
        first_ok = all(steps.run(t) == 0 for t in args.first)
        if first_ok:
            steps.pool(args.targets, args.jobs)
    except KeyboardInterrupt:
        # ^C reached the steps too (one process group): say so, not a traceback.
        os.unlink(skips)
        print(f"\nmake test: interrupted after {clock(time.monotonic() - start)}", flush=True)
        return 130
    finally:
        stop.set()
    total = time.monotonic() - start
    failed = [n for n, rc in steps.status.items() if rc != 0]
    names = args.first + args.targets
    parts, cpu = [], 0.0
    for n in names:
        if n in steps.elapsed:
            parts.append(f"{n} {clock(steps.elapsed[n])}{'' if steps.status[n] == 0 else ' FAILED'}")
            cpu += steps.cpu[n]
        else:
            parts.append(f"{n} not run")
    verdict = "FAILED: " + " ".join(failed) if failed or len(steps.elapsed) < len(names) else "ok"
    for n in failed:
        for line in failure_lines(args.logs / f"{n}.log"):
            print(f"[{n}] again: {line}")
    print(gpu_skip_line(skips))
    os.unlink(skips)
    print(f"make test: {verdict} in {clock(total)} (CPU {clock(cpu)}, {args.jobs} steps at a time): " + ", ".join(parts))
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
