"""dry_run=True: the plan of pathctl run --dry-run as a pathctl.DryRun,
nothing computed and nothing written; the same errors as the run."""

from __future__ import annotations

import dataclasses
import os
import stat

import numpy as np
import pyarrow as pa
import pytest

import pathctl
from conftest import random_edges

from test_signatures import FUNCTIONS, call


def edges_of(n: int = 30):
    return random_edges(91, n, 3 * n)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_query_function_plans(name):
    edges = edges_of()
    vertices = len(set(edges.column("src").to_pylist()) | set(edges.column("dst").to_pylist()))
    first = sorted(set(edges.column("src").to_pylist()))[0]
    if name in ("sssp", "bfs"):
        plan = FUNCTIONS[name](edges, first, dry_run=True, engine="cpu")
    elif name == "path":
        plan = FUNCTIONS[name](edges, first, first, dry_run=True, engine="cpu")
    else:
        plan = FUNCTIONS[name](edges, dry_run=True, engine="cpu")
    assert isinstance(plan, pathctl.DryRun)
    assert plan.vertices == vertices and plan.engine == "cpu" and plan.algorithm
    assert plan.arcs > 0 and plan.output_bytes > 0
    one_source = name in ("sssp", "bfs", "path")
    assert plan.sources == (1 if one_source else vertices)
    assert plan.targets == (1 if name == "path" else vertices)
    if name == "distance_matrix":
        assert (plan.layout, plan.rows, plan.rows_exact, plan.dist_type) == ("matrix", vertices, True, "float32")
        # The estimate is the array's bytes and little more.
        assert vertices * vertices * 4 <= plan.output_bytes <= vertices * vertices * 4 + (1 << 20)
    else:
        assert plan.layout == "pairs" and not plan.rows_exact
        assert plan.rows == plan.sources * plan.targets
    if name == "bfs":
        assert plan.algorithm.startswith("bfs")
    assert dataclasses.asdict(plan)["vertices"] == vertices


def test_the_plan_follows_the_request():
    edges = edges_of(40)
    ids = sorted(set(edges.column("src").to_pylist()) | set(edges.column("dst").to_pylist()))
    plan = pathctl.apsp(edges, sources=ids[:3], targets=ids[:5], layout="matrix", dry_run=True)
    assert (plan.sources, plan.targets, plan.rows, plan.dist_type) == (3, 5, 3, "int32")
    plan = pathctl.apsp(edges, sources=ids[:4], k=2, dry_run=True)
    assert plan.rows == 4 * 3  # the source itself and its 2 nearest
    plan = pathctl.apsp(edges, layout="stats", dry_run=True)
    assert plan.rows == len(ids) and plan.rows_exact
    heavy = edges.set_column(2, "weight", pa.array(np.full(len(edges), 10**6), pa.int32()))
    assert pathctl.distance_matrix(heavy, dry_run=True).dist_type == "float64"
    assert pathctl.distance_matrix(heavy, dtype=np.int32, dry_run=True).dist_type == "int32"
    # Larger graphs plan larger outputs.
    assert pathctl.apsp(edges_of(80), dry_run=True).output_bytes > pathctl.apsp(edges, dry_run=True).output_bytes


def test_a_dry_run_computes_and_writes_nothing(tmp_path):
    """The binary is started with --dry-run and writes no output: a
    wrapper records its arguments, and the result's memfd is not asked
    for."""
    seen = tmp_path / "args"
    wrapper = tmp_path / "pathctl"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{seen}"\nexec "{pathctl.find_binary()}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    before = set(os.listdir(tmp_path))
    plan = pathctl.distance_matrix(edges_of(), dry_run=True, binary=str(wrapper))
    args = seen.read_text().splitlines()
    assert "--dry-run" in args and "--json" in args and "--result-peer" not in args
    assert "--vertices-out" not in args
    assert args[args.index("-o") + 1] == "-"
    assert plan.layout == "matrix"
    assert set(os.listdir(tmp_path)) == before | {"args"}


def test_the_errors_are_the_runs():
    edges = edges_of()
    with pytest.raises(pathctl.InvalidInputError, match='source "nowhere" is not a vertex'):
        pathctl.apsp(edges, sources=["nowhere"], dry_run=True)
    with pytest.raises(pathctl.InvalidInputError, match='source "nowhere" is not a vertex'):
        pathctl.sssp(edges, "nowhere", dry_run=True)
    with pytest.raises(pathctl.UsageError, match=r'dtype="float32"'):
        pathctl.distance_matrix(edges.set_column(2, "weight", pa.array(np.full(len(edges), 10**6), pa.int32())),
                                dtype=np.float32, dry_run=True)
    with pytest.raises(TypeError, match="dry_run=None: dry_run is True or False"):
        pathctl.apsp(edges, dry_run=None)


def test_a_dataset_is_planned_not_written(tmp_path):
    edges = edges_of()
    target = tmp_path / "ds"
    plan = pathctl.apsp(edges, out=str(target) + "/", dry_run=True)
    assert isinstance(plan, pathctl.DryRun) and plan.layout == "pairs" and plan.output_bytes > 0
    assert not target.exists() or not any(target.iterdir())
