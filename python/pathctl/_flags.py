"""Translating the keywords of a local run into the binary's flags: the
layouts, the keyword → flag tables, the checks of the keywords' names and
types, and the flags of the options a run was given.

Apart from the process because the checks also run where no process is
started (the Flight client checks ``cutoff`` and ``k`` with
:func:`check_narrowing`).
"""

from __future__ import annotations

import numbers
from typing import Any, List, Mapping

import numpy as np

from . import _errors
from ._checks import check_flag, check_id_list

LAYOUTS = ("pairs", "matrix", "stats", "nearest", "betweenness", "edge-betweenness")


# Options every run accepts besides the positional ones, as (python name, flag).
_VALUE_FLAGS = {
    "src_col": "--src-col",
    "dst_col": "--dst-col",
    "weight_col": "--weight-col",
    "dist_type": "--dist-type",
    "delta": "--delta",
    "threads": "--threads",
    "mem": "--mem",
    "input_format": "--input-format",
    "cutoff": "--cutoff",
    "k": "--k-nearest",
    "devices": "--devices",
}
_BOOL_FLAGS = {"unweighted": "--unweighted", "reverse": "--reverse", "with_paths": "--with-paths"}
OPTION_NAMES = tuple(_VALUE_FLAGS) + tuple(_BOOL_FLAGS) + ("vertices", "binary", "env", "targets")


def check_options(options: Mapping[str, Any]) -> None:
    """Refuse unknown keywords, a switch that is not a bool (TypeError), a
    single id for ``targets`` or ``vertices`` (TypeError: they are lists)
    and a k or cutoff of the wrong type."""
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise TypeError(f"pathctl: unexpected keyword argument(s) {', '.join(unknown)} "
                        f"(column and tuning options are {', '.join(OPTION_NAMES)})")
    for name in _BOOL_FLAGS:
        if name in options:
            check_flag(name, options[name])
    for name in ("targets", "vertices"):
        check_id_list(name, options.get(name))
    check_narrowing(options.get("cutoff"), options.get("k"))


def check_narrowing(cutoff: Any, k: Any) -> None:
    """Refuse a ``cutoff`` that is not a number and a ``k`` that is not a
    whole number (True, 2.5, "3") before they reach the binary or a ticket,
    where they would be a parse error in the CLI's words or, over Flight,
    silently become 1 or 2. Their ranges (k of 1 or more, a cutoff of 0 or
    more) are the engine's to check."""
    if k is not None and (isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral)):
        raise _errors.UsageError(f"k={k!r}: k is a whole number of 1 or more")
    if cutoff is not None and (isinstance(cutoff, (bool, np.bool_)) or not isinstance(cutoff, numbers.Real)):
        raise _errors.UsageError(f"cutoff={cutoff!r}: the cutoff is a distance of 0 or more")


def option_flags(options: Mapping[str, Any]) -> List[str]:
    """The flags of the value and switch keywords in ``options``
    (_VALUE_FLAGS, then _BOOL_FLAGS), as the binary takes them."""
    args: List[str] = []
    for name, flag in _VALUE_FLAGS.items():
        value = options.get(name)
        if name == "weight_col" and options.get("unweighted"):
            # unweighted=True counts hops whatever weight_col says (the
            # CLI refuses the two flags together).
            continue
        if value is not None:
            args += [flag, str(value)]
    for name, flag in _BOOL_FLAGS.items():
        if options.get(name):
            args.append(flag)
    return args
