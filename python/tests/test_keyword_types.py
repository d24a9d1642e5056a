"""Keywords of the wrong type are refused with a TypeError before anything
runs: a switch is a bool (or numpy.bool_), a list of ids is a list and
never a single id (a string would be iterated into its characters)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import pathctl
import pathctl.spark
from conftest import wait_no_children


@pytest.fixture
def edges() -> pa.Table:
    # Ids 1, 2 and 12: sources="12" read as a list would be 1 and 2.
    return pa.table({"src": pa.array([1, 2, 12], pa.int64()), "dst": pa.array([2, 12, 1], pa.int64()),
                     "weight": pa.array([1, 2, 3], pa.int32())})


@pytest.fixture
def never_run(tmp_path):
    """A binary= that records being started: the checks come first."""
    ran = tmp_path / "ran"
    binary = tmp_path / "pathctl"
    binary.write_text(f"#!/bin/sh\ntouch '{ran}'\nexit 1\n")
    binary.chmod(0o755)
    yield str(binary)
    assert not ran.exists(), "the binary was started"


# (keyword, bad value) for the switches of every local entry point.
BAD_SWITCHES = [("directed", None), ("directed", "no"), ("directed", 0), ("with_predecessors", "no"),
                ("with_predecessors", None), ("with_paths", 1), ("reverse", "yes"),
                ("unweighted", None)]

LOCAL_CALLS = {
    "apsp": lambda e, **kw: pathctl.apsp(e, **kw),
    "stream": lambda e, **kw: pathctl.stream(e, **kw),
    "sssp": lambda e, **kw: pathctl.sssp(e, 1, **kw),
    "bfs": lambda e, **kw: pathctl.bfs(e, 1, **kw),
    "distance_matrix": lambda e, **kw: pathctl.distance_matrix(e, **kw),
    "path": lambda e, **kw: pathctl.path(e, 1, 12, **kw),
}
# Keywords a call does not take (distance_matrix has no predecessors; path
# always asks for the path).
NOT_TAKEN = {("distance_matrix", "with_predecessors"), ("path", "with_predecessors"), ("path", "with_paths")}
SWITCH_CASES = [(call, name, value) for call in sorted(LOCAL_CALLS) for name, value in BAD_SWITCHES
                if (call, name) not in NOT_TAKEN]


@pytest.mark.parametrize("call, name, value", SWITCH_CASES,
                         ids=[f"{c}-{n}={v!r}" for c, n, v in SWITCH_CASES])
def test_switch_that_is_not_a_bool(edges, never_run, call, name, value):
    with pytest.raises(TypeError, match=rf"^{name}={value!r}: {name} is True or False"):
        LOCAL_CALLS[call](edges, binary=never_run, **{name: value})


def test_numpy_bool_is_a_bool(edges):
    undirected = pathctl.apsp(edges, directed=np.bool_(False), with_predecessors=np.bool_(True))
    assert undirected.num_rows == 9 and "predecessor" in undirected.column_names
    assert pathctl.apsp(edges, sources=[12], directed=np.bool_(False)).num_rows == 3
    # Directed, 12 reaches 2 through 1 only.
    directed = pathctl.apsp(edges, sources=[12], targets=[2], directed=np.bool_(True))
    assert directed.column("distance").to_pylist() == [4]
    wait_no_children()


# (keyword, bad value) for the lists of ids.
BAD_LISTS = [("sources", "12"), ("sources", b"12"), ("sources", 12), ("sources", np.int64(12)),
             ("sources", 1.5), ("sources", object()), ("targets", "12"), ("targets", 12),
             ("vertices", "12")]


@pytest.mark.parametrize("name, value", BAD_LISTS, ids=[f"{n}={type(v).__name__}" for n, v in BAD_LISTS])
def test_single_id_where_a_list_is_expected(edges, never_run, name, value):
    calls = [LOCAL_CALLS["apsp"], LOCAL_CALLS["stream"], LOCAL_CALLS["distance_matrix"]]
    if name != "sources":
        calls.append(LOCAL_CALLS["sssp"])
    for call in calls:
        with pytest.raises(TypeError, match=rf"^{name}=.*: {name} is a list of ids") as info:
            call(edges, binary=never_run, **{name: value})
        if isinstance(value, (str, bytes, int, np.integer)):
            assert f"write {name}=[{value!r}]" in str(info.value)


def test_a_list_of_one_id(edges):
    assert set(pathctl.apsp(edges, sources=[12]).column("source").to_pylist()) == {12}
    assert set(pathctl.apsp(edges, sources=np.array([12])).column("source").to_pylist()) == {12}
    assert set(pathctl.apsp(edges, sources=pa.array([12])).column("source").to_pylist()) == {12}
    wait_no_children()


def test_flight_client_checks_before_any_call():
    """The Flight client refuses the same values before it sends anything
    (no server listens at this address: a call that got through would
    fail with ServiceUnavailableError instead)."""
    client = pathctl.connect("grpc://127.0.0.1:9")
    with client:
        for call in (client.apsp, client.stream, client.schema):
            for kwargs in ({"with_predecessors": "no"}, {"reverse": None}, {"with_paths": 1}):
                with pytest.raises(TypeError, match="is True or False"):
                    call("g", **kwargs)
            for kwargs in ({"sources": "12"}, {"targets": 12}):
                with pytest.raises(TypeError, match="is a list of ids"):
                    call("g", **kwargs)
        for kwargs in ({"directed": None}, {"unweighted": "no"}):
            with pytest.raises(TypeError, match="is True or False"):
                client.upload("g", pa.table({"src": [1], "dst": [2]}), **kwargs)


@pytest.mark.parametrize("kwargs", [{"directed": None}, {"with_predecessors": "no"}, {"unweighted": 1},
                                    {"reverse": None}, {"with_paths": "yes"}, {"sources": "12"},
                                    {"targets": 3}])
def test_spark_checks_before_spark(kwargs):
    """pathctl.spark.apsp refuses them before it touches the DataFrame (here
    not even one)."""
    with pytest.raises(TypeError, match="is True or False|is a list of ids"):
        pathctl.spark.apsp(object(), **kwargs)
