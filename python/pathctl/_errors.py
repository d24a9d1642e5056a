"""Exceptions raised by pathctl, and the mappings from the binary's exit
statuses and the Flight service's gRPC statuses onto them."""

from __future__ import annotations

import re
import signal
from typing import Mapping, Optional

# The pathctl binary's exit statuses (the CLI contract).
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_UNAVAILABLE = 4
EXIT_NEGATIVE = 5
EXIT_INTERRUPTED = 130


class PathctlError(Exception):
    """Base class of every error pathctl raises.

    ``message`` is the engine's own message (the binary's ``pathctl: ...``
    stderr line without its prefix, or the Flight status message);
    ``exit_code`` is the binary's exit status when the error came from a
    local run (None over Flight); ``stderr`` holds the binary's whole stderr.
    """

    def __init__(self, message: str, *, exit_code: Optional[int] = None, stderr: str = ""):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.stderr = stderr


class InvalidInputError(PathctlError, ValueError):
    """Bad input data or request: a missing or mistyped column, a null id, a
    non-finite weight, a corrupt file (exit 3), an unknown source or target
    (exit 2); gRPC INVALID_ARGUMENT."""


class UsageError(InvalidInputError):
    """The binary refused its arguments: an unknown algorithm, layout or
    engine name, or an option combination it cannot run (exit 2)."""


class NotFoundError(PathctlError, LookupError):
    """A graph (Flight) or an input file that does not exist (gRPC NOT_FOUND)."""


class EngineUnavailableError(PathctlError, RuntimeError):
    """The engine asked for cannot run here, e.g. ``engine="gpu"`` without a
    GPU (exit 4)."""


class NegativeWeightError(PathctlError, ValueError):
    """A negative weight under an algorithm that needs non-negative weights
    (exit 5, gRPC FAILED_PRECONDITION); use ``algorithm="bellman-ford"``."""


class NegativeCycleError(NegativeWeightError):
    """A negative cycle is reachable from a source (exit 5); the message
    names a vertex on it."""


class InputNotFoundError(InvalidInputError, NotFoundError):
    """An input file that does not exist: bad input (exit 3) and not found."""


class BinaryNotFoundError(PathctlError, FileNotFoundError):
    """No pathctl binary was found: none bundled with the package, none at
    $PATHCTL_BIN, none on PATH."""


class AuthenticationError(PathctlError, PermissionError):
    """The Flight service refused the credentials (gRPC UNAUTHENTICATED or
    PERMISSION_DENIED)."""


class ResourceExhaustedError(PathctlError):
    """A server limit was exceeded (gRPC RESOURCE_EXHAUSTED); the message
    names the limit."""


class CancelledError(PathctlError):
    """The run was interrupted or cancelled (exit 130, gRPC CANCELLED)."""


class ServiceUnavailableError(PathctlError, ConnectionError):
    """The Flight service could not be reached."""


def _negative(message: str, **kw) -> PathctlError:
    if "cycle" in message.lower():
        return NegativeCycleError(message, **kw)
    return NegativeWeightError(message, **kw)


