"""apsp, sssp and bfs against the CLI's own output files and against
scipy / networkx."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest

import pathctl
from conftest import (assert_tables_equal, cli_result, dense_from_pairs, oracle, random_edges,
                      write_arrow)

SEEDS = [11, 12, 13]


def test_small_graph_by_hand(small_edges):
    table = pathctl.apsp(small_edges)
    got = {(s, t): d for s, t, d in zip(table.column("source").to_pylist(),
                                        table.column("target").to_pylist(),
                                        table.column("distance").to_pylist())}
    # Worked out by hand: 10 -> 30 goes through 20 (1 + 2 < 5).
    want_from_10 = {10: 0, 20: 1, 30: 3, 40: 4, 50: 7, 60: 8}
    for t, d in want_from_10.items():
        assert got[(10, t)] == d
    assert got[(60, 60)] == 0
    assert (60, 10) not in got  # unreachable pairs are omitted
    assert len(got) == 6 + 5 + 4 + 3 + 2 + 1
    assert table.schema.field("source").type == pa.int64()
    assert table.schema.field("distance").type == pa.int32()


@pytest.mark.parametrize("layout", ["pairs", "matrix", "stats"])
@pytest.mark.parametrize("directed", [True, False])
def test_apsp_equals_cli(tmp_path, layout, directed):
    edges = random_edges(5, 40, 120)
    path = write_arrow(edges, tmp_path / "edges.arrow")
    extra = ["--layout", layout] + ([] if directed else ["--undirected"])
    want = cli_result(path, tmp_path, *extra)
    got = pathctl.apsp(edges, layout=layout, directed=directed)
    assert_tables_equal(got, want, pairs=layout == "pairs")


def test_apsp_with_predecessors_equals_cli(tmp_path):
    edges = random_edges(6, 30, 90)
    path = write_arrow(edges, tmp_path / "edges.arrow")
    want = cli_result(path, tmp_path, "--with-predecessors")
    got = pathctl.apsp(edges, with_predecessors=True)
    assert_tables_equal(got, want)


@pytest.mark.parametrize("algorithm", ["dijkstra", "delta", "edge", "bellman-ford", "auto"])
def test_algorithms_equal_cli(tmp_path, algorithm):
    edges = random_edges(7, 35, 100)
    path = write_arrow(edges, tmp_path / "edges.arrow")
    want = cli_result(path, tmp_path, "--algo", algorithm)
    got = pathctl.apsp(edges, algorithm=algorithm)
    assert_tables_equal(got, want)


def test_sssp_and_bfs_equal_cli(tmp_path):
    edges = random_edges(8, 40, 110)
    path = write_arrow(edges, tmp_path / "edges.arrow")
    source = edges.column("src")[0].as_py()
    want = cli_result(path, tmp_path, "--source", str(source), command="sssp")
    assert_tables_equal(pathctl.sssp(edges, source), want)
    want = cli_result(path, tmp_path, "--source", str(source), command="bfs")
    assert_tables_equal(pathctl.bfs(edges, source), want)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", ["int", "float", "none"])
@pytest.mark.parametrize("directed", [True, False])
def test_apsp_matches_scipy(seed, weights, directed):
    edges = random_edges(seed, 45, 140, weights=weights)
    want, vertices = oracle(edges, directed=directed)
    table = pathctl.apsp(edges, directed=directed)
    got = dense_from_pairs(table, vertices)
    assert table.num_rows == np.isfinite(want).sum(), f"seed {seed}"
    np.testing.assert_allclose(got, want, rtol=1e-9, err_msg=f"seed {seed}")
    want_type = {"int": pa.int32(), "float": pa.float64(), "none": pa.int32()}[weights]
    assert table.schema.field("distance").type == want_type


@pytest.mark.parametrize("seed", SEEDS)
def test_predecessors_form_shortest_paths(seed):
    edges = random_edges(seed, 40, 120)
    dist, vertices = oracle(edges)
    index = {v: i for i, v in enumerate(vertices)}
    best = {}
    for s, d, w in zip(*(edges.column(c).to_pylist() for c in ("src", "dst", "weight"))):
        if s != d:
            best[(s, d)] = min(best.get((s, d), math.inf), w)
    table = pathctl.apsp(edges, with_predecessors=True)
    for s, t, d, p in zip(*(table.column(c).to_pylist() for c in ("source", "target", "distance", "predecessor"))):
        if s == t:
            assert d == 0 and p is None
            continue
        assert p is not None, f"seed {seed}: {s}->{t} has no predecessor"
        assert (p, t) in best, f"seed {seed}: predecessor {p} of {t} is not an in-neighbour"
        assert dist[index[s], index[p]] + best[(p, t)] == d, f"seed {seed}: {s}->{t} via {p}"


@pytest.mark.parametrize("seed", SEEDS)
def test_sssp_and_bfs_match_networkx(seed):
    edges = random_edges(seed, 50, 150)
    g = nx.DiGraph()
    for s, d, w in zip(*(edges.column(c).to_pylist() for c in ("src", "dst", "weight"))):
        if s == d:
            continue
        if not g.has_edge(s, d) or g[s][d]["weight"] > w:
            g.add_edge(s, d, weight=w)
    source = edges.column("src")[0].as_py()
    want = nx.single_source_dijkstra_path_length(g, source, weight="weight")
    got = pathctl.sssp(edges, source)
    assert set(got.column("source").to_pylist()) == {source}
    assert dict(zip(got.column("target").to_pylist(), got.column("distance").to_pylist())) == want
    want_hops = nx.single_source_shortest_path_length(g, source)
    got = pathctl.bfs(edges, source)
    assert got.schema.field("distance").type == pa.int32()
    assert dict(zip(got.column("target").to_pylist(), got.column("distance").to_pylist())) == want_hops


@pytest.mark.parametrize("seed", SEEDS)
def test_stats_match_networkx(seed):
    edges = random_edges(seed, 40, 100)
    dist, vertices = oracle(edges)
    n = len(vertices)
    table = pathctl.apsp(edges, layout="stats").sort_by("source")
    assert table.column("source").to_pylist() == vertices
    g = nx.DiGraph()
    g.add_nodes_from(vertices)
    for s, d, w in zip(*(edges.column(c).to_pylist() for c in ("src", "dst", "weight"))):
        if s != d and (not g.has_edge(s, d) or g[s][d]["weight"] > w):
            g.add_edge(s, d, weight=w)
    # networkx measures incoming distances on directed graphs: ours (outgoing)
    # equal theirs on the reversed graph.
    closeness = nx.closeness_centrality(g.reverse(), distance="weight", wf_improved=True)
    harmonic = nx.harmonic_centrality(g.reverse(), distance="weight")
    for i, v in enumerate(vertices):
        row = dist[i][np.arange(n) != i]
        reach = row[np.isfinite(row)]
        assert table.column("reachable")[i].as_py() == len(reach), f"seed {seed} vertex {v}"
        assert table.column("sum")[i].as_py() == reach.sum()
        ecc = table.column("eccentricity")[i].as_py()
        assert ecc == (reach.max() if len(reach) else None)
        assert table.column("closeness")[i].as_py() == pytest.approx(closeness[v], rel=1e-12, abs=1e-15)
        assert table.column("harmonic")[i].as_py() == pytest.approx(harmonic[v], rel=1e-12)


def test_sources_subset_and_string_ids():
    edges = random_edges(21, 30, 90, ids="string")
    want, vertices = oracle(edges, directed=False)
    sources = [vertices[3], vertices[0], vertices[17]]
    table = pathctl.apsp(edges, sources=sources, directed=False)
    assert table.schema.field("source").type in (pa.string(), pa.large_string())
    assert set(table.column("source").to_pylist()) == set(sources)
    got = dense_from_pairs(table, vertices)
    rows = [vertices.index(s) for s in sources]
    np.testing.assert_array_equal(got[rows], want[rows])


def test_column_options():
    edges = random_edges(22, 25, 70).rename_columns(["from", "to", "cost"])
    want, vertices = oracle(edges, src_col="from", dst_col="to", weight_col="cost")
    table = pathctl.apsp(edges, src_col="from", dst_col="to", weight_col="cost")
    np.testing.assert_array_equal(dense_from_pairs(table, vertices), want)
    hops, _ = oracle(edges, src_col="from", dst_col="to", weight_col=None)
    table = pathctl.apsp(edges, src_col="from", dst_col="to", weight_col="cost", unweighted=True)
    np.testing.assert_array_equal(dense_from_pairs(table, vertices), hops)
    table = pathctl.apsp(edges, src_col="from", dst_col="to", weight_col="cost", dist_type="int64")
    assert table.schema.field("distance").type == pa.int64()


def test_info_names_engines():
    report = pathctl.info()
    names = {e["name"] for e in report["engines"]}
    assert {"cpu", "gpu"} <= names
    assert isinstance(pathctl.gpu_available(), bool)
