"""Tests of the Makefile's quick start and of make test's own tools:
.ci/gotest.py (go test's lines and the count of GPU tests skipped for want
of a GPU) and .ci/steps.py (the steps side by side, their times). make
test-python runs them (after make build: make run uses bin/pathctl)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

CI = Path(__file__).resolve().parent
REPO = CI.parent


def load(name):
    spec = importlib.util.spec_from_file_location(name, CI / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gotest = load("gotest")
steps = load("steps")


def events_of(pkg, name, result, *logs):
    """The -json events of one test that logs `logs` and ends in `result`."""
    word = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[result]
    out = [f"=== RUN   {name}\n"] + [f"    x_test.go:{i + 7}: {m}\n" for i, m in enumerate(logs)]
    out.append(f"--- {word}: {name} (0.00s)\n")
    evs = [{"Action": "run", "Package": pkg, "Test": name}]
    evs += [{"Action": "output", "Package": pkg, "Test": name, "Output": o} for o in out]
    evs.append({"Action": result, "Package": pkg, "Test": name})
    return evs


def package_end(pkg, result):
    line = f"ok  \t{pkg}\t0.01s\n" if result == "pass" else f"FAIL\t{pkg}\t0.01s\n"
    return [{"Action": "output", "Package": pkg, "Output": ("PASS\n" if result == "pass" else "FAIL\n")},
            {"Action": "output", "Package": pkg, "Output": line},
            {"Action": result, "Package": pkg}]


def run_filter(events, tmp_path, *extra):
    skips = tmp_path / "skips.tsv"
    stdin = "".join(json.dumps(e) + "\n" for e in events)
    proc = subprocess.run([sys.executable, str(CI / "gotest.py"), "--skips", str(skips), "--label", "go test", *extra],
                          input=stdin, capture_output=True, text=True)
    rows = [l.split("\t") for l in skips.read_text().splitlines()] if skips.exists() else []
    return proc, rows


def test_gpu_skips_are_counted_apart(tmp_path):
    events = [{"Action": "start", "Package": "m/gpu"}]
    events += events_of("m/gpu", "TestKernel", "skip", "no CUDA device: gpu: CUDA driver library not found")
    events += events_of("m/gpu", "TestFake", "pass")
    events += events_of("m/gpu", "TestMemfd", "skip", "no memfd here: ENOSYS")
    events += package_end("m/gpu", "pass")
    events += events_of("m/pipeline", "TestRows/gpu", "skip", "planning", "no usable GPU: no driver")
    events += events_of("m/pipeline", "TestAuto", "skip", "a GPU is usable here: auto takes it")
    events += events_of("m/pipeline", "TestStats", "skip", "no GPU: no driver")
    events += package_end("m/pipeline", "pass")
    proc, rows = run_filter(events, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    # What plain go test prints for passing packages, then the count.
    assert lines[:2] == ["ok  \tm/gpu\t0.01s", "ok  \tm/pipeline\t0.01s"], lines
    assert lines[-1] == "go test: 1 tests passed, 0 failed, 5 skipped (3 GPU tests for want of a GPU)"
    assert sorted((r[0], r[1], r[2]) for r in rows) == [
        ("m/gpu", "TestKernel", "gpu"), ("m/gpu", "TestMemfd", "other"),
        ("m/pipeline", "TestAuto", "other"), ("m/pipeline", "TestRows/gpu", "gpu"),
        ("m/pipeline", "TestStats", "gpu")]


def test_a_failing_test_prints_its_output_and_fails(tmp_path):
    events = events_of("m/arrowio", "TestRead", "fail", "reading x.csv", "want 3 rows, got 2")
    events += events_of("m/arrowio", "TestOk", "pass")
    events += package_end("m/arrowio", "fail")
    proc, _ = run_filter(events, tmp_path)
    assert proc.returncode == 1
    out = proc.stdout
    assert "want 3 rows, got 2" in out and "--- FAIL: TestRead" in out and "FAIL\tm/arrowio" in out
    assert "TestOk" not in out  # a passing test's lines stay out, as in plain go test
    assert out.splitlines()[-1].endswith("1 failed, 0 skipped (0 GPU tests for want of a GPU); FAIL m/arrowio")


def test_a_package_that_does_not_build_fails(tmp_path):
    events = [{"Action": "build-output", "ImportPath": "m/c [m/c.test]", "Output": "c_test.go:3:33: undefined: f\n"},
              {"Action": "build-fail", "ImportPath": "m/c [m/c.test]"},
              {"Action": "start", "Package": "m/c"},
              {"Action": "output", "Package": "m/c", "Output": "FAIL\tm/c [build failed]\n"},
              {"Action": "fail", "Package": "m/c"}]
    proc, _ = run_filter(events, tmp_path)
    assert proc.returncode == 1
    assert "undefined: f" in proc.stdout and "FAIL\tm/c [build failed]" in proc.stdout


def test_no_events_is_a_failure(tmp_path):
    proc, _ = run_filter([], tmp_path)
    assert proc.returncode == 1 and "no test ran" in proc.stdout


def test_go_test_status_counts(tmp_path):
    # The command's own status wins where it is not 0 (go test could not start).
    proc = subprocess.run([sys.executable, str(CI / "gotest.py"), "--", "go", "test", "./no-such-package-here"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode != 0


def test_steps_summary_counts_each_gpu_test_once(tmp_path):
    skips = tmp_path / "skips.tsv"
    # The gpu package's test skipped twice (go test ./... and the
    # pathctl_debug run) is one GPU test; "other" skips are not counted.
    skips.write_text("m/gpu\tTestKernel\tgpu\tno CUDA device: x\n"
                     "m/gpu\tTestKernel\tgpu\tno CUDA device: x\n"
                     "m/flight\tTestResident\tgpu\tno usable GPU: x\n"
                     "m/arrowio\tTestMemfd\tother\tno memfd here\n")
    line = steps.gpu_skip_line(str(skips))
    assert line.startswith("GPU tests skipped for want of a GPU: 2 (flight 1, gpu 1)"), line
    assert steps.gpu_skip_line(str(tmp_path / "none.tsv")) == "GPU tests skipped for want of a GPU: 0"


# A skip call's message, where the first argument starts with a string literal.
SKIP_CALL = re.compile(r'\.Skipf?\(\s*"((?:[^"\\]|\\.)*)"')
# Skips that speak of a GPU without being for want of one.
NOT_FOR_WANT = re.compile(r"^a GPU is usable here")


def test_every_gpu_skip_message_is_counted():
    """Every Go test that skips with a message naming a GPU or CUDA starts
    it as gotest.GPU_SKIP expects, so make test's count misses none."""
    seen, wrong = 0, []
    for path in sorted(REPO.rglob("*_test.go")):
        if any(part.startswith(".") for part in path.relative_to(REPO).parts):
            continue
        for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for message in SKIP_CALL.findall(text):
                if not re.search(r"GPU|CUDA", message) or NOT_FOR_WANT.match(message):
                    continue
                seen += 1
                if not gotest.GPU_SKIP.match(message):
                    wrong.append(f"{path.relative_to(REPO)}:{number}: {message!r}")
    assert seen > 0, "no Go test skips for want of a GPU: is the pattern stale?"
    assert not wrong, ("a GPU test that finds no GPU must skip with a message that "
                       f"{gotest.GPU_SKIP.pattern} matches (.ci/gotest.py counts them):\n" + "\n".join(wrong))


