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
