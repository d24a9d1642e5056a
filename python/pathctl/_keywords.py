"""Keyword checks of the local entry points: an unknown keyword is a
TypeError that says what was probably meant.

Every option of ``pathctl.apsp`` and its siblings is a named parameter (so
``inspect.signature``, ``help()`` and editors show it); Python itself would
refuse a misspelt one with "unexpected keyword argument" and no more.
:func:`keywords` wraps a function to refuse it first, naming the closest
parameter (``sorces`` → ``sources``) and, for the names scipy.sparse.csgraph
and networkx give the same options, ours (``indices`` → ``sources``).
"""

from __future__ import annotations

import difflib
import functools
import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

# Other libraries' names of our options: name -> (whose name, [(the
# parameters a function must take for the suggestion, how to write it)]);
# the first whose parameters the function takes is suggested.
ALIASES: Dict[str, Tuple[str, List[Tuple[Tuple[str, ...], str]]]] = {
    "indices": ("scipy.sparse.csgraph's", [(("sources",), "sources="), (("source",), "the source argument")]),
    "limit": ("scipy.sparse.csgraph's", [(("cutoff",), "cutoff=")]),
    "min_only": ("scipy.sparse.csgraph's", [(("sources", "layout"), 'layout="nearest"'),
                                            ((), 'pathctl.apsp(..., sources=..., layout="nearest")')]),
    "return_predecessors": ("scipy.sparse.csgraph's", [(("with_predecessors",), "with_predecessors=True")]),
    "method": ("scipy.sparse.csgraph's and networkx's", [(("algorithm",), "algorithm=")]),
    "target": ("networkx's", [(("targets",), "targets=[...]")]),
    "source": ("networkx's", [(("sources",), "sources=[...]")]),
}


def suggestion(name: str, accepted: List[str]) -> Optional[str]:
    """What to write instead of keyword ``name``, given the ``accepted``
    ones: ours for another library's name, else the closest spelling;
    None where nothing is close."""
    alias = ALIASES.get(name)
    if alias is not None:
        whose, ours = alias
        for needs, written in ours:
            if all(param in accepted for param in needs):
                return f"{written}? {name} is {whose} name"
    close = difflib.get_close_matches(name, accepted, n=1, cutoff=0.6)
    if close:
        return f"{close[0]}=?"
    return None


def unknown_keywords(func_name: str, given: List[str], accepted: List[str]) -> TypeError:
    """The TypeError for keywords ``given`` that ``func_name`` does not take."""
    parts = []
    for name in given:
        hint = suggestion(name, accepted)
        parts.append(f"{name!r}" + (f" (did you mean {hint})" if hint else ""))
    noun = "argument" if len(given) == 1 else "arguments"
    return TypeError(f"{func_name}() got an unexpected keyword {noun} {', '.join(parts)}; "
                     f"help({func_name}) lists them")


def keywords(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func``, refusing unknown keywords with :func:`unknown_keywords`
    before it runs. The signature seen by ``inspect.signature`` is
    ``func``'s own (through ``__wrapped__``)."""
    params = inspect.signature(func).parameters
    accepted = [n for n, p in params.items()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    known = frozenset(accepted)
    name = f"pathctl.{func.__name__}"

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if not known.issuperset(kwargs):
            raise unknown_keywords(name, [k for k in kwargs if k not in known], accepted)
        return func(*args, **kwargs)

    return checked


# The options every local entry point documents, appended to its docstring.
OPTIONS_DOC = """
    Narrower questions (the CLI's flags of the same names):

    targets
        Ids (a list, array or Series): only those columns of the answer, in
        that order (``matrix`` becomes the sources × targets matrix).
    cutoff
        A distance: longer ones count as unreachable.
    k
        Per source the ``k`` nearest other vertices (ties by vertex order),
        pairs with a ``rank`` column.
    reverse
        Distances along incoming arcs: rows (source s, target v, d(v → s)).
    with_paths
        A ``path`` column (list of ids) on pairs; bounded output only.

    The edges:

    directed
        False reads each row as both directions (the CLI's
        ``--undirected``); an undirected networkx graph is undirected
        whatever it says.
    weight
        For a networkx graph, the edge attribute that holds the weight
        (``"weight"``, as networkx; 1 where an edge lacks it), or None for
        hop counts. Tables name their weight column with ``weight_col``.
    src_col, dst_col, weight_col
        Column names (default src, dst, weight; without a weight column a
        lone other numeric column is the weight, said in a UserWarning).
    unweighted
        Count hops, whatever ``weight_col`` says.
    vertices
        Ids added to those of the edges (isolated vertices exist only
        through it; the CLI's ``--vertices``). A scipy or networkx graph
        brings its own.
    input_format
        For a path whose extension does not say (parquet, arrow, arrows,
        csv, tsv, gr).

    Before and while it runs:

    dry_run
        True: the binary reads the graph and checks the request (an
        unknown source is the same error), computes nothing and writes
        nothing, and the call returns a :class:`pathctl.DryRun` of what
        ``pathctl run --dry-run`` reports: vertices, arcs, sources,
        targets, layout, dist_type (the array's dtype for
        distance_matrix), rows, output_bytes, engine and algorithm.
    progress
        (apsp, stream, distance_matrix) True shows the run's progress:
        a bar of sources done where tqdm is installed
        (``pip install 'pathctl[progress]'``; a widget in notebooks, a
        text bar in terminals), else a line logged at INFO on the
        ``pathctl`` logger at most every 5 s (for Airflow, cron, CI:
        ``logging.basicConfig(level=logging.INFO)`` shows them). Default
        False: nothing is shown, as numpy and scipy show nothing.

    The engine:

    engine
        auto, cpu or gpu (``pathctl.info()`` says which run here).
    dist_type
        The distance type (int32, int64, float32, float64) instead of the
        one chosen from the weights.
    delta
        Bucket width of ``algorithm="delta"``.
    threads
        CPU threads (default all).
    mem
        The block planner's budget in bytes.
    devices
        GPUs to run on, as the CLI's ``--devices`` (``"0,1"``).
    binary
        The pathctl executable (default the one a wheel bundles, then
        $PATHCTL_BIN, then PATH).
    env
        Extra environment variables for the process (a dict).

    An unknown keyword is a TypeError that names the closest one
    (``sorces`` → ``sources``) and ours for scipy's and networkx's names
    (``indices`` → ``sources``, ``limit`` → ``cutoff``, ``min_only`` →
    ``layout="nearest"``, ``return_predecessors`` → ``with_predecessors``).
"""
