"""pathctl.betweenness against networkx.betweenness_centrality."""

import math
import random

import networkx as nx
import pyarrow as pa
import pytest

import pathctl
from pathctl import _errors


def _graph(kind, directed, seed):
    """A random graph of a shape: ties-heavy integer weights 1..3, float
    weights, an unweighted grid, small-world, parts and isolated vertices."""
    rng = random.Random(seed)
    G = nx.DiGraph() if directed else nx.Graph()
    if kind == "grid":
        H = nx.grid_2d_graph(5, 6)
        G.add_edges_from(((a[0] * 6 + a[1], b[0] * 6 + b[1]) for a, b in H.edges()))
        if directed:
            G.add_edges_from([(v, u) for u, v in list(G.edges()) if rng.random() < 0.5])
        return G, False
    if kind == "small-world":
        H = nx.watts_strogatz_graph(40, 4, 0.2, seed=seed)
        G.add_edges_from(H.edges())
        return G, False
    G.add_nodes_from(range(40))  # some isolated
    for _ in range(90):
        u, v = rng.randrange(40), rng.randrange(40)
        if u == v or G.has_edge(u, v):
            continue
        w = rng.randint(1, 3) if kind == "ints" else rng.uniform(0.1, 3.0)
        G.add_edge(u, v, weight=w)
    return G, True


def _table(G, weighted):
    src, dst, w = [], [], []
    for u, v, d in G.edges(data=True):
        src.append(u)
        dst.append(v)
        w.append(d.get("weight", 1))
    cols = {"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64())}
    if weighted:
        cols["weight"] = pa.array(w, pa.int64() if all(isinstance(x, int) for x in w) else pa.float64())
    return pa.table(cols), pa.array(sorted(G.nodes()), pa.int64())


def _ours(G, weighted, engine="cpu", **kw):
    edges, vertices = _table(G, weighted)
    t = pathctl.betweenness(edges, directed=G.is_directed(), vertices=vertices, engine=engine, **kw)
    assert t.schema.names == ["vertex", "betweenness"]
    assert t.column("vertex").to_pylist() == sorted(G.nodes())
    return dict(zip(t.column("vertex").to_pylist(), t.column("betweenness").to_pylist()))


def _close(ours, theirs):
    assert set(ours) == set(theirs)
    for v in theirs:
        a, b = ours[v], theirs[v]
        if math.isnan(b):
            assert math.isnan(a), v
        else:
            assert a == pytest.approx(b, rel=1e-9, abs=1e-12), (v, a, b)


@pytest.mark.parametrize("kind", ["ints", "floats", "grid", "small-world"])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_exact_equals_networkx(kind, directed, normalized, endpoints):
    G, weighted = _graph(kind, directed, seed=41)
    theirs = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints,
                                       weight="weight" if weighted else None)
    _close(_ours(G, weighted, normalized=normalized, endpoints=endpoints), theirs)


@pytest.mark.parametrize("kind", ["ints", "floats", "grid", "small-world"])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_exact_on_the_gpu_equals_networkx(kind, directed, endpoints):
    if not pathctl.gpu_available():
        pytest.skip("no usable GPU")
    G, weighted = _graph(kind, directed, seed=43)
    theirs = nx.betweenness_centrality(G, endpoints=endpoints, weight="weight" if weighted else None)
    _close(_ours(G, weighted, engine="gpu", endpoints=endpoints), theirs)


class _Given(random.Random):
    """A networkx seed whose sample is the given sources."""

    def __init__(self, sources):
        super().__init__(0)
        self._sources = list(sources)

    def sample(self, population, k):
        assert k == len(self._sources)
        return list(self._sources)


