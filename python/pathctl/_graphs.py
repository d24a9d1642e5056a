"""Graph objects as edges: scipy.sparse matrices and networkx graphs.

Either becomes what every other input is, an Arrow table (``src``, ``dst``
and, where there are weights, ``weight``), plus the whole vertex set, so
that isolated vertices stay vertices. scipy and networkx are imported only
when the object is one of theirs (told by its type's module), never to
look at a table.

- A scipy.sparse matrix (or array, any format) is read as
  ``scipy.sparse.csgraph`` reads it: the row and column indices are the
  vertex ids 0..n-1, the stored values the weights. A stored zero is an
  edge of weight 0 (csgraph treats zeros specially for dense input only),
  duplicate entries of a COO matrix add up (as its ``tocsr()`` does), and
  every index 0..n-1 is a vertex.
- A networkx Graph, DiGraph, MultiGraph or MultiDiGraph: the node labels
  (integers or strings) are the ids, every node is a vertex, and the edge
  attribute named by ``weight`` (default ``"weight"``, 1 where an edge does
  not have it, as networkx reads it) is the weight; ``weight=None`` counts
  hops. Parallel edges of a multigraph keep the smallest weight, as
  networkx's shortest paths do. An undirected graph is undirected: its
  edges have no direction to follow, so it is read as ``directed=False``
  whatever ``directed`` says (pass a DiGraph for arcs).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import pyarrow as pa

from . import _errors

# What the weight= keyword is by default: networkx's own default name.
NX_WEIGHT = "weight"


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


def kind_of(obj: Any) -> Optional[str]:
    """``"scipy"`` for a scipy.sparse matrix or array, ``"networkx"`` for a
    networkx graph, else None (nothing imported for other objects)."""
    mod = _module_of(obj)
    if mod == "scipy":
        import scipy.sparse

        if scipy.sparse.issparse(obj):
            return "scipy"
    elif mod == "networkx":
        import networkx as nx

        if isinstance(obj, nx.Graph):
            return "networkx"
    return None


class GraphObject:
    """A graph object converted: the edge table, the vertex ids, and
    whether it is read as directed."""

    def __init__(self, kind: str, edges: pa.Table, vertices: pa.Array, directed: bool):
        self.kind = kind
        self.edges = edges
        self.vertices = vertices
        self.directed = directed


def convert(obj: Any, *, directed: bool, weight: Any = NX_WEIGHT,
            options: Optional[dict] = None) -> Optional[GraphObject]:
    """``obj`` as a :class:`GraphObject`, or None where it is not a graph
    object (a path or a table: ``weight`` must then be left as it is).
    ``options`` are the call's other keywords, checked for those that a
    graph object makes meaningless (column names, a vertex table)."""
    kind = kind_of(obj)
    if kind is None:
        if weight != NX_WEIGHT:
            raise _errors.UsageError(
                f"weight={weight!r} names the weight attribute of a networkx graph; for a table "
                f"use weight_col= (the column) or unweighted=True (hop counts)")
        return None
    options = options or {}
    what = "a scipy.sparse matrix" if kind == "scipy" else "a networkx graph"
    for name in ("src_col", "dst_col", "weight_col", "input_format"):
        if options.get(name) is not None:
            raise _errors.UsageError(f"{name}={options[name]!r}: {what} has no columns to name")
    if options.get("vertices") is not None:
        raise _errors.UsageError(
            f"vertices=: {what} names its own vertices"
            + (" (0..n-1)" if kind == "scipy" else " (its nodes)"))
    if kind == "scipy":
        if weight != NX_WEIGHT:
            raise _errors.UsageError(
                f"weight={weight!r}: a scipy.sparse matrix's weights are its stored values; "
                f"unweighted=True counts hops")
        return _from_sparse(obj, directed)
    return _from_networkx(obj, directed, weight)


def _from_sparse(matrix: Any, directed: bool) -> GraphObject:
    import numpy as np

    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise _errors.InvalidInputError(
            f"a scipy.sparse graph is a square matrix (n x n, as scipy.sparse.csgraph reads it), "
            f"not {' x '.join(map(str, matrix.shape))}")
    n = matrix.shape[0]
    csr = matrix.tocsr(copy=True)  # a copy: summing duplicates must not touch the caller's matrix
    csr.sum_duplicates()
    coo = csr.tocoo()
    data = np.asarray(coo.data)
    if data.dtype == np.bool_:
        data = data.astype(np.int8)  # True is an edge of weight 1, as csgraph reads it
    elif data.dtype.kind not in "iuf":
        raise _errors.InvalidInputError(
            f"a scipy.sparse graph holds integer or float weights, not {data.dtype}")
    edges = pa.table({"src": pa.array(np.asarray(coo.row, dtype=np.int64)),
                      "dst": pa.array(np.asarray(coo.col, dtype=np.int64)),
                      "weight": pa.array(data)})
    vertices = pa.array(np.arange(n, dtype=np.int64))
    return GraphObject("scipy", edges, vertices, directed)


def _from_networkx(graph: Any, directed: bool, weight: Any) -> GraphObject:
    if weight is not None and not isinstance(weight, str):
        raise _errors.UsageError(
            f"weight={weight!r}: name the edge attribute that holds the weight (a str), or "
            f"None for hop counts (a weight function is networkx's alone)")
    nodes = list(graph.nodes)
    vertices = _ids(nodes, "node labels")
    if weight is None:
        pairs = list(graph.edges())
        weights = None
    else:
        triples = list(graph.edges(data=weight, default=1))
        pairs = [(u, v) for u, v, _ in triples]
        weights = [w for _, _, w in triples]
    id_type = vertices.type
    src = _ids([u for u, _ in pairs], "node labels", id_type)
    dst = _ids([v for _, v in pairs], "node labels", id_type)
    columns = {"src": src, "dst": dst}
    if weights is not None:
        try:
            columns["weight"] = pa.array(weights)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise _errors.InvalidInputError(
                f"the {weight!r} attributes of the edges are not numbers: {exc}") from exc
        if not (pa.types.is_integer(columns["weight"].type) or pa.types.is_floating(columns["weight"].type)
                or pa.types.is_null(columns["weight"].type)):
            raise _errors.InvalidInputError(
                f"the {weight!r} attributes of the edges are {columns['weight'].type}, not numbers")
        if pa.types.is_null(columns["weight"].type):
            columns["weight"] = columns["weight"].cast(pa.float64())  # the engine names the null
    if not graph.is_directed():
        directed = False
    return GraphObject("networkx", pa.table(columns), vertices, directed)


def _ids(labels: list, what: str, id_type: Optional[pa.DataType] = None) -> pa.Array:
    """Node labels as one Arrow array of integers or strings."""
    try:
        ids = pa.array(labels, type=id_type) if id_type is not None else pa.array(labels)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        raise _errors.InvalidInputError(
            f"the graph's {what} must all be integers or all strings ({exc}); "
            f"networkx.convert_node_labels_to_integers(G) numbers them") from None
    t = ids.type
    if not (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or (pa.types.is_null(t) and len(ids) == 0)):
        sample = next((x for x in labels if x is not None), None)
        raise _errors.InvalidInputError(
            f"the graph's {what} must be integers or strings, not {type(sample).__name__} "
            f"(such as {sample!r}); networkx.convert_node_labels_to_integers(G) numbers them")
    if pa.types.is_null(t):
        ids = ids.cast(pa.int64())  # no nodes: an empty graph of integer ids
    if ids.null_count:
        raise _errors.InvalidInputError(f"the graph's {what} include None")
    return ids

