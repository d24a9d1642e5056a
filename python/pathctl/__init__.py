"""pathctl: shortest paths (all pairs, single source, BFS) on GPUs and CPUs
for Arrow data.

Locally, every function runs the ``pathctl`` binary (``$PATHCTL_BIN``, or
``pathctl`` on PATH) and streams Arrow IPC to it and back::

    import pathctl
    table = pathctl.apsp("edges.parquet")                 # pyarrow.Table
    D, ids = pathctl.distance_matrix(df, directed=False)   # numpy, no copy

Remotely, :func:`connect` talks to a ``pathctl serve`` Flight endpoint, and
:mod:`pathctl.spark` spreads the sources of a run over a Spark cluster.
"""

from ._api import apsp, bfs, distance_matrix, gpu_available, info, matrix_from_table, path, sssp, stream
from ._errors import (
    AuthenticationError,
    BinaryNotFoundError,
    CancelledError,
    EngineUnavailableError,
    InvalidInputError,
    NegativeCycleError,
    NegativeWeightError,
    NotFoundError,
    PathctlError,
    ResourceExhaustedError,
    ServiceUnavailableError,
    UsageError,
)
from ._local import find_binary
from .client import Client, connect

__version__ = "0.1.0"

__all__ = [
    "apsp",
    "sssp",
    "bfs",
    "stream",
    "distance_matrix",
    "path",
    "matrix_from_table",
    "info",
    "gpu_available",
    "find_binary",
    "connect",
    "Client",
    "PathctlError",
    "InvalidInputError",
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