def engine_message(stderr: str) -> str:
    """The binary's error line (the last one starting ``pathctl: ``) without
    its prefix, or the last non-empty stderr line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ln.startswith("pathctl: ") and not NOTE.match(ln):
            return ln[len("pathctl: "):]
    return lines[-1] if lines else ""


# A one-line note or warning of the binary on stderr (surfaced as a
# UserWarning): "pathctl: warning: ..." or "pathctl: note: ...".
NOTE = re.compile(r"^pathctl: (?:warning|note): ")

# Package names the engine's messages are wrapped with ("arrowio: ...").
_PACKAGE_PREFIX = re.compile(r"(^|: )(?:arrowio|graph|pipeline|cpu|flight|invalid request): ")

# The CLI's flags and the Python keyword that says the same thing. A flag
# that takes a value becomes ``name=value``; a switch becomes its keyword
# with the value that turns it on.
_VALUE_KEYWORDS = {
    "algo": "algorithm",
    "weight-col": "weight_col",
    "src-col": "src_col",
    "dst-col": "dst_col",
    "dist-type": "dist_type",
    "input-format": "input_format",
    "layout": "layout",
    "engine": "engine",
    "source": "source",
    "sources": "sources",
    "sources-file": "sources",
    "vertices": "vertices",
    "delta": "delta",
    "threads": "threads",
    "mem": "mem",
    "targets": "targets",
    "targets-file": "targets",
    "cutoff": "cutoff",
    "k-nearest": "k",
    "matrix-type": "dtype",
}
_SWITCH_KEYWORDS = {
    "unweighted": "unweighted=True",
    "undirected": "directed=False",
    "with-predecessors": "with_predecessors=True",
    "with-paths": "with_paths=True",
    "reverse": "reverse=True",
}
_LEADING_FLAG = re.compile(r"^--([a-z][a-z0-9-]*): (.*)$", re.DOTALL)
# --flag, then perhaps its value: "=v", " v" or ' "v"' (a bare token ends
# before whitespace, a comma, a semicolon, a colon, a closing parenthesis or
# a sentence's final full stop). Whether the token is a value or the next
# word of the sentence is for _is_value to say.
_FLAG = re.compile(
    r'--(?P<flag>[a-z][a-z0-9-]*)'
    r'(?:(?P<sep>[ =])(?P<value>"[^"]*"|(?!--)[^\s,;:)]+?)(?=[\s,;:)]|\.(?:\s|$)|$))?')
# Bare words that are values of the CLI's flags (algorithms, layouts,
# engines, distance types, formats); any other plain lowercase word after a
# flag is the sentence going on ("--weight-col and --unweighted ...").
_VALUE_WORDS = frozenset(
    "dijkstra delta edge bfs bfs-level bellman-ford auto pairs matrix stats nearest cpu gpu "
    "int32 int64 float32 float64 csv tsv parquet arrow arrows gr".split())
# Go's spelling of the float values that are not numbers (``--cutoff NaN``)
# and Python's (``cutoff=nan``).
_FLOAT_WORDS = {"NaN": "nan", "Inf": "inf", "+Inf": "inf", "-Inf": "-inf"}


def _is_value(sep: str, token: str) -> bool:
    if sep == "=" or token.startswith('"') or token in _VALUE_WORDS or token in _FLOAT_WORDS:
        return True
    if token[0].isdigit() or token[0] == "-" or token.isupper():  # 1GiB, -1; NAME, FILE
        return True
    return not token.isalpha()  # a path, a hyphenated name: not an English word


def _python_flag(m: "re.Match[str]") -> str:
    flag, sep, value = m.group("flag"), m.group("sep"), m.group("value")
    rest = ""
    if value is not None and not _is_value(sep, value):
        rest, value = sep + value, None
    if flag in _SWITCH_KEYWORDS:
        return _SWITCH_KEYWORDS[flag] + (sep + value if value is not None else "") + rest
    if flag in _VALUE_KEYWORDS:
        name = _VALUE_KEYWORDS[flag]
        if value is None:
            return name + rest
        if value in _FLOAT_WORDS:
            return f"{name}={_FLOAT_WORDS[value]}"
        if value.startswith('"') or value[0].isdigit() or value[0] == "-" or value.isupper():
            return f"{name}={value}"  # quoted, a number, or a placeholder such as NAME
        return f'{name}="{value}"'
    return m.group(0)


# An id that is not a vertex, as the CLI's line says it (the flag, then
# the id) and as the Flight server's pipeline error does (the role, the id,
# then the lookup naming the id again).
_UNKNOWN_ID_CLI = re.compile(
    r'^--(?P<flag>sources|targets)(?:-file [^:]+)?: (?P<id>"(?:[^"\\]|\\.)*") is not (?P<rest>a vertex of the graph)')
_UNKNOWN_ID_SERVER = re.compile(
    r'(?P<role>source|unknown target) (?P<id>"(?:[^"\\]|\\.)*"): vertex (?P=id) '
    r'is not (?P<rest>in the graph|a valid [a-z0-9]+ id|an? [a-z0-9]+ id)')
# A Flight ticket key and its value at the start of a segment ('"k" 0: '),
# which the CLI's line gives as its flag ("--k-nearest 0: ").
_MATRIX_TYPE = re.compile(r'(^|: )matrix type (?P<type>[a-z0-9]+): ')
_TICKET_KEY = re.compile(r'(^|: )"(?P<key>k|cutoff)" (?P<value>[^\s:]+): ')


def _one_wording(msg: str) -> str:
    """``msg`` in the words a local run and a Flight call share: an unknown
    id is ``source "7" is not a vertex of the graph`` (or ``target``), and a
    bad ticket value is ``k=0: k is 1 or more``, as ``k=0`` is the
    keyword the user passed either way."""
    m = _UNKNOWN_ID_CLI.match(msg)
    if m:
        msg = f'{m["flag"].rstrip("s")} {m["id"]} is not {m["rest"]}' + msg[m.end():]

    def server(m: "re.Match[str]") -> str:
        rest = m["rest"]
        if rest == "in the graph":
            rest = "a vertex of the graph"
        elif rest.endswith(" id"):
            rest = "a vertex of the graph, whose ids are " + rest[:-len(" id")].split()[-1]
        return f'{m["role"].replace("unknown ", "")} {m["id"]} is not {rest}'

    msg = _UNKNOWN_ID_SERVER.sub(server, msg)
    # The server's "matrix type float32: ..." is the CLI's "--matrix-type
    # float32: ...", which the user passed as dtype=.
    msg = _MATRIX_TYPE.sub(lambda m: f'{m[1]}dtype="{m["type"]}": ', msg)
    msg = _TICKET_KEY.sub(lambda m: f'{m[1]}{m["key"]}={_FLOAT_WORDS.get(m["value"], m["value"])}: ', msg)
    # The CLI's placeholder of --k-nearest K is k to a Python user.
    return msg.replace(": K is 1 or more", ": k is 1 or more")


def python_message(message: str, names: Optional[Mapping[str, str]] = None) -> str:
    """The engine's message as a Python user reads it: without the package
    prefixes of the Go code (``arrowio: ``), the name ``stdin`` for edges
    handed over from Python, or the CLI's flag names (``use --algo
    bellman-ford`` says ``use algorithm="bellman-ford"``). ``names`` maps
    paths the package made up (``/dev/fd/4`` of the edges' memfd) to what
    the user calls them (``edges``)."""
    msg = message.strip()
    for path, name in (names or {}).items():
        # Whole paths only: /dev/fd/5 is not the start of /dev/fd/57.
        msg = re.sub(re.escape(path) + r"(?!\d)", lambda _: name, msg)
    while True:
        stripped = _PACKAGE_PREFIX.sub(r"\1", msg)
        if stripped == msg:
            break
        msg = stripped
    if msg.startswith("stdin: "):
        msg = "edges: " + msg[len("stdin: "):]
    msg = msg.replace(": stdin: ", ": edges: ")
    msg = _one_wording(msg)
    lead = _LEADING_FLAG.match(msg)
    if lead and lead.group(1) in _VALUE_KEYWORDS:
        keyword, rest = _VALUE_KEYWORDS[lead.group(1)], lead.group(2)
        # "--algo: unknown algorithm ..." and "--sources: source "7": ..."
        # name it already.
        if keyword in rest or rest.startswith(keyword.rstrip("s") + ' "'):
            msg = rest
    return _FLAG.sub(_python_flag, msg)


# The first line of a Go runtime crash on stderr: a panic no one recovered,
# a fatal runtime error (out of memory, concurrent map writes) or a signal
# the runtime turned into a crash ("SIGSEGV: segmentation violation";
# "SIGQUIT: quit" is someone's Ctrl-\). Goroutine dumps follow
# ("goroutine 1 [running]:"), and the exit status is 2, as for a usage error.
CRASH_LINE = re.compile(r"^(?:panic: |fatal error: |SIG[A-Z]+: )")
_GOROUTINE_LINE = re.compile(r"^goroutine \d+ \[", re.MULTILINE)

# Signals that mean the process crashed, rather than was stopped by someone
# (SIGKILL, SIGTERM, SIGINT: CancelledError).
_CRASH_SIGNALS = frozenset(getattr(signal, name) for name in
                           ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT", "SIGSYS", "SIGTRAP")
                           if hasattr(signal, name))

# Characters of a crash's first line kept in the message.
_CRASH_SHOWN = 300


def crash_line(stderr: str) -> Optional[str]:
    """The first line of a Go crash report in ``stderr`` (``panic: ...``,
    ``fatal error: ...``), or None."""
    for ln in stderr.splitlines():
        if CRASH_LINE.match(ln):
            return ln.strip()
    return None


def _crashed(code: int, stderr: str, first: Optional[str], kw: dict) -> Optional[PathctlError]:
    """The error of a binary that crashed (a Go panic or fatal runtime
    error, or death by a signal such as SIGSEGV), or None. ``first`` is the
    crash's first line where the caller kept it (a long dump may have
    pushed it out of ``stderr``). A crash is the engine's failure whatever
    its exit status: a PathctlError with the status and the crash's first
    line, not a UsageError worded by the last line of the stack dump."""
    first = first or crash_line(stderr)
    signalled = code < 0 and -code in _CRASH_SIGNALS
    if first is None and not signalled and not _GOROUTINE_LINE.search(stderr):
        return None
    if first is not None and first.startswith("SIGQUIT: "):
        return CancelledError(f"pathctl was stopped by SIGQUIT (exit status {code})", **kw)
    if code < 0:
        how = f"pathctl crashed: killed by signal {-code} ({signal.Signals(-code).name})"
    else:
        how = f"pathctl crashed (exit status {code})"
    if first:
        if len(first) > _CRASH_SHOWN:
            first = first[:_CRASH_SHOWN] + "..."
        how += f": {first}"
    return PathctlError(how + " (a bug in pathctl: e.stderr holds the stack)", **kw)


def from_exit(code: int, stderr: str, names: Optional[Mapping[str, str]] = None,
              crash: Optional[str] = None) -> PathctlError:
    """The exception for a binary that exited with ``code`` (``names`` as
    for :func:`python_message`). A binary that crashed is a PathctlError
    naming the status and the crash's first line (``crash``, where the
    caller kept it apart from a cut ``stderr``)."""
    kw = {"exit_code": code, "stderr": stderr}
    crashed = _crashed(code, stderr, crash, kw)
    if crashed is not None:
        return crashed
    msg = python_message(engine_message(stderr), names) or f"pathctl exited with status {code}"
    if code in (EXIT_USAGE, EXIT_BAD_INPUT) and _UNKNOWN_VERTEX.search(msg):
        # An unknown source is a fact about the data, whichever stage found it.
        return InvalidInputError(msg, **kw)
    if code == EXIT_USAGE:
        return UsageError(msg, **kw)
    if code == EXIT_BAD_INPUT:
        if re.search(r"no such file|not exist|not found", msg, re.IGNORECASE):
            return InputNotFoundError(msg, **kw)
        return InvalidInputError(msg, **kw)
    if code == EXIT_UNAVAILABLE:
        return EngineUnavailableError(msg, **kw)
    if code == EXIT_NEGATIVE:
        return _negative(msg, **kw)
    if code == EXIT_INTERRUPTED or code < 0:
        if code < 0:
            msg = f"pathctl was killed by signal {-code}" + (f": {msg}" if msg else "")
        return CancelledError(msg, **kw)
    return PathctlError(msg, **kw)


_UNKNOWN_VERTEX = re.compile(r"is not (?:in the graph|a vertex of the graph)")

_FLIGHT_PREFIX = re.compile(r"^(?:gRPC|Flight) returned [a-z ]+ error, with message: ", re.IGNORECASE)
_FLIGHT_DETAIL = re.compile(r"\.? (?:gRPC client debug context|Client context|Detail): .*$",
                            re.DOTALL | re.IGNORECASE)


def flight_message(exc: BaseException) -> str:
    """The server's message from a pyarrow.flight exception, without the
    prefix, gRPC debug context and detail pyarrow adds, in the words of
    :func:`python_message`."""
    msg = str(exc)
    msg = _FLIGHT_PREFIX.sub("", msg)
    msg = _FLIGHT_DETAIL.sub("", msg)
    # The server names its Flight calls; the user calls Client's methods.
    msg = _DO_PUT.sub(lambda m: f"client.upload({m[1]}, edges)", msg)
    msg = re.sub(r"\bListFlights\b", "client.graphs()", msg)
    return python_message(msg)


_DO_PUT = re.compile(r'DoPut to \["graphs", ("(?:[^"\\]|\\.)*")\]')


def from_flight(exc: BaseException) -> PathctlError:
    """The exception for an error raised by pyarrow.flight."""
    import pyarrow as pa
    from pyarrow import flight

    raw = str(exc)
    msg = flight_message(exc)
    low = raw.lower()
    if isinstance(exc, (flight.FlightUnauthenticatedError, flight.FlightUnauthorizedError)):
        return AuthenticationError(msg)
    if isinstance(exc, flight.FlightCancelledError):
        return CancelledError(msg)
    if isinstance(exc, flight.FlightUnavailableError):
        if "engine" in low or "gpu" in low:
            return EngineUnavailableError(msg)
        return ServiceUnavailableError(msg)
    if isinstance(exc, (KeyError, getattr(pa, "ArrowKeyError", KeyError))) or "not found error" in low:
        return NotFoundError(msg)
    if "resource exhausted" in low:
        return ResourceExhaustedError(msg)
    if "precondition" in low:
        if "engine" in low and "negative" not in low:
            return EngineUnavailableError(msg)
        return _negative(msg)
    if "negative" in low and ("weight" in low or "cycle" in low):
        return _negative(msg)
    if isinstance(exc, pa.ArrowInvalid) or "invalid argument" in low:
        return InvalidInputError(msg)
    return PathctlError(msg)


# Tracebacks name the classes as users import them: pathctl.InvalidInputError.
for _cls in (PathctlError, InvalidInputError, UsageError, NotFoundError, EngineUnavailableError,
             NegativeWeightError, NegativeCycleError, InputNotFoundError, BinaryNotFoundError,
             AuthenticationError, ResourceExhaustedError, CancelledError, ServiceUnavailableError):
    _cls.__module__ = "pathctl"
del _cls
