"""vertices= adds ids to those of the edges, as python/README.md says (it
said that vertices= names the whole vertex set)."""

import re
from pathlib import Path

import pyarrow as pa

import pathctl

README = Path(__file__).resolve().parents[1] / "README.md"


def test_vertices_are_added_to_the_edges_ids():
    edges = pa.table({"src": pa.array([1, 2], pa.int64()), "dst": pa.array([2, 3], pa.int64())})
    stats = pathctl.apsp(edges, layout="stats", vertices=[3, 9])
    # 1 and 2 are not listed and stay; 9 has no edge and joins.
    assert stats.column("source").to_pylist() == [1, 2, 3, 9]
    assert stats.column("reachable").to_pylist() == [2, 1, 0, 0]


def test_readme_says_vertices_are_added():
    text = " ".join(README.read_text().split())
    assert "name the whole vertex set" not in text
    assert re.search(r"`vertices=` names it: the ids it gives .* are added to those of the edges", text)
