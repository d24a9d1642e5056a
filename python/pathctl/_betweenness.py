"""pathctl.betweenness: Brandes betweenness centrality through the binary's
``run --layout betweenness`` (docs/cli.md, "Betweenness centrality")."""

from __future__ import annotations

import numbers
from typing import Any, Iterable, Mapping, Optional

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
    raise NegativeWeightError, zero weights UsageError. Runs on the CPU
    engine (the GPU passes are not built yet).
    """
    check_flag("normalized", normalized)
    check_flag("endpoints", endpoints)
    for name, value in (("k", k), ("seed", seed)):
        if value is not None and (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)):
            raise _errors.UsageError(f"{name}={value!r}: {name} is a whole number")
    flags = []
    if not normalized:
        flags.append("--normalized=false")
    if endpoints:
        flags.append("--endpoints")
    if k is not None:
        flags += ["--k", str(int(k))]
        if seed is not None:
            flags += ["--seed", str(int(seed))]
    elif seed is not None:
        raise _errors.UsageError("seed draws the k sample; give k too")
    # k is this layout's sample, not the k nearest that the shared options
    # would make of it.
    scope = {name: value for name, value in locals().items() if name not in ("k", "seed", "flags")}
    edges, directed, options = _prepare(edges, directed, _NX_WEIGHT, scope)
    run = Run("run", edges, layout="betweenness", sources=sources, directed=directed,
              engine=engine, options=options, extra_flags=flags)
    return run_table(run)
