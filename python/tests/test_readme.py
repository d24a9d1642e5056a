"""The README's Python examples run as written (the Spark one, which needs a
cluster with GPUs and object storage, is compiled only)."""

from __future__ import annotations

import re
from pathlib import Path

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
    assert (namespace["same"] == namespace["dist"]).all()
