"""Every option of the local entry points is a named keyword parameter
with a docstring (inspect.signature, help() and editors show it), an
unknown keyword is a TypeError saying what was meant, and predecessors
reach pandas as integers."""

from __future__ import annotations

import inspect

import pandas as pd
import pyarrow as pa
import pytest

import pathctl

FUNCTIONS = {
    "apsp": pathctl.apsp,
    "sssp": pathctl.sssp,
    "bfs": pathctl.bfs,
    "stream": pathctl.stream,
    "distance_matrix": pathctl.distance_matrix,
    "path": pathctl.path,
}

# The options every entry point takes besides its own (path asks for its
# one target's path itself: no targets, k or with_paths).
COMMON = ["cutoff", "reverse", "weight", "src_col", "dst_col", "weight_col", "unweighted",
          "vertices", "input_format", "dist_type", "delta", "threads", "mem", "devices",
          "binary", "env", "directed", "engine"]
NARROWING = ["targets", "k", "with_paths"]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_options_are_named_and_documented(name):
    func = FUNCTIONS[name]
    params = inspect.signature(func).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values()), f"{name} hides options in **kwargs"
    want = COMMON + ([] if name == "path" else NARROWING)
    missing = [opt for opt in want if opt not in params]
    assert not missing, f"{name} lacks {missing}"
    for opt in want:
        assert params[opt].kind is inspect.Parameter.KEYWORD_ONLY, (name, opt)
    doc = inspect.getdoc(func)
    undocumented = [opt for opt in want if opt not in doc]
    assert not undocumented, f"{name}'s docstring does not mention {undocumented}"


@pytest.fixture
def edges():
    return pa.table({"src": [1, 2, 3], "dst": [2, 3, 1], "weight": [4, 1, 2]})


def call(name, edges, **kwargs):
    if name in ("sssp", "bfs"):
        return FUNCTIONS[name](edges, 1, **kwargs)
    if name == "path":
        return FUNCTIONS[name](edges, 1, 3, **kwargs)
    return FUNCTIONS[name](edges, **kwargs)


@pytest.mark.parametrize("name", ["apsp", "stream", "distance_matrix"])
def test_misspelt_keyword_names_the_right_one(edges, name):
    with pytest.raises(TypeError, match=rf"^pathctl\.{name}\(\) got an unexpected keyword argument "
                                        r"'sorces' \(did you mean sources=\?\)"):
        call(name, edges, sorces=[1])
    with pytest.raises(TypeError, match=r"'weigth_col' \(did you mean weight_col=\?\)"):
        call(name, edges, weigth_col="w")


# scipy.sparse.csgraph's and networkx's names of our options.
ALIASES = [
    ("apsp", "indices", "sources="),
    ("distance_matrix", "indices", "sources="),
    ("sssp", "indices", "the source argument"),
    ("apsp", "limit", "cutoff="),
    ("sssp", "limit", "cutoff="),
    ("path", "limit", "cutoff="),
    ("apsp", "min_only", 'layout="nearest"'),
    ("distance_matrix", "min_only", 'pathctl.apsp(..., sources=..., layout="nearest")'),
    ("apsp", "return_predecessors", "with_predecessors=True"),
    ("bfs", "return_predecessors", "with_predecessors=True"),
    ("apsp", "method", "algorithm="),
    ("sssp", "target", "targets=[...]"),
]


@pytest.mark.parametrize("name, theirs, ours", ALIASES, ids=[f"{a}-{b}" for a, b, _ in ALIASES])
def test_scipy_and_networkx_names_point_to_ours(edges, name, theirs, ours):
    with pytest.raises(TypeError) as info:
        call(name, edges, **{theirs: True})
    message = str(info.value)
    assert f"unexpected keyword argument {theirs!r} (did you mean {ours}? {theirs} is " in message, message


def test_unknown_keywords_all_named_before_anything_runs(edges, tmp_path):
    ran = tmp_path / "ran"
    binary = tmp_path / "pathctl"
    binary.write_text(f"#!/bin/sh\ntouch '{ran}'\nexit 1\n")
    binary.chmod(0o755)
    with pytest.raises(TypeError, match=r"arguments 'colour', 'limit' \(did you mean cutoff="):
        pathctl.apsp(edges, colour="red", limit=3, binary=str(binary))
    assert not ran.exists()


def test_named_options_still_work(edges):
    """Named parameters reach the binary as the keywords did."""
    got = pathctl.apsp(edges, sources=[1], targets=[3, 2], cutoff=10, engine="cpu")
    assert sorted(got.column("target").to_pylist()) == [2, 3]
    got = pathctl.apsp(edges, sources=[1], k=1)
    assert got.column("target").to_pylist() == [2] and "rank" in got.column_names
    got = pathctl.sssp(edges, 1, reverse=True)
    assert dict(zip(got.column("target").to_pylist(), got.column("distance").to_pylist())) == \
        {1: 0, 3: 2, 2: 3}
    renamed = edges.rename_columns(["a", "b", "w"])
    assert pathctl.path(renamed, 1, 3, src_col="a", dst_col="b", weight_col="w") == (5, [1, 2, 3])
    hops = pathctl.sssp(edges, 1, unweighted=True)
    assert dict(zip(hops.column("target").to_pylist(), hops.column("distance").to_pylist())) == \
        {1: 0, 2: 1, 3: 2}


def test_predecessors_stay_integers_in_pandas():
    """Table.to_pandas() makes the predecessor ids float64 with NaN (the
    source's own row has none); pathctl.to_pandas, which is
    to_pandas(types_mapper=pd.ArrowDtype), keeps them int64 with <NA>."""
    big = 2**53 + 1  # a float64 cannot hold it
    edges = pa.table({"src": [big, 2], "dst": [2, 3], "weight": [1, 1]})
    table = pathctl.apsp(edges, sources=[big], with_predecessors=True)
    plain = table.to_pandas()
    assert plain["predecessor"].dtype == "float64"  # the trap

    df = pathctl.to_pandas(table)
    assert df["predecessor"].dtype == pd.ArrowDtype(pa.int64())
    assert df["source"].dtype == pd.ArrowDtype(pa.int64())
    rows = {t: p for t, p in zip(df["target"], df["predecessor"])}
    assert rows[big] is pd.NA
    assert rows[2] == big and rows[3] == 2
    assert str(df.loc[df["target"] == big, "predecessor"].iloc[0]) == "<NA>"
    assert df.equals(table.to_pandas(types_mapper=pd.ArrowDtype))
    # A RecordBatch too, and the keywords of Table.to_pandas pass through.
    batch = table.to_batches()[0]
    assert pathctl.to_pandas(batch)["predecessor"].dtype == pd.ArrowDtype(pa.int64())
    with pytest.raises(TypeError, match="pyarrow Table or RecordBatch"):
        pathctl.to_pandas(plain)
