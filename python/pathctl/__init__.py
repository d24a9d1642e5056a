"""pathctl: shortest paths (all pairs, single source, BFS) on GPUs and CPUs
for Arrow data.

Locally, every function runs the ``pathctl`` binary (the one a wheel
bundles, else ``$PATHCTL_BIN``, else ``pathctl`` on PATH) and hands Arrow
IPC to it and back through memfds that both processes map; a matrix the
binary writes straight into this process's memory (pipes where there are
no memfds, and for :func:`stream`)::

    import pathctl
    table = pathctl.apsp("edges.parquet")                 # pyarrow.Table
    D, ids = pathctl.distance_matrix(df, directed=False)   # numpy (inf if unreachable), no copy

Remotely, :func:`connect` talks to a ``pathctl serve`` Flight endpoint, and
:mod:`pathctl.spark` spreads the sources of a run over a Spark cluster.
"""

from ._betweenness import betweenness, edge_betweenness
from ._api import apsp, bfs, distance_matrix, gpu_available, info, matrix_from_table, path, sssp, stream
from ._errors import (
    AuthenticationError,
    BinaryNotFoundError,
    CancelledError,
    EngineUnavailableError,
    InputNotFoundError,
    InvalidInputError,
    NegativeCycleError,
    NegativeWeightError,
    NotFoundError,
    PathctlError,
    ResourceExhaustedError,
    ServiceUnavailableError,
    UsageError,
)
from ._dryrun import DryRun
from ._local import find_binary
from ._graph import Graph, load
from ._pandas import to_pandas
from .client import Client, connect

try:
    from importlib.metadata import PackageNotFoundError as _NoMetadata, version as _version

    __version__ = _version("pathctl")  # the repository's VERSION file, as the binary's
except _NoMetadata:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "apsp",
    "betweenness",
    "edge_betweenness",
    "sssp",
    "bfs",
    "stream",
    "distance_matrix",
    "path",
    "matrix_from_table",
    "DryRun",
    "load",
    "Graph",
    "to_pandas",
    "info",
    "gpu_available",
    "find_binary",
    "connect",
    "Client",
    "PathctlError",
    "InvalidInputError",
    "InputNotFoundError",
    "UsageError",
    "NotFoundError",
    "EngineUnavailableError",
    "NegativeWeightError",
    "NegativeCycleError",
    "BinaryNotFoundError",
    "AuthenticationError",
    "ResourceExhaustedError",
    "CancelledError",
    "ServiceUnavailableError",
]
