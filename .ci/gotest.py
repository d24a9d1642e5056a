#!/usr/bin/env python3
"""Runs `go test` with -json added and prints what plain `go test` prints (a
line per package as it finishes; the output of failing tests in full),
then one line counting the tests that passed, failed and skipped, with the
GPU tests skipped for want of a GPU named apart.

A GPU test skips for want of a GPU with a message starting "no GPU",
"no usable GPU", "no CUDA device" or "no second CUDA device" (GPU_SKIP
below); test_make.py checks that every Go test's skip message that speaks
of a GPU follows that rule.

    .ci/gotest.py [--skips FILE] [--label NAME] -- go test ARGS...

--skips FILE appends one line per skipped test, "package<TAB>test<TAB>gpu or
other<TAB>reason", for the summary of `make test` (.ci/steps.py). The exit
status is go test's, and 1 where go test exited 0 but a test failed or no
test event came at all. With no command it reads `go test -json` on stdin.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from typing import Dict, List, TextIO

# The skip messages of GPU tests that found no GPU (see the docstring).
GPU_SKIP = re.compile(r"^no (usable |second )?(GPU|CUDA device)\b")
# Where go test prints a skip's message: "    file_test.go:12: message".
MESSAGE = re.compile(r"^\s+\S+\.go:\d+: (.*)$")
# test2json's framing lines, left out of a failing test's output.
FRAMING = re.compile(r"^(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP))")


def skip_reason(lines: List[str]) -> str:
    """The message a skipped test gave: the last "file.go:N: text" line
    before its "--- SKIP" line (t.Skip logs its message, then skips)."""
    reason = ""
    for line in lines:
        if line.lstrip().startswith("--- SKIP"):
            break
        m = MESSAGE.match(line.rstrip("\n"))
        if m:
            reason = m.group(1)
    return reason


class Summary:
    def __init__(self, out: TextIO, skips: TextIO | None) -> None:
        self.out = out
        self.skips = skips
        self.passed = self.failed = 0
        self.gpu_skipped: List[str] = []
        self.other_skipped = 0
        self.failed_packages: List[str] = []
        self.events = 0
        # Output lines per package and per test, until the package ends.
        self.output: Dict[str, Dict[str, List[str]]] = {}
        self.result: Dict[str, Dict[str, str]] = {}

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def event(self, ev: dict) -> None:
        action = ev.get("Action", "")
        if action in ("build-output", "build-fail"):
            # A package that does not compile: go test prints the compiler's lines.
            if action == "build-output":
                self.write(ev.get("Output", ""))
            return
        pkg = ev.get("Package", "")
        test = ev.get("Test", "")
        self.events += 1
        if action == "output":
            self.output.setdefault(pkg, {}).setdefault(test, []).append(ev.get("Output", ""))
            return
        if test:
            if action in ("pass", "fail", "skip"):
                self.result.setdefault(pkg, {})[test] = action
                self.count_test(pkg, test, action)
            return
        if action in ("pass", "fail", "skip"):
            self.end_package(pkg, action)

    def count_test(self, pkg: str, test: str, action: str) -> None:
        if action == "pass":
            self.passed += 1
        elif action == "fail":
            self.failed += 1
        else:
            reason = skip_reason(self.output.get(pkg, {}).get(test, []))
            gpu = bool(GPU_SKIP.match(reason))
            if gpu:
                self.gpu_skipped.append(f"{pkg}.{test}")
            else:
                self.other_skipped += 1
            if self.skips:
                kind = "gpu" if gpu else "other"
                self.skips.write(f"{pkg}\t{test}\t{kind}\t{reason}\n")
                self.skips.flush()

    def end_package(self, pkg: str, action: str) -> None:
        output = self.output.pop(pkg, {})
        results = self.result.pop(pkg, {})
        if action == "fail":
            self.failed_packages.append(pkg)
            # The output of every test that did not pass or skip (a test still
            # running when the binary died has no result), then the package's own.
            for test, lines in output.items():
                if test and results.get(test) not in ("pass", "skip"):
                    self.write("".join(l for l in lines if not FRAMING.match(l.lstrip())))
            for line in output.get("", []):
                if not FRAMING.match(line) and line not in ("PASS\n", "testing: warning: no tests to run\n"):
                    self.write(line)
            return
        # A passing or test-less package: its one "ok" or "?" line, as go test prints it.
        for line in output.get("", []):
            if line.startswith(("ok ", "?   ", "FAIL")):
                self.write(line)

    def line(self, label: str) -> str:
        gpu = len(self.gpu_skipped)
        text = (f"{label}: {self.passed} tests passed, {self.failed} failed, "
                f"{gpu + self.other_skipped} skipped ({gpu} GPU tests for want of a GPU)")
        if self.failed_packages:
            text += "; FAIL " + " ".join(self.failed_packages)
        return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default="go test", help="how the summary line starts")
    ap.add_argument("--skips", help="append the skipped tests to this file")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- go test ARGS...")
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    proc = None
    if command:
        if "test" not in command:
            ap.error("the command is not a go test")
        at = command.index("test") + 1
        command = command[:at] + ["-json"] + command[at:]
        # go's own lines (vet, the build) on stderr pass through as they are.
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                text=True, errors="replace")
        lines = proc.stdout
    else:
        lines = sys.stdin
    skips = open(args.skips, "a", encoding="utf-8") if args.skips else None
    summary = Summary(sys.stdout, skips)
    for raw in lines:
        try:
            ev = json.loads(raw)
        except ValueError:
            ev = None
        if not isinstance(ev, dict):
            summary.write(raw)  # not test2json's: pass it on as it came
            continue
        summary.event(ev)
    rc = proc.wait() if proc else 0
    if skips:
        skips.close()
    summary.write(summary.line(args.label) + "\n")
    if summary.events == 0:
        summary.write(f"{args.label}: no test ran\n")
        return rc or 1
    return rc or (1 if summary.failed or summary.failed_packages else 0)


if __name__ == "__main__":
    sys.exit(main())
