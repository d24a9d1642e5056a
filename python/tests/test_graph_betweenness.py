"""Graph.betweenness on a resident graph against pathctl.betweenness and
networkx.betweenness_centrality."""

import math
import random

import networkx as nx
import pyarrow as pa
import pytest

import pathctl
from pathctl import _errors


def _edges(directed, seed, weighted=True):
    """A connected-ish random graph on 30 vertices with integer weights 1..3
    (many ties), as networkx and as an edge table."""
    rng = random.Random(seed)
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(30))
    for v in range(1, 30):  # a spanning path: no isolated vertex, which load cannot hold
        G.add_edge(v - 1, v, weight=rng.randint(1, 3) if weighted else 1)
    for _ in range(60):
        u, v = rng.randrange(30), rng.randrange(30)
        if u != v and not G.has_edge(u, v):
            G.add_edge(u, v, weight=rng.randint(1, 3) if weighted else 1)
    src, dst, w = zip(*((u, v, d["weight"]) for u, v, d in G.edges(data=True)))
    cols = {"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64())}
    if weighted:
        cols["weight"] = pa.array(w, pa.int64())
    return G, pa.table(cols)


def _values(table):
    assert table.schema.names == ["vertex", "betweenness"]
    assert table.schema.field("betweenness").type == pa.float64()
    return dict(zip(table.column("vertex").to_pylist(), table.column("betweenness").to_pylist()))


def _close(ours, theirs):
    assert set(ours) == set(theirs)
    for v in ours:
        a, b = ours[v], theirs[v]
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12), (v, a, b)


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_graph_betweenness_equals_networkx_and_module(directed, weighted):
    G, edges = _edges(directed, 7 + directed + 2 * weighted, weighted)
    weight = "weight" if weighted else None
    with pathctl.load(edges, directed=directed, engine="cpu") as g:
        for kw in ({}, {"normalized": False}, {"endpoints": True},
                   {"normalized": False, "endpoints": True}):
            got = g.betweenness(**kw)
            _close(_values(got), nx.betweenness_centrality(G, weight=weight, **kw))
            assert got.equals(pathctl.betweenness(edges, directed=directed, engine="cpu", **kw))
        # A sample: the module function's and the CLI's sample for the seed.
        for kw in ({"k": 5, "seed": 3}, {"k": 8, "normalized": False, "endpoints": True, "seed": 11},
                   {"k": 4}):
            got = g.betweenness(**kw)
            assert got.equals(pathctl.betweenness(edges, directed=directed, engine="cpu", **kw)), kw
        assert not g.betweenness(k=5, seed=3).equals(g.betweenness()), "the sample was not used"
        # Given sources: their contribution, as the module function's.
        got = g.betweenness(sources=[0, 4, 9], normalized=False)
        assert got.equals(pathctl.betweenness(edges, directed=directed, engine="cpu",
                                              sources=[0, 4, 9], normalized=False))


def test_graph_betweenness_refuses_bad_options():
    _, edges = _edges(True, 1)
    with pathctl.load(edges, engine="cpu") as g:
        with pytest.raises(_errors.UsageError, match="give k too"):
            g.betweenness(seed=3)
        with pytest.raises(_errors.UsageError, match="k is a whole number"):
            g.betweenness(k=2.5)
        with pytest.raises(TypeError, match="normalized is True or False"):
            g.betweenness(normalized="yes")
        with pytest.raises(_errors.UsageError, match='give "k" or "sources"'):
            g.betweenness(k=3, sources=[1])
        with pytest.raises(_errors.UsageError, match="k 99 is more than"):
            g.betweenness(k=99)
        # The graph stays usable after refusals.
        assert g.betweenness().num_rows == 30


def _edge_values(table, directed):
    assert table.schema.names == ["src", "dst", "betweenness"]
    out = {}
    for u, v, b in zip(table.column("src").to_pylist(), table.column("dst").to_pylist(),
                       table.column("betweenness").to_pylist()):
        out[(u, v) if directed else frozenset((u, v))] = b
    return out


@pytest.mark.parametrize("directed", [True, False])
def test_graph_edge_betweenness_equals_networkx_and_module(directed):
    G, edges = _edges(directed, 21 + directed)
    with pathctl.load(edges, directed=directed, engine="cpu") as g:
        for kw in ({}, {"normalized": False}):
            got = g.edge_betweenness(**kw)
            want = nx.edge_betweenness_centrality(G, weight="weight", **kw)
            want = {(e if directed else frozenset(e)): b for e, b in want.items()}
            _close(_edge_values(got, directed), want)
            assert got.equals(pathctl.edge_betweenness(edges, directed=directed, engine="cpu", **kw))
        sampled = g.edge_betweenness(k=6, seed=5)
        assert sampled.equals(pathctl.edge_betweenness(edges, directed=directed, engine="cpu", k=6, seed=5))
        with pytest.raises(_errors.UsageError, match="seed draws the k sample"):
            g.edge_betweenness(seed=1)
