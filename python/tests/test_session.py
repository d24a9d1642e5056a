"""The Flight client logs in again when its session expires."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

import pathctl
from conftest import random_edges
from test_flight import Server


def test_session_expiry_logs_in_again(tmp_path):
    edges = random_edges(7, 20, 60)
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    srv = Server(tmp_path / "data", "--auth-token-file", str(token_file), "--session-ttl", "1s")
    try:
        with pathctl.connect(srv.uri, token="s3cret-token") as c:
            c.upload("g", edges)
            source = edges.column("src")[0].as_py()
            first = c.apsp("g", sources=[source])
            # Every kind of call, each after the session has expired.
            for call in (lambda: c.apsp("g", sources=[source]),
                         lambda: c.schema("g", sources=[source]),
                         c.graphs,
                         c.info,
                         lambda: c.upload("h", edges, directed=False),
                         lambda: c.stream("g", sources=[source]).read_all()):
                time.sleep(1.3)
                got = call()
                if isinstance(got, pa.Table):
                    assert got.equals(first)
            assert [g["name"] for g in c.graphs()] == ["g", "h"]
            assert {g["name"]: g["directed"] for g in c.graphs()} == {"g": True, "h": False}
            # A reader is read once: after expiry it is refused, not resent.
            time.sleep(1.3)
            with pytest.raises(pathctl.AuthenticationError):
                c.upload("once", pa.RecordBatchReader.from_batches(edges.schema, edges.to_batches()))
        # Without a token there is nothing to log in with.
        with pathctl.connect(srv.uri) as anonymous:
            with pytest.raises(pathctl.AuthenticationError):
                anonymous.graphs()
    finally:
        srv.stop()
