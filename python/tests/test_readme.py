"""The README's Python examples run as written (the Spark one, which needs a
cluster with GPUs and object storage, is compiled only)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from test_flight import Server

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def blocks():
    return BLOCK.findall(README.read_text())


def test_readme_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "token.txt").write_text("readme-token\n")
    server = Server(tmp_path / "graphs", "--auth-token-file", str(tmp_path / "token.txt"))
    namespace: dict = {"__name__": "readme"}
    ran = 0
    try:
        for code in blocks():
            compiled = compile(code.replace("grpc://127.0.0.1:8815", server.uri), str(README), "exec")
            if "SparkSession" in code:
                continue  # compiled above; running it needs a GPU cluster
            exec(compiled, namespace)
            ran += 1
    finally:
        server.stop()
    assert ran >= 6
    out = capsys.readouterr().out
    assert "bellman-ford" in out  # the negative-weight example printed the engine's advice
    assert (tmp_path / "distances.parquet").exists()
    shown = shown_outputs()
    assert len(shown) >= 2
    for text in shown:  # what the README shows a print() writing, it writes
        assert text in out, f"the README shows\n{text}\nbut the example printed\n{out}"
    assert namespace["routes"].column("path").to_pylist() == [[1, 3, 4], [1, 3]]
    # The dataset of out="pairs/" is the one-file table, rows and order.
    assert namespace["parts"].to_table().to_pylist() == namespace["pairs"].to_pylist()
    to_4 = namespace["to_4"]
    assert list(zip(*(to_4.column(c).to_pylist() for c in ("source", "target", "distance")))) == \
        [(4, 1, 6), (4, 2, 7), (4, 3, 5), (4, 4, 0)]  # d(v -> 4), the graph's arcs walked backwards


def shown_outputs():
    """The output the README shows under a print() call, as the comment
    lines right after it ("#    source  target ..."), without the "# "."""
    shown = []
    for code in blocks():
        if "SparkSession" in code:
            continue  # not run here; test_spark_local compares the local one's
        lines = code.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("#") and i > 0 and "print(" in lines[i - 1]:
                end = i
                while end < len(lines) and lines[end].startswith("#"):
                    end += 1
                shown.append("\n".join(ln[2:] for ln in lines[i:end]))
    return shown


MAIN_README = Path(__file__).resolve().parents[2] / "README.md"


def main_readme_block(heading: str) -> str:
    text = MAIN_README.read_text()
    start = text.index(heading)
    end = text.find("\n### ", start + len(heading))
    found = BLOCK.findall(text[start:end if end >= 0 else None])
    assert found, f"no python block under {heading!r}"
    return found[0]


def test_main_readme_reads_the_matrix_without_a_copy(tmp_path, monkeypatch):
    """The main README's "Reading results from Python": the matrix arrives
    as a view of the mapped file, integer distances with unreachable pairs
    at the type's maximum, not a float64 copy with NaN."""
    import numpy as np

    from conftest import REPO, cli

    monkeypatch.chdir(tmp_path)
    tiny = REPO / "testdata" / "tiny.csv"
    cli(["run", "-o", "dist.arrow", tiny])
    cli(["run", "--layout", "matrix", "-o", "matrix.arrow", tiny])
    namespace: dict = {"__name__": "readme"}
    exec(compile(main_readme_block("### Reading results from Python"), str(MAIN_README), "exec"), namespace)
    dist = namespace["dist"]
    assert isinstance(dist, np.ndarray) and dist.dtype == np.int32
    assert dist.shape == (8, 8)
    assert not dist.flags.owndata and not dist.flags.writeable  # a view of the mapped file
    assert (dist == np.iinfo(np.int32).max).any()  # rome reaches nobody
    assert namespace["df"].shape[1] == 3


def test_main_readme_python_example(tmp_path, monkeypatch):
    """The main README's package example (make test-wheel runs it again
    with the wheel's own binary)."""
    monkeypatch.chdir(tmp_path)
    server = Server(tmp_path / "graphs")
    try:
        code = main_readme_block("### From Python: the `pathctl` package")
        namespace: dict = {"__name__": "readme"}
        exec(compile(code.replace("grpc://127.0.0.1:8815", server.uri), str(MAIN_README), "exec"), namespace)
    finally:
        server.stop()
    assert namespace["pairs"].num_rows == 10
    assert namespace["parts"].to_table().to_pylist() == namespace["pairs"].to_pylist()  # out="pairs-ds/"
    dist, same = namespace["dist"], namespace["same"]
    assert dist.dtype == "float32" and same.dtype == "int32"
    assert (np.where(same == np.iinfo(np.int32).max, np.inf, same) == dist).all()


SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)


def main_readme_sessions():
    """The main README's sh blocks written as a terminal session: each
    "$ command" line followed by what it prints."""
    sessions = []
    for code in SH_BLOCK.findall(MAIN_README.read_text()):
        if not code.startswith("$ "):
            continue
        steps = []
        for line in code.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
        sessions.append(steps)
    return sessions


def test_main_readme_sessions(tmp_path):
    """The main README's terminal sessions (--reverse, --with-paths,
    pathctl path on testdata/tiny.csv) print what they show, and nothing on
    stderr, run in a copy of the repository root's layout."""
    from conftest import REPO

    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "pathctl").symlink_to(os.environ["PATHCTL_BIN"])
    (shims / "python").write_text(f"#!/bin/sh\nexec '{sys.executable}' \"$@\"\n")
    (shims / "python").chmod(0o755)
    root = tmp_path / "root"
    root.mkdir()
    (root / "testdata").symlink_to(REPO / "testdata")
    env = dict(os.environ, PATH=os.pathsep.join([str(shims), os.environ.get("PATH", "")]))
    sessions = main_readme_sessions()
    commands = [command for steps in sessions for command, _ in steps]
    for shown in ("--reverse", "--with-paths", "pathctl path ", "-o tiny-ds/"):
        assert any(shown in c for c in commands), f"no session shows {shown}"
    for steps in sessions:
        for command, want in steps:
            proc = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True,
                                  timeout=120)
            assert proc.returncode == 0, f"{command}: exit {proc.returncode}: {proc.stderr}"
            assert proc.stdout.splitlines() == want, f"{command} printed\n{proc.stdout}"
            assert proc.stderr == "", f"{command}: {proc.stderr}"


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def readme_shell(root, tmp_path):
    """A root laid out as a fresh clone after `make build`: testdata/ and
    bin/pathctl, and the environment of a user's shell there, with a
    `python` that has pyarrow."""
    from conftest import REPO

    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python").write_text(f"#!/bin/sh\nexec '{sys.executable}' \"$@\"\n")
    (shims / "python").chmod(0o755)
    root.mkdir()
    (root / "testdata").symlink_to(REPO / "testdata")
    (root / "bin").mkdir()
    (root / "bin" / "pathctl").symlink_to(os.environ["PATHCTL_BIN"])
    # PATH as the README's first block leaves it (export PATH="$PWD/bin:$PATH").
    return dict(os.environ, PATH=os.pathsep.join([str(root / "bin"), str(shims), os.environ.get("PATH", "")]))


def test_main_readme_every_command_runs(tmp_path):
    """Every shell block of the main README runs as pasted, in the order
    they come, from a clone's root after `make build` (terminal sessions,
    "$ command" and its output, are test_main_readme_sessions'): each
    block as one bash script that stops at the first failing command. A
    `pathctl serve` line must start serving (it is stopped with SIGTERM
    once it listens). Every fenced block is sh or python, so that no
    command escapes this test."""
    root = tmp_path / "root"
    env = readme_shell(root, tmp_path)
    fences = FENCE.findall(MAIN_README.read_text())
    assert len(fences) >= 6
    for lang, code in fences:
        assert lang in ("sh", "python"), f"a ```{lang} block in README.md, which no test runs:\n{code}"
    ran = served = 0
    for lang, code in fences:
        if lang != "sh" or code.startswith("$ "):
            continue
        if "pathctl serve" in code:
            served += serve_line(code, root, env)
            continue
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=root, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"README.md's block\n{code}\nexit {proc.returncode}: {proc.stderr[-3000:]}"
        ran += code.count("pathctl ")
    assert ran >= 20 and served == 1
    for made in ("dist.arrow", "matrix.vertices.arrow", "rmat10.parquet", "bench.md", "od.arrow", "nearest.csv"):
        assert (root / made).stat().st_size > 0, f"the README's commands wrote no {made}"


def serve_line(code, root, env):
    """Runs a README block that is one `pathctl serve` line, on a free port
    instead of its own, until it says it listens; then stops it."""
    lines = [ln for ln in code.splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(lines) == 1, f"a serve block holds one command:\n{code}"
    command = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:0", lines[0])
    proc = subprocess.Popen(["bash", "-c", "exec " + command], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "listening on" in line:
                break
        assert any("listening on" in ln for ln in seen), f"{command}: {''.join(seen)}"
        proc.terminate()
        assert proc.wait(timeout=30) == 0, f"{command} did not stop cleanly: {''.join(seen)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return 1
