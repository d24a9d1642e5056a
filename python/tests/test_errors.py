"""Bad input, bad options and a missing binary become pathctl exceptions
with the engine's message."""

from __future__ import annotations

import glob
import signal
import os
import tempfile

import pyarrow as pa
import pytest

import pathctl
from conftest import wait_no_children


@pytest.fixture(autouse=True)
def no_leftovers():
    """No test leaves a process or a temporary directory behind."""
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "pathctl-*")))
    yield
    after = set(glob.glob(os.path.join(tempfile.gettempdir(), "pathctl-*")))
    assert after <= before, f"temporary files left: {sorted(after - before)}"
    wait_no_children()


def edges(**columns):
    base = {"src": pa.array([1, 2, 3], pa.int64()), "dst": pa.array([2, 3, 1], pa.int64()),
            "weight": pa.array([1, 2, 3], pa.int32())}
    base.update(columns)
    return pa.table({k: v for k, v in base.items() if v is not None})


def test_missing_binary_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATHCTL_BIN", str(tmp_path / "no-such-pathctl"))
    with pytest.raises(pathctl.BinaryNotFoundError, match="PATHCTL_BIN") as info:
        pathctl.apsp(edges())
    # The advice resolves: a wheel from `make wheel`, or `make build`; no
    # `go install` of a module path that is not published.
    assert "make wheel" in str(info.value) and "make build" in str(info.value)
    assert "go install" not in str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    monkeypatch.delenv("PATHCTL_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pathctl.BinaryNotFoundError, match="none bundled.*none on PATH"):
        pathctl.sssp(edges(), 1)
    with pytest.raises(pathctl.BinaryNotFoundError):
        pathctl.apsp(edges(), binary=str(tmp_path / "nope"))


def test_missing_column():
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(edges(dst=None))
    assert info.value.exit_code == 3
    assert "dst" in info.value.message
    with pytest.raises(pathctl.InvalidInputError, match="nope"):
        pathctl.apsp(edges(), src_col="nope")


def test_null_id_and_nan_weight():
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(edges(src=pa.array([1, None, 3], pa.int64())))
    assert "src" in info.value.message
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(edges(weight=pa.array([1.0, float("nan"), 2.0])))
    assert "weight" in info.value.message


def test_negative_weight_names_bellman_ford():
    bad = edges(weight=pa.array([1, -2, 3], pa.int32()))
    with pytest.raises(pathctl.NegativeWeightError, match="bellman-ford") as info:
        pathctl.apsp(bad, algorithm="dijkstra")
    assert info.value.exit_code == 5
    assert not isinstance(info.value, pathctl.NegativeCycleError)


def test_negative_cycle():
    # 1 -> 2 -> 3 -> 1 weighs 1 - 5 + 3 = -1.
    bad = edges(weight=pa.array([1, -5, 3], pa.int32()))
    with pytest.raises(pathctl.NegativeCycleError) as info:
        pathctl.apsp(bad, algorithm="bellman-ford")
    assert info.value.exit_code == 5
    assert "cycle" in info.value.message


def test_negative_weights_without_cycle_under_bellman_ford():
    ok = edges(weight=pa.array([1, -2, 3], pa.int32()))
    table = pathctl.sssp(ok, 1, algorithm="bellman-ford")
    got = dict(zip(table.column("target").to_pylist(), table.column("distance").to_pylist()))
    assert got == {1: 0, 2: 1, 3: -1}


def test_usage_errors():
    with pytest.raises(pathctl.UsageError) as info:
        pathctl.apsp(edges(), algorithm="quantum")
    assert info.value.exit_code == 2
    assert "quantum" in info.value.message
    assert isinstance(info.value, pathctl.InvalidInputError)
    with pytest.raises(pathctl.UsageError, match="layout"):
        pathctl.apsp(edges(), layout="cube")
    with pytest.raises(TypeError, match="colour"):
        pathctl.apsp(edges(), colour="red")


def test_empty_sources():
    with pytest.raises(pathctl.UsageError, match="sources=None"):
        pathctl.apsp(edges(), sources=[])


def test_unknown_source():
    # InvalidInputError itself (python/README), not its subclass UsageError.
    with pytest.raises(pathctl.InvalidInputError, match="99") as info:
        pathctl.apsp(edges(), sources=[1, 99])
    assert type(info.value) is pathctl.InvalidInputError
    with pytest.raises(pathctl.InvalidInputError, match="99") as info:
        pathctl.sssp(edges(), 99)
    assert type(info.value) is pathctl.InvalidInputError
    assert info.value.message == 'source "99" is not a vertex of the graph'


def assert_one_clean_sentence(message: str) -> None:
    """A message a Python user reads: one line, no package prefixes of the
    Go code, no CLI flags, no gRPC context."""
    assert "\n" not in message
    for word in ("arrowio:", "graph:", "pipeline:", "flight:", "invalid request", "stdin", " --",
                 "gRPC", "context:", "Flight returned"):
        assert word not in message, (word, message)


def test_messages_speak_python():
    bad = edges(weight=pa.array([1, -2, 3], pa.int32()))
    with pytest.raises(pathctl.NegativeWeightError) as info:
        pathctl.apsp(bad, algorithm="dijkstra")
    assert "bellman-ford" in info.value.message
    assert_one_clean_sentence(info.value.message)
    with pytest.raises(pathctl.UsageError) as info:
        pathctl.apsp(edges(), algorithm="quantum")
    assert info.value.message.startswith('unknown algorithm "quantum"'), info.value.message
    assert_one_clean_sentence(info.value.message)
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(edges(src=pa.array([1, None, 3], pa.int64())))
    assert info.value.message == 'edges: column "src" row 1: null id'
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(edges(), sources=[99])
    assert_one_clean_sentence(info.value.message)
    # The whole stderr stays available as it was.
    assert "pathctl: " in info.value.stderr


def test_missing_file_is_a_public_class(tmp_path):
    with pytest.raises(pathctl.InputNotFoundError) as info:
        pathctl.apsp(str(tmp_path / "missing.parquet"))
    assert isinstance(info.value, pathctl.InvalidInputError) and isinstance(info.value, pathctl.NotFoundError)
    # Tracebacks show the class as it is imported: pathctl.InputNotFoundError.
    assert f"{type(info.value).__module__}.{type(info.value).__qualname__}" == "pathctl.InputNotFoundError"
    assert_one_clean_sentence(info.value.message)


def test_python_message_translates_flags():
    from pathctl._errors import python_message

    # The CLI's note about the weight column, and a conflict it refuses.
    assert python_message('took column "minutes" as the edge weight (no column is named "weight"); '
                          '--weight-col NAME chooses the weight, --unweighted counts edges') == (
        'took column "minutes" as the edge weight (no column is named "weight"); '
        'weight_col=NAME chooses the weight, unweighted=True counts edges')
    assert python_message("needs non-negative weights; use --algo bellman-ford") == \
        'needs non-negative weights; use algorithm="bellman-ford"'
    assert python_message("--weight-col and --unweighted cannot both be given") == \
        "weight_col and unweighted=True cannot both be given"
    assert python_message("--threads -1: want 0 or more") == "threads=-1: want 0 or more"
    assert python_message('--layout "cube": want pairs') == 'layout="cube": want pairs'
    assert python_message("use --undirected, --mem=1024 or --layout stats") == \
        'use directed=False, mem=1024 or layout="stats"'
    assert python_message("--algo: graph: unknown algorithm \"x\"") == 'unknown algorithm "x"'
    assert python_message("--verbose is not for Python") == "--verbose is not for Python"
    # The keywords of queries narrower than all pairs (issue 17).
    assert python_message("--k-nearest 0: K is 1 or more") == "k=0: k is 1 or more"
    assert python_message("--cutoff NaN: the cutoff is a distance of 0 or more") == \
        "cutoff=nan: the cutoff is a distance of 0 or more"
    assert python_message("--cutoff -Inf: no") == "cutoff=-inf: no"
    assert python_message("--with-paths: paths for every pair") == "with_paths=True: paths for every pair"
    assert python_message('--targets-file /dev/fd/7: unknown target "9"',
                          {"--targets-file /dev/fd/7": "--targets", "/dev/fd/7": "targets"}) == \
        'targets: unknown target "9"'
    # An unknown source of the sources' file: the message names it already.
    assert python_message('--sources-file /dev/fd/6: invalid request: source "9": arrowio: vertex "9" is not in the graph',
                          {"--sources-file /dev/fd/6": "--sources", "/dev/fd/6": "sources"}) == \
        'source "9" is not a vertex of the graph'
    # A made-up path is replaced whole: /dev/fd/5 is not the start of /dev/fd/57.
    assert python_message("/dev/fd/57: bad", {"/dev/fd/5": "edges"}) == "/dev/fd/57: bad"


def test_null_ids_in_pandas_are_nulls():
    pd = pytest.importorskip("pandas")
    # pandas keeps a missing value of an int column as NaN in a float64 column.
    df = pd.DataFrame({"from": [1, None, 3], "dst": [2, 3, 1]})
    assert str(df["from"].dtype) == "float64"
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(df, src_col="from")
    assert info.value.message == 'edges: column "from" row 1: null id'
    # Fractional float ids are not ids that lost their nulls: the engine
    # refuses the float column.
    with pytest.raises(pathctl.InvalidInputError, match="float64"):
        pathctl.apsp(pd.DataFrame({"src": [1.5, None], "dst": [2, 3]}))
    # A whole column of NaN-free floats is left alone too.
    with pytest.raises(pathctl.InvalidInputError, match="float64"):
        pathctl.apsp(pd.DataFrame({"src": [1.0, 2.0], "dst": [2, 3]}))


def test_gpu_engine_where_there_is_none():
    if pathctl.gpu_available():
        table = pathctl.apsp(edges(), engine="gpu")
        assert table.num_rows == 9
        return
    with pytest.raises(pathctl.EngineUnavailableError) as info:
        pathctl.apsp(edges(), engine="gpu")
    assert info.value.exit_code == 4
    assert info.value.message


def test_bad_files(tmp_path):
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(str(tmp_path / "missing.parquet"))
    assert "missing.parquet" in info.value.message
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1 this is not parquet at all")
    with pytest.raises(pathctl.InvalidInputError, match="corrupt.parquet"):
        pathctl.apsp(str(corrupt))


def test_failing_reader_is_the_reported_cause():
    schema = edges().schema

    def batches():
        yield edges().to_batches()[0]
        raise RuntimeError("upstream source went away")

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    with pytest.raises(pathctl.InvalidInputError, match="upstream source went away"):
        pathctl.apsp(reader)


def test_error_carries_stderr():
    with pytest.raises(pathctl.PathctlError) as info:
        pathctl.apsp(edges(dst=None))
    assert "pathctl: " in info.value.stderr


# What a Go panic in a goroutine prints (the runtime's format), ending in
# the stack frame that used to become a UsageError's message.
PANIC_DUMP = """panic: runtime error: makeslice: len out of range

goroutine 42 [running]:
github.com/pathctl/pathctl/graph.NewBlock(0x4, 0x4000000000000000)
\t/build/graph/block.go:31 +0x58
github.com/pathctl/pathctl/pipeline.(*schedule).next(0xc000123000)
\t/build/pipeline/schedule.go:118 +0x1a4
created by os/signal.Notify.func1.1 in goroutine 1
\t/usr/lib/go/src/os/signal/signal.go:291 +0x158
"""


def crashing_binary(tmp_path, script: str) -> str:
    path = tmp_path / "pathctl"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("goroutines", [1, 400], ids=["one-goroutine", "long-dump"])
def test_go_panic_is_a_crash_not_a_usage_error(tmp_path, goroutines):
    """A binary that panics (exit status 2, the usage status, and a stack
    dump on stderr) is reported as the engine's failure: a PathctlError,
    not a UsageError, naming the status and the panic's first line, even
    when the dump is longer than the stderr the package keeps."""
    dump = PANIC_DUMP + "".join(f"\ngoroutine {i} [chan receive]:\nmain.wait()\n\t/build/x.go:{i} +0x1\n"
                                for i in range(100, 100 + goroutines - 1))
    (tmp_path / "dump.txt").write_text("pathctl: note: running on the cpu engine\n" + dump)
    binary = crashing_binary(tmp_path, f"cat '{tmp_path / 'dump.txt'}' >&2\nexit 2\n")
    for call in (lambda: pathctl.apsp(edges(), binary=binary),
                 lambda: pathctl.stream(edges(), binary=binary).read_all(),
                 lambda: pathctl.sssp(edges(), 1, binary=binary)):
        with pytest.raises(pathctl.PathctlError) as info:
            call()
        assert type(info.value) is pathctl.PathctlError
        assert info.value.exit_code == 2
        message = info.value.message
        assert message.startswith("pathctl crashed (exit status 2): "
                                  "panic: runtime error: makeslice: len out of range"), message
        assert "signal.go" not in message and "\n" not in message
        assert "goroutine 42 [running]" in info.value.stderr
    # A plain usage error stays one.
    assert type(pathctl._errors.from_exit(2, "pathctl: --k-nearest: bad value\n")) is pathctl.UsageError


def test_fatal_error_and_crash_signals(tmp_path):
    """A Go fatal error (out of memory) is a crash too, and so is death by
    a crash signal; a signal someone sent (SIGKILL, SIGTERM) is a
    cancellation, as before."""
    oom = crashing_binary(tmp_path, "echo 'fatal error: out of memory' >&2\n"
                                    "echo >&2\necho 'goroutine 7 [running]:' >&2\nexit 2\n")
    with pytest.raises(pathctl.PathctlError) as info:
        pathctl.apsp(edges(), binary=oom)
    assert type(info.value) is pathctl.PathctlError
    assert info.value.message.startswith("pathctl crashed (exit status 2): fatal error: out of memory")
    segv = crashing_binary(tmp_path, "kill -SEGV $$\n")
    with pytest.raises(pathctl.PathctlError) as info:
        pathctl.apsp(edges(), binary=segv)
    assert type(info.value) is pathctl.PathctlError
    assert info.value.exit_code == -signal.SIGSEGV
    assert info.value.message.startswith("pathctl crashed: killed by signal 11 (SIGSEGV)")
    killed = crashing_binary(tmp_path, "kill -TERM $$\n")
    with pytest.raises(pathctl.CancelledError, match="signal 15"):
        pathctl.apsp(edges(), binary=killed)


def test_messages_share_one_wording():
    # The CLI's line and the Flight server's error say an unknown id, a bad
    # k and a missing graph in the same words, naming Python's names.
    from pathctl._errors import flight_message, python_message
    assert python_message('--sources: "7" is not a vertex of the graph') == \
        python_message('invalid request: source "7": arrowio: vertex "7" is not in the graph') == \
        'source "7" is not a vertex of the graph'
    assert python_message('--targets: "x" is not a vertex of the graph, whose ids are int64') == \
        python_message('invalid request: unknown target "x": arrowio: vertex "x" is not a valid int64 id') == \
        'target "x" is not a vertex of the graph, whose ids are int64'
    assert python_message("--k-nearest 0: K is 1 or more") == \
        python_message('flight: "k" 0: k is 1 or more') == "k=0: k is 1 or more"
    assert flight_message(Exception('flight: no graph "g"; upload it with DoPut to ["graphs", "g"] or see ListFlights')) == \
        'no graph "g"; upload it with client.upload("g", edges) or see client.graphs()'


def test_nan_weight_in_pandas_is_named_nan():
    import pandas as pd
    frame = pd.DataFrame({"src": [1, 2], "dst": [2, 3], "weight": [1.0, float("nan")]})
    with pytest.raises(pathctl.InvalidInputError, match=r'row 1: weight NaN is not finite') as info:
        pathctl.apsp(frame)
    assert "null" not in info.value.message
