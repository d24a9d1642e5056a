"""pathctl.spark.betweenness and edge_betweenness on local[2] against
networkx and against pathctl.betweenness and edge_betweenness."""

from __future__ import annotations

import networkx as nx
import pyarrow as pa
import pytest

import pathctl
import pathctl.spark
from test_betweenness import _Given, _close, _edge_key, _edges_ours, _graph, _splitmix_sample, _table
from test_spark import spark  # noqa: F401 - the local[2] session of the Spark tests


def _connected(kind, directed, seed):
    """A test graph without isolated vertices (a Spark edge table has none)."""
    G, weighted = _graph(kind, directed, seed)
    G.remove_nodes_from(list(nx.isolates(G)))
    return G, weighted


def _spark_result(spark, G, weighted, **kw):
    edges, _ = _table(G, weighted)
    df = pathctl.spark.betweenness(spark.createDataFrame(edges), directed=G.is_directed(), **kw)
    got = df.toArrow()
    assert got.column_names == ["vertex", "betweenness"]
    assert got.column("vertex").to_pylist() == sorted(G.nodes())
    return dict(zip(got.column("vertex").to_pylist(), got.column("betweenness").to_pylist()))


def test_exact_directed_weighted_equals_networkx(spark):
    """Ties-heavy weights 1..3, three blocks of 13 sources summed."""
    G, weighted = _connected("ints", True, 41)
    theirs = nx.betweenness_centrality(G, weight="weight")
    _close(_spark_result(spark, G, weighted, block_size=13), theirs)


def test_undirected_sample_with_endpoints_equals_networkx_and_the_local_call(spark):
    """k sampled with a seed: the sample of every other surface, scaled as
    networkx scales it, halved once though every block is halved."""
    G, weighted = _connected("floats", False, 5)
    nodes = sorted(G.nodes())
    sample = [nodes[i] for i in _splitmix_sample(len(nodes), 9, 77)]
    for endpoints, normalized in ((True, False), (False, True)):
        theirs = nx.betweenness_centrality(G, k=9, seed=_Given(sample), normalized=normalized,
                                           endpoints=endpoints, weight="weight")
        ours = _spark_result(spark, G, weighted, k=9, seed=77, endpoints=endpoints,
                             normalized=normalized, block_size=4)
        _close(ours, theirs)
        edges, _ = _table(G, weighted)
        local = pathctl.betweenness(edges, directed=False, k=9, seed=77, endpoints=endpoints,
                                    normalized=normalized)
        _close(ours, dict(zip(local.column("vertex").to_pylist(), local.column("betweenness").to_pylist())))


def test_given_sources_unnormalized_hops(spark):
    """Given sources, unnormalized: their raw contribution, as the local
    call gives it; an unweighted grid counts hops."""
    G, weighted = _connected("grid", False, 3)
    edges, _ = _table(G, weighted)
    sources = [0, 7, 13, 29]
    ours = _spark_result(spark, G, weighted, sources=sources, normalized=False, block_size=3)
    local = pathctl.betweenness(edges, directed=False, sources=sources, normalized=False)
    _close(ours, dict(zip(local.column("vertex").to_pylist(), local.column("betweenness").to_pylist())))


def _spark_edges(spark, G, weighted, **kw):
    edges, _ = _table(G, weighted)
    df = pathctl.spark.edge_betweenness(spark.createDataFrame(edges), directed=G.is_directed(), **kw)
    got = df.toArrow()
    assert got.column_names == ["src", "dst", "betweenness"]
    rows = list(zip(got.column("src").to_pylist(), got.column("dst").to_pylist()))
    return dict(zip(rows, got.column("betweenness").to_pylist()))


@pytest.mark.parametrize("directed", [True, False])
def test_edges_exact_equal_networkx(spark, directed):
    """Ties-heavy weights 1..3 in blocks of 7 sources, normalized and not."""
    G, weighted = _connected("ints", directed, 17)
    key = _edge_key(G)
    for normalized in (True, False):
        theirs = nx.edge_betweenness_centrality(G, normalized=normalized, weight="weight")
        _close(_spark_edges(spark, G, weighted, normalized=normalized, block_size=7),
               {key(e): x for e, x in theirs.items()})


def test_edges_sample_and_given_sources_equal_the_local_call(spark):
    """k sampled with a seed, scaled as networkx scales a sample; given
    sources unnormalized: their raw contribution. Both as the local call
    gives them, on an undirected unweighted small-world graph (hops)."""
    G, weighted = _connected("small-world", False, 9)
    nodes = sorted(G.nodes())
    sample = [nodes[i] for i in _splitmix_sample(len(nodes), 6, 31)]
    theirs = nx.edge_betweenness_centrality(G, k=6, seed=_Given(sample))
    key = _edge_key(G)
    ours = _spark_edges(spark, G, weighted, k=6, seed=31, block_size=4)
    _close(ours, {key(e): x for e, x in theirs.items()})
    _close(ours, _edges_ours(G, weighted, k=6, seed=31))
    sources = [nodes[3], nodes[20], nodes[21]]
    _close(_spark_edges(spark, G, weighted, sources=sources, normalized=False, block_size=2),
           _edges_ours(G, weighted, sources=sources, normalized=False))


def test_refusals_on_the_driver(spark):
    df = spark.createDataFrame(pa.table({"src": [1, 2], "dst": [2, 3], "weight": [1, -2]}))
    with pytest.raises(pathctl.NegativeWeightError, match="betweenness needs non-negative weights"):
        pathctl.spark.betweenness(df)
    with pytest.raises(pathctl.UsageError, match="more than the graph's 3 vertices"):
        pathctl.spark.betweenness(df, k=4, unweighted=True)
    with pytest.raises(pathctl.InvalidInputError, match='source "9" is not a vertex'):
        pathctl.spark.betweenness(df, sources=[9], unweighted=True)
    with pytest.raises(pathctl.UsageError, match="give k too"):
        pathctl.spark.betweenness(df, seed=3)
    with pytest.raises(pathctl.NegativeWeightError, match="betweenness needs non-negative weights"):
        pathctl.spark.edge_betweenness(df)
