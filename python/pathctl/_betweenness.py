"""pathctl.betweenness and pathctl.edge_betweenness: Brandes betweenness
centrality through the binary's ``run --layout betweenness`` and ``--layout
edge-betweenness`` (docs/cli.md, "Betweenness centrality")."""

from __future__ import annotations

import numbers
import math
from typing import Any, Iterable, List, Mapping, Optional

import numpy as np
import pyarrow as pa

from . import _errors
from ._api import _NX_WEIGHT, _prepare
from ._checks import check_flag
from ._local import Run, run_table


def betweenness(edges: Any, *, directed: bool = True, normalized: bool = True,
                endpoints: bool = False, k: Optional[int] = None, seed: Optional[int] = None,
                sources: Optional[Iterable[Any]] = None, weight_col: Optional[str] = None,
                unweighted: bool = False, engine: str = "auto", src_col: Optional[str] = None,
                dst_col: Optional[str] = None, vertices: Optional[Iterable[Any]] = None,
                input_format: Optional[str] = None, threads: Optional[int] = None,
                binary: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> pa.Table:
    """Betweenness centrality of every vertex of ``edges``: a pyarrow Table
    of ``vertex`` (the input's id type) and ``betweenness`` (float64), one
    row per vertex in vertex order, with networkx's meaning and scaling
    (``networkx.betweenness_centrality``).

    ``normalized``, ``endpoints`` as networkx. ``k`` runs from k sources
    sampled with ``seed`` (default 0; the same sample as the CLI's
    ``--k``/``--seed``, not networkx's) and scales as networkx scales its
    sample. ``sources`` restricts the sum to those sources' paths
    (normalized: scaled as a sample of them; unnormalized: their raw
    contribution, halved when undirected). Weights are used where present
    (``weight_col``; ``unweighted=True`` counts hops); negative weights
    raise NegativeWeightError, zero weights UsageError. Runs on the GPU
    where ``engine`` takes one (docs/cli.md, "Betweenness centrality"),
    else on every CPU core.
    """
    flags = sample_flags(normalized, endpoints, k, seed)
    # k is this layout's sample, not the k nearest that the shared options
    # would make of it.
    scope = {name: value for name, value in locals().items() if name not in ("k", "seed", "flags")}
    edges, directed, options = _prepare(edges, directed, _NX_WEIGHT, scope)
    run = Run("run", edges, layout="betweenness", sources=sources, directed=directed,
              engine=engine, options=options, extra_flags=flags)
    return run_table(run)


def edge_betweenness(edges: Any, *, directed: bool = True, normalized: bool = True,
                     k: Optional[int] = None, seed: Optional[int] = None,
                     sources: Optional[Iterable[Any]] = None, weight_col: Optional[str] = None,
                     unweighted: bool = False, engine: str = "auto", src_col: Optional[str] = None,
                     dst_col: Optional[str] = None, vertices: Optional[Iterable[Any]] = None,
                     input_format: Optional[str] = None, threads: Optional[int] = None,
                     binary: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> pa.Table:
    """Edge betweenness centrality of ``edges``: a pyarrow Table of ``src``,
    ``dst`` (the input's id type) and ``betweenness`` (float64), one row
    per edge, with the meaning and scaling of
    ``networkx.edge_betweenness_centrality`` (normalized: divided by
    n(n - 1), undirected graphs too; unnormalized: undirected halved).

    Rows are in vertex order of ``src``, then of ``dst``; an undirected
    edge is one row, its ``src`` before its ``dst`` in vertex order, and
    holds the paths over it in both directions. Self-loops (ignored, as
    everywhere) have no row. ``normalized``, ``k``, ``seed``, ``sources``,
    the weights and the refusals are :func:`betweenness`'s (networkx has
    no ``endpoints`` for edges). Runs where :func:`betweenness` runs: on
    the GPU where ``engine`` takes one, else on every CPU core.
    """
    flags = sample_flags(normalized, False, k, seed)
    scope = {name: value for name, value in locals().items() if name not in ("k", "seed", "flags")}
    edges, directed, options = _prepare(edges, directed, _NX_WEIGHT, scope)
    run = Run("run", edges, layout="edge-betweenness", sources=sources, directed=directed,
              engine=engine, options=options, extra_flags=flags)
    return run_table(run)


def sample_flags(normalized: Any, endpoints: Any, k: Any, seed: Any) -> List[str]:
    """The binary's flags for the betweenness options, checked first
    (check_sample_keywords)."""
    check_sample_keywords(normalized, endpoints, k, seed)
    flags = []
    if not normalized:
        flags.append("--normalized=false")
    if endpoints:
        flags.append("--endpoints")
    if k is not None:
        flags += ["--k", str(int(k))]
        if seed is not None:
            flags += ["--seed", str(int(seed))]
    return flags


def check_sample_keywords(normalized: Any, endpoints: Any, k: Any, seed: Any) -> None:
    """Refuse a switch that is not a bool, a k or seed that is not a whole
    number, and a seed without k (TypeError, UsageError)."""
    check_flag("normalized", normalized)
    check_flag("endpoints", endpoints)
    for name, value in (("k", k), ("seed", seed)):
        if value is not None and (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)):
            raise _errors.UsageError(f"{name}={value!r}: {name} is a whole number")
    if seed is not None and k is None:
        raise _errors.UsageError("seed draws the k sample; give k too")


_MASK64 = (1 << 64) - 1


def sample_sources(n: int, k: int, seed: int) -> np.ndarray:
    """The k of n vertex positions (ascending) that ``seed`` draws: the
    binary's pipeline.SampleSources, a partial Fisher-Yates shuffle of
    0..n-1 driven by splitmix64 (docs/cli.md, "Betweenness centrality"),
    so that one seed is one sample on every surface."""
    k = min(max(k, 0), n)
    perm = list(range(n))
    state = seed & _MASK64
    for i in range(k):
        state = (state + 0x9E3779B97F4A7C15) & _MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        z ^= z >> 31
        j = i + z % (n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return np.array(sorted(perm[:k]), dtype=np.int64)


def rescale(raw: np.ndarray, *, directed: bool, normalized: bool, endpoints: bool,
            sampled: Optional[np.ndarray], given: bool, n: Optional[int] = None) -> np.ndarray:
    """The raw Brandes sums ``raw`` (one per vertex, pairs counted from both
    ends when undirected) scaled as the binary scales them
    (pipeline.rescaleBetweenness, networkx's _rescale): ``sampled`` the
    positions of the sources (None: every vertex), ``given`` whether they
    were given rather than drawn (unnormalized given sources keep their
    raw sums, halved when undirected). ``n``, the number of vertices, is
    ``len(raw)`` unless given: edge betweenness has a sum per edge, and is
    scaled as vertices with ``endpoints`` (networkx's _rescale_e). Returns
    a new array."""
    b = np.array(raw, dtype=np.float64)
    n = len(b) if n is None else n
    big_n = n if endpoints else n - 1
    if big_n < 2:
        return b
    correction = 1.0 if directed else 2.0
    if given and not normalized:
        return b * (1 / correction)
    k = float(big_n if sampled is None else len(sampled))
    if sampled is None or endpoints:
        return b * (1 / (k * (big_n - 1)) if normalized else big_n / (k * correction))
    if normalized:
        source = 1 / ((k - 1) * (big_n - 1)) if k > 1 else math.nan
        other = 1 / (k * (big_n - 1))
    else:
        source = big_n / ((k - 1) * correction) if k > 1 else math.nan
        other = big_n / (k * correction)
    out = b * other
    out[sampled] = b[sampled] * source
    return out
