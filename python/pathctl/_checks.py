"""Type checks of the public keywords, before anything runs.

A switch (``directed``, ``with_predecessors`` ...) is a bool or a
numpy.bool_: ``directed=None`` or ``with_predecessors="no"`` would
otherwise be read by truth value and silently mean the opposite of what
was written. A list of ids (``sources``, ``targets``, ``vertices``) is an
iterable that is not itself an id: ``sources="12"`` would otherwise be
iterated into the sources "1" and "2", so a single id is refused with a
TypeError that shows how to write it as a list.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable, List, Optional

import numpy as np

# Characters of a value shown in a message: a long id would bury the
# message (and, over Flight, overflow the status).
_SHOWN = 60


def short_repr(value: Any) -> str:
    """repr(value), cut to a few dozen characters for a message."""
    text = repr(value)
    if len(text) <= _SHOWN:
        return text
    return text[:_SHOWN] + f"... ({len(text)} characters)"


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a bool; a TypeError naming ``name`` unless it is a bool
    or a numpy.bool_."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}={short_repr(value)}: {name} is True or False, "
                        f"not {type(value).__name__}")
    return bool(value)


def check_flags(**flags: Any) -> None:
    for name, value in flags.items():
        check_flag(name, value)


def _is_single_id(ids: Any) -> bool:
    if isinstance(ids, (str, bytes, bytearray, numbers.Number, np.generic)):
        return True
    if isinstance(ids, np.ndarray) and ids.ndim == 0:
        return True
    import pyarrow as pa

    return isinstance(ids, pa.Scalar)


def check_id_list(name: str, ids: Any) -> None:
    """Refuse (TypeError) an ``ids`` that is one id, or not iterable, where
    a list of ids is expected; None passes (every vertex)."""
    if ids is None:
        return
    if _is_single_id(ids):
        raise TypeError(f"{name}={short_repr(ids)}: {name} is a list of ids; for one id write "
                        f"{name}=[{short_repr(ids)}]")
    try:
        iter(ids)
    except TypeError:
        raise TypeError(f"{name}={short_repr(ids)}: {name} is a list of ids, "
                        f"not {type(ids).__name__}") from None


def id_list(name: str, ids: Optional[Iterable[Any]]) -> Optional[List[Any]]:
    """``ids`` checked by :func:`check_id_list`, as a list (None stays None)."""
    check_id_list(name, ids)
    return None if ids is None else list(ids)
