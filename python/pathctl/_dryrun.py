"""``dry_run=True`` of the local entry points: what ``pathctl run
--dry-run`` reports (the binary reads the graph, computes nothing and
writes nothing), as a :class:`DryRun`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class DryRun:
    """The plan of a run, from ``dry_run=True``: nothing was computed or
    written. ``dataclasses.asdict(plan)`` gives a dict.

    vertices, arcs
        The graph's vertices and arcs (each row of an undirected graph is
        two arcs).
    sources, targets
        The sources that would run and the columns of each row (every
        vertex, the targets, or the k nearest).
    layout, dist_type
        The result's layout and the type of its distances (for
        ``distance_matrix``, the array's dtype).
    rows, rows_exact
        The result's rows: exact for matrix and stats; for pairs the bound
        of every pair reachable (unreachable pairs are left out).
    output_bytes
        The result's estimated size as the binary hands it over (Arrow
        IPC; an upper bound for matrix and stats).
    engine, engine_reason, algorithm
        The engine that would run (``"cpu"`` or ``"gpu"``), why, and the
        algorithm with its details.
    seconds
        A rough time where a past figure allows one; None for now.
    """

    vertices: int
    arcs: int
    sources: int
    targets: int
    layout: str
    dist_type: str
    rows: int
    rows_exact: bool
    output_bytes: int
    engine: str
    engine_reason: str
    algorithm: str
    seconds: Optional[float] = None

    @classmethod
    def from_json(cls, text: str) -> "DryRun":
        """The plan the binary printed with ``--dry-run --json``."""
        raw = json.loads(text)
        return cls(vertices=int(raw["vertices"]), arcs=int(raw["arcs"]), sources=int(raw["sources"]),
                   targets=int(raw["targets"]), layout=raw["layout"], dist_type=raw["dist_type"],
                   rows=int(raw["rows"]), rows_exact=bool(raw["rows_exact"]),
                   output_bytes=int(raw["output_bytes"]), engine=raw["engine"],
                   engine_reason=raw.get("engine_reason", ""), algorithm=raw["algorithm"],
                   seconds=raw.get("seconds"))
