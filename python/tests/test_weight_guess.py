"""A lone numeric column beside the ids is the weight, whatever text columns
stand beside it, through every way a table reaches the binary: a CSV path, a
Parquet path and a pandas DataFrame give scipy's distances over that column
(issue 39, point 1: the CSV path counted hops)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from scipy.sparse.csgraph import dijkstra

import pathctl

# Alexanderplatz -> Zoo: 2 hops through Potsdamer Platz (19 minutes), 14
# minutes along the S5 in 5 hops. One "line" cell is empty (a null).
TRIPS = pd.DataFrame({
    "from": ["Alexanderplatz", "Hackescher Markt", "Friedrichstraße", "Hauptbahnhof", "Bellevue",
             "Alexanderplatz", "Potsdamer Platz"],
    "to": ["Hackescher Markt", "Friedrichstraße", "Hauptbahnhof", "Bellevue", "Zoo",
           "Potsdamer Platz", "Zoo"],
    "minutes": [3, 2, 3, 3, 3, 10, 9],
    "line": ["S5", "S5", None, "S5", "S5", "U2", "U2"],
})


def scipy_distances():
    """scipy's all-pairs distances over the minutes, keyed (source, target),
    reachable pairs only."""
    ids = sorted(set(TRIPS["from"]) | set(TRIPS["to"]))
    index = {v: i for i, v in enumerate(ids)}
    rows = [index[v] for v in TRIPS["from"]]
    cols = [index[v] for v in TRIPS["to"]]
    m = scipy.sparse.csr_matrix((TRIPS["minutes"].astype(float), (rows, cols)), shape=(len(ids), len(ids)))
    d = dijkstra(m, directed=True)
    return {(ids[i], ids[j]): d[i, j] for i in range(len(ids)) for j in range(len(ids)) if np.isfinite(d[i, j])}


def as_dict(table):
    return {(s, t): float(d) for s, t, d in zip(table.column("source").to_pylist(),
                                                 table.column("target").to_pylist(),
                                                 table.column("distance").to_pylist())}


@pytest.mark.parametrize("form", ["csv", "parquet", "dataframe"])
def test_lone_numeric_column_is_the_weight(tmp_path, form):
    if form == "csv":
        edges = tmp_path / "trips.csv"
        TRIPS.to_csv(edges, index=False)
        edges = str(edges)
    elif form == "parquet":
        edges = tmp_path / "trips.parquet"
        TRIPS.to_parquet(edges, index=False)
        edges = str(edges)
    else:
        edges = TRIPS
    with pytest.warns(UserWarning, match='took column "minutes" as the edge weight'):
        table = pathctl.apsp(edges, src_col="from", dst_col="to", engine="cpu")
    want = scipy_distances()
    assert want[("Alexanderplatz", "Zoo")] == 14
    assert as_dict(table) == want