def _splitmix_sample(n, k, seed):
    """pipeline.SampleSources, as docs/cli.md describes it."""
    mask = (1 << 64) - 1
    perm = list(range(n))
    state = seed
    for i in range(k):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        j = i + z % (n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return sorted(perm[:k])


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_k_sample_equals_networkx_on_the_same_sources(directed, normalized, endpoints):
    G, weighted = _graph("ints", directed, seed=7)
    nodes = sorted(G.nodes())
    sample = [nodes[i] for i in _splitmix_sample(len(nodes), 9, 1234)]
    theirs = nx.betweenness_centrality(G, k=9, seed=_Given(sample), normalized=normalized,
                                       endpoints=endpoints, weight="weight")
    _close(_ours(G, weighted, k=9, seed=1234, normalized=normalized, endpoints=endpoints), theirs)


def _brandes_sources(G, sources, weighted, endpoints):
    """A small Python Brandes over networkx's own passes: the raw sums of
    the given sources."""
    from networkx.algorithms.centrality.betweenness import (
        _accumulate_basic, _accumulate_endpoints, _single_source_dijkstra_path_basic,
        _single_source_shortest_path_basic)
    b = dict.fromkeys(G, 0.0)
    for s in sources:
        if weighted:
            S, P, sigma, _ = _single_source_dijkstra_path_basic(G, s, "weight")
        else:
            S, P, sigma, _ = _single_source_shortest_path_basic(G, s)
        b, _ = (_accumulate_endpoints if endpoints else _accumulate_basic)(b, S, P, sigma, s)
    return b


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_sources_restrict_the_sum(directed, endpoints):
    G, weighted = _graph("floats", directed, seed=3)
    sources = [0, 5, 17, 22]
    # Normalized: as networkx scales a sample of exactly these sources.
    theirs = nx.betweenness_centrality(G, k=len(sources), seed=_Given(sources),
                                       endpoints=endpoints, weight="weight")
    _close(_ours(G, weighted, sources=sources, endpoints=endpoints), theirs)
    # Unnormalized: their raw contribution, halved when undirected.
    raw = _brandes_sources(G, sources, weighted, endpoints)
    half = 1 if directed else 0.5
    _close(_ours(G, weighted, sources=sources, endpoints=endpoints, normalized=False),
           {v: x * half for v, x in raw.items()})


def test_refusals():
    edges = pa.table({"src": [1, 2], "dst": [2, 3], "weight": [1, -2]})
    with pytest.raises(pathctl.NegativeWeightError, match="betweenness needs non-negative weights"):
        pathctl.betweenness(edges)
    zero = pa.table({"src": [1, 2], "dst": [2, 3], "weight": [1, 0]})
    with pytest.raises(_errors.UsageError, match="weighs 0"):
        pathctl.betweenness(zero)
    # Counting hops ignores the weights.
    t = pathctl.betweenness(zero, unweighted=True)
    assert t.column("betweenness").to_pylist() == [0.0, 0.5, 0.0]
    with pytest.raises(_errors.UsageError):
        pathctl.betweenness(edges, k=2, sources=[1])
    with pytest.raises(_errors.UsageError):
        pathctl.betweenness(edges, k=1.5)


def _edges_ours(G, weighted, engine="cpu", **kw):
    edges, vertices = _table(G, weighted)
    t = pathctl.edge_betweenness(edges, directed=G.is_directed(), vertices=vertices, engine=engine, **kw)
    assert t.schema.names == ["src", "dst", "betweenness"]
    rows = list(zip(t.column("src").to_pylist(), t.column("dst").to_pylist()))
    assert rows == sorted(rows)  # vertex order of src, then dst
    if not G.is_directed():
        assert all(u < v for u, v in rows)  # one row per edge, its ends in vertex order
    return {(u, v): x for (u, v), x in zip(rows, t.column("betweenness").to_pylist())}


def _edge_key(G):
    """networkx's edge keys as ours: undirected edges with their ends sorted."""
    return (lambda e: e) if G.is_directed() else (lambda e: tuple(sorted(e)))


@pytest.mark.parametrize("kind", ["ints", "floats", "grid", "small-world"])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("normalized", [True, False])
def test_edge_betweenness_equals_networkx(kind, directed, normalized):
    G, weighted = _graph(kind, directed, seed=43)
    theirs = nx.edge_betweenness_centrality(G, normalized=normalized, weight="weight" if weighted else None)
    key = _edge_key(G)
    _close(_edges_ours(G, weighted, normalized=normalized), {key(e): x for e, x in theirs.items()})


@pytest.mark.parametrize("kind", ["ints", "floats", "grid", "small-world"])
@pytest.mark.parametrize("directed", [True, False])
def test_edge_betweenness_on_the_gpu_equals_networkx(kind, directed):
    if not pathctl.gpu_available():
        pytest.skip("no usable GPU")
    G, weighted = _graph(kind, directed, seed=47)
    theirs = nx.edge_betweenness_centrality(G, weight="weight" if weighted else None)
    key = _edge_key(G)
    _close(_edges_ours(G, weighted, engine="gpu"), {key(e): x for e, x in theirs.items()})


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("normalized", [True, False])
def test_edge_betweenness_sample_and_sources(directed, normalized):
    """k sampled with a seed, and given sources: scaled as networkx scales
    a sample of those sources (n / k, normalized or not)."""
    G, weighted = _graph("ints", directed, seed=8)
    nodes = sorted(G.nodes())
    key = _edge_key(G)
    sample = [nodes[i] for i in _splitmix_sample(len(nodes), 11, 99)]
    theirs = nx.edge_betweenness_centrality(G, k=11, seed=_Given(sample), normalized=normalized, weight="weight")
    _close(_edges_ours(G, weighted, k=11, seed=99, normalized=normalized), {key(e): x for e, x in theirs.items()})
    if normalized:
        sources = [1, 4, 9]
        theirs = nx.edge_betweenness_centrality(G, k=3, seed=_Given(sources), weight="weight")
        _close(_edges_ours(G, weighted, sources=sources), {key(e): x for e, x in theirs.items()})


def test_edge_betweenness_refusals():
    with pytest.raises(pathctl.NegativeWeightError, match="betweenness needs non-negative weights"):
        pathctl.edge_betweenness(pa.table({"src": [1, 2], "dst": [2, 3], "weight": [1, -2]}))
    with pytest.raises(_errors.UsageError, match="weighs 0"):
        pathctl.edge_betweenness(pa.table({"src": [1, 2], "dst": [2, 3], "weight": [1, 0]}))
    with pytest.raises(TypeError):
        pathctl.edge_betweenness(pa.table({"src": [1], "dst": [2]}), endpoints=True)
