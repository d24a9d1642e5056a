"""A negative self-loop is a negative cycle, as scipy has it: 1,2,3 beside
2,2,-1 gave 1 -> 2 = 3 (issue 39, point 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError
from scipy.sparse.csgraph import bellman_ford

import pathctl

EDGES = pd.DataFrame({"src": [1, 2], "dst": [2, 2], "weight": [3, -1]})


def test_negative_self_loop_is_a_negative_cycle():
    m = scipy.sparse.csr_matrix((EDGES["weight"].astype(float), (EDGES["src"] - 1, EDGES["dst"] - 1)), shape=(2, 2))
    with pytest.raises(ScipyNegativeCycleError):
        bellman_ford(m, directed=True)
    with pytest.raises(pathctl.NegativeCycleError, match="negative cycle through vertex 2"):
        pathctl.apsp(EDGES, algorithm="bellman-ford", engine="cpu")
    with pytest.raises(pathctl.NegativeWeightError, match="2 -> 2"):
        pathctl.apsp(EDGES, algorithm="dijkstra", engine="cpu")


def test_non_negative_self_loop_is_ignored():
    edges = pd.DataFrame({"src": [1, 2], "dst": [2, 2], "weight": [3, 0]})
    m = scipy.sparse.csr_matrix((edges["weight"].astype(float), (edges["src"] - 1, edges["dst"] - 1)), shape=(2, 2))
    table = pathctl.apsp(edges, algorithm="bellman-ford", engine="cpu")
    got = {(s, t): d for s, t, d in zip(*(table.column(c).to_pylist() for c in ("source", "target", "distance")))}
    want = bellman_ford(m, directed=True)
    assert got == {(i + 1, j + 1): want[i, j] for i in range(2) for j in range(2) if np.isfinite(want[i, j])}
