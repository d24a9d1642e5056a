"""The Flight client against a real `pathctl serve` on a loopback port."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections import deque

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pathctl
from conftest import assert_tables_equal, cli_result, random_edges, write_arrow

LISTENING = re.compile(r"listening on (\S+:\d+)")


class Server:
    """`pathctl serve` in a subprocess; its stderr is drained in a thread."""

    def __init__(self, data_dir, *extra: str):
        self.proc = subprocess.Popen(
            [os.environ["PATHCTL_BIN"], "serve", "--addr", "127.0.0.1:0", "--data-dir", str(data_dir), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines = deque(maxlen=500)
        self.addr = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.lines.append(line)
            m = LISTENING.search(line)
            if m:
                self.addr = m.group(1)
                break
        if self.addr is None:
            self.stop()
            raise RuntimeError("pathctl serve did not start: " + "".join(self.lines))
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()
        self.uri = f"grpc://{self.addr}"

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("flight-data"))
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    with pathctl.connect(server.uri) as c:
        yield c


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("flight-edges")
    edges = random_edges(61, 45, 140)
    return edges, write_arrow(edges, d / "edges.arrow"), d


@pytest.mark.parametrize("layout", ["pairs", "matrix", "stats"])
def test_upload_and_query_equal_cli(client, graph_file, layout):
    edges, path, d = graph_file
    client.upload("g1", edges)
    want = cli_result(path, d, "--layout", layout)
    got = client.apsp("g1", layout=layout)
    if layout == "matrix":  # the server has no vertices file to name
        got = got.replace_schema_metadata(None)
        want = want.replace_schema_metadata(None)
    assert_tables_equal(got, want, pairs=layout == "pairs")


def test_sources_predecessors_and_stream(client, graph_file):
    edges, path, d = graph_file
    client.upload("g2", edges)
    sources = sorted(set(edges.column("src").to_pylist()))[:5]
    want = cli_result(path, d, "--sources", ",".join(map(str, sources)), "--with-predecessors")
    assert_tables_equal(client.apsp("g2", sources=sources, with_predecessors=True), want)
    reader = client.stream("g2", sources=sources, with_predecessors=True)
    assert isinstance(reader, pa.RecordBatchReader)
    assert_tables_equal(reader.read_all(), want)
    assert_tables_equal(client.sssp("g2", sources[0]), cli_result(path, d, "--source", str(sources[0]), command="sssp"))
    assert_tables_equal(client.bfs("g2", sources[0]), cli_result(path, d, "--source", str(sources[0]), command="bfs"))
    assert client.schema("g2", with_predecessors=True).names == ["source", "target", "distance", "predecessor"]


def test_upload_kinds_and_options(client, graph_file, tmp_path):
    edges, path, d = graph_file
    renamed = edges.rename_columns(["a", "b", "w"])
    pq.write_table(renamed, tmp_path / "e.parquet")
    client.upload("from-parquet", str(tmp_path / "e.parquet"), src_col="a", dst_col="b",
                  weight_col="w", directed=False)
    stored = client.upload("from-pandas", renamed.to_pandas(), src_col="a", dst_col="b", weight_col="w",
                           directed=False)
    n = len(set(edges.column("src").to_pylist()) | set(edges.column("dst").to_pylist()))
    assert stored["vertices"] == n and stored["edges"] == edges.num_rows
    assert stored["directed"] is False
    want = cli_result(path, d, "--undirected")
    assert_tables_equal(client.apsp("from-parquet"), want)
    assert_tables_equal(client.apsp("from-pandas"), want)


def test_graphs_info_and_drop(client, graph_file):
    edges, _, _ = graph_file
    client.upload("listed", edges)
    listed = {g["name"]: g for g in client.graphs()}
    assert "listed" in listed
    assert listed["listed"]["edges"] == edges.num_rows
    report = client.info()
    assert "version" in report and report["engines"]
    client.drop("listed")
    assert "listed" not in {g["name"] for g in client.graphs()}
    with pytest.raises(pathctl.NotFoundError):
        client.apsp("listed")
    with pytest.raises(pathctl.NotFoundError):
        client.drop("listed")


def test_errors_over_flight(client, graph_file):
    edges, _, _ = graph_file
    with pytest.raises(pathctl.InvalidInputError):
        client.upload("../escape", edges)
    with pytest.raises(pathctl.InvalidInputError):
        client.upload("nodst", edges.drop_columns(["dst"]))
    client.upload("g3", edges)
    with pytest.raises(pathctl.InvalidInputError, match="quantum"):
        client.apsp("g3", algorithm="quantum")
    with pytest.raises(pathctl.InvalidInputError):
        client.apsp("g3", sources=[999999])
    neg = pa.table({"src": pa.array([1, 2], pa.int64()), "dst": pa.array([2, 3], pa.int64()),
                    "weight": pa.array([1, -1], pa.int32())})
    client.upload("neg", neg)
    with pytest.raises(pathctl.NegativeWeightError, match="bellman-ford"):
        client.apsp("neg", algorithm="dijkstra")
    got = client.apsp("neg", algorithm="bellman-ford", sources=[1])
    assert dict(zip(got.column("target").to_pylist(), got.column("distance").to_pylist())) == {1: 0, 2: 1, 3: 0}
    if not pathctl.gpu_available():
        with pytest.raises(pathctl.EngineUnavailableError):
            client.apsp("g3", engine="gpu")


def test_flight_messages_are_one_clean_sentence(client, graph_file):
    from test_errors import assert_one_clean_sentence

    edges, _, _ = graph_file
    client.upload("g4", edges)
    with pytest.raises(pathctl.InvalidInputError) as info:
        client.apsp("g4", sources=[999999])
    assert type(info.value) is pathctl.InvalidInputError
    assert info.value.message == 'graph "g4": source "999999" is not a vertex of the graph'
    with pytest.raises(pathctl.InvalidInputError) as info:
        client.apsp("g4", algorithm="quantum")
    assert_one_clean_sentence(info.value.message)
    assert str(info.value) == info.value.message
    neg = pa.table({"src": pa.array([1, 2], pa.int64()), "dst": pa.array([2, 3], pa.int64()),
                    "weight": pa.array([1, -1], pa.int32())})
    client.upload("neg4", neg)
    with pytest.raises(pathctl.NegativeWeightError) as info:
        client.apsp("neg4", algorithm="dijkstra")
    assert_one_clean_sentence(info.value.message)
    assert "bellman-ford" in info.value.message
    with pytest.raises(pathctl.NotFoundError) as info:
        client.apsp("no-such-graph")
    assert "no-such-graph" in info.value.message
    assert_one_clean_sentence(info.value.message)


def test_auth_token(tmp_path, graph_file):
    edges, _, _ = graph_file
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    srv = Server(tmp_path / "data", "--auth-token-file", str(token_file))
    try:
        with pathctl.connect(srv.uri, token="s3cret-token") as c:
            c.upload("secured", edges)
            assert c.apsp("secured", sources=[edges.column("src")[0].as_py()]).num_rows > 0
        with pytest.raises(pathctl.AuthenticationError):
            pathctl.connect(srv.uri, token="wrong")
        with pathctl.connect(srv.uri) as anonymous:
            with pytest.raises(pathctl.AuthenticationError):
                anonymous.graphs()
    finally:
        srv.stop()


def test_unreachable_server():
    with pathctl.connect("grpc://127.0.0.1:1") as c:
        with pytest.raises(pathctl.ServiceUnavailableError):
            c.graphs()


def test_tls(tmp_path, graph_file):
    edges, path, d = graph_file
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    srv = Server(tmp_path / "data", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        uri = srv.uri.replace("grpc://", "grpc+tls://")
        with pathctl.connect(uri, tls_root_certs=str(cert)) as c:  # a PEM file path
            c.upload("over-tls", edges)
            assert_tables_equal(c.apsp("over-tls"), cli_result(path, d))
        with pathctl.connect(uri, tls_root_certs=cert.read_bytes()) as c:  # PEM bytes
            assert [g["name"] for g in c.graphs()] == ["over-tls"]
        with pathctl.connect(srv.uri) as plain:  # no TLS against a TLS server
            with pytest.raises(pathctl.PathctlError):
                plain.graphs()
    finally:
        srv.stop()


def test_uploads_that_do_not_fit_together_take_turns(tmp_path):
    """A Table's upload says its size, so the server reserves its memory
    ahead and uploads that do not fit side by side in --max-memory wait
    their turn: all of them are stored. (Growing side by side, the
    youngest was refused once the budget was full.)"""
    n = 6000
    whole = pa.table({"src": pa.array(range(n), pa.int64()), "dst": pa.array(range(1, n + 1), pa.int64()),
                      "weight": pa.array([1 + i % 7 for i in range(n)], pa.int64())})
    edges = pa.Table.from_batches(whole.to_batches(max_chunksize=250))  # 24 batches, each reserved as it comes
    srv = Server(tmp_path / "data", "--max-memory", "1MiB")
    try:
        errors = []

        def put(i):
            try:
                with pathctl.connect(srv.uri) as c:
                    c.upload(f"g{i}", edges)
            except Exception as exc:  # noqa: BLE001 (the test reports every failure)
                errors.append(f"g{i}: {exc}")

        threads = [threading.Thread(target=put, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        with pathctl.connect(srv.uri) as c:
            assert sorted(g["name"] for g in c.graphs()) == ["g0", "g1", "g2", "g3"]
    finally:
        srv.stop()