FAKE_MAKEFILE = """\
setup:
\t@echo set up
slow:
\t@sleep 1.5; echo slow done
broken:
\t@echo about to fail; echo '    x_test.go:3: want 1, got 2'; echo 'more output'; exit 3
quick:
\t@echo "GO_SKIPS=$(GO_SKIPS)"; printf 'm/gpu\\tTestK\\tgpu\\tno GPU: x\\n' >> $(GO_SKIPS)
"""


def run_steps(tmp_path, *args):
    (tmp_path / "Makefile").write_text(FAKE_MAKEFILE)
    env = dict(os.environ, MAKE=f"make -f {tmp_path / 'Makefile'}")
    return subprocess.run([sys.executable, str(CI / "steps.py"), "--quiet-after", "0.5",
                           "--logs", str(tmp_path / "logs"), *args],
                          env=env, capture_output=True, text=True, timeout=60)


def test_steps_run_side_by_side_and_say_what_took_how_long(tmp_path):
    proc = run_steps(tmp_path, "--jobs", "2", "--first", "setup", "slow", "broken", "quick")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "[setup] set up" in lines and "[slow] slow done" in lines and "[broken] about to fail" in lines
    assert any(l.startswith("[broken] FAILED (status 2") for l in lines), lines  # make's status for a failed recipe
    assert (tmp_path / "logs" / "broken.log").read_text().startswith("about to fail\n")
    # slow ran beside broken and quick, and was quiet long enough for a heartbeat.
    assert any(l.startswith("[steps] still running: slow") for l in lines), lines
    # The failure's own lines come again at the end, where a cut log keeps them.
    assert "[broken] again:     x_test.go:3: want 1, got 2" in lines[-5:-2], lines
    assert "[broken] again: more output" not in lines, lines
    assert lines[-2] == "GPU tests skipped for want of a GPU: 1 (gpu 1); make gpu-test runs them on a GPU machine"
    last = lines[-1]
    assert re.fullmatch(r"make test: FAILED: broken in 0m0\ds \(CPU 0m\d\ds, 2 steps at a time\): "
                        r"setup 0m0\ds, slow 0m0\ds, broken 0m0\ds FAILED, quick 0m0\ds", last), last


def test_steps_all_passing(tmp_path):
    proc = run_steps(tmp_path, "--jobs", "1", "setup", "quick")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("make test: ok in ")


def make(*args):
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


def test_make_run_prints_a_short_summary():
    # -o build: the binary make test built, not another build.
    proc = make("-o", "build", "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = (proc.stdout + proc.stderr).splitlines()
    assert 1 <= len(lines) <= 5 and all(len(l) <= 120 for l in lines), lines
    assert "libcuda" not in proc.stdout + proc.stderr  # no --verbose search for the driver
    assert lines[-1].startswith("top 5 by harmonic centrality (out/sample-stats.csv): "), lines
    for name in ("sample-apsp.arrow", "sample-stats.csv"):
        assert (REPO / "out" / name).stat().st_size > 0


def test_make_wheel_needs_only_the_wheel_venv():
    proc = make("-n", "-B", "wheel")
    assert proc.returncode == 0, proc.stderr
    assert "python/requirements-wheel.txt" in proc.stdout and "build_wheels.py" in proc.stdout
    assert ".venv/" not in proc.stdout and "requirements-test.txt" not in proc.stdout, proc.stdout
    wanted = [l for l in (REPO / "python" / "requirements-wheel.txt").read_text().splitlines()
              if l and not l.startswith("#")]
    assert [w.split("==")[0] for w in wanted] == ["setuptools"], wanted
