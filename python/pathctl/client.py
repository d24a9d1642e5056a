"""A client of the ``pathctl serve`` Arrow Flight service."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterable, List, Optional, Union

import pyarrow as pa

from . import _errors
from ._checks import check_flags, id_list
from ._inputs import as_reader


def connect(uri: str, *, token: Optional[str] = None,
            tls_root_certs: Optional[Union[str, bytes]] = None,
            user: str = "pathctl") -> "Client":
    """Connect to a ``pathctl serve`` endpoint.

    ``uri`` is ``grpc://host:port`` (``grpc+tls://`` for TLS; a bare
    ``host:port`` means ``grpc://``). ``token`` is the server's auth token,
    sent as the password of a basic-auth handshake whose bearer token then
    authorizes every call; ``user`` is the (ignored) user name.
    ``tls_root_certs`` is the PEM of the CA that signed the server's
    certificate, as bytes or as a path to a PEM file.

    Raises AuthenticationError for a wrong token and ServiceUnavailableError
    when the server cannot be reached during the handshake.
    """
    return Client(uri, token=token, tls_root_certs=tls_root_certs, user=user)


# Bytes of the flow-control window each Flight stream starts with (16 MiB).
_STREAM_WINDOW = 16 << 20


class Client:
    """A connection to a ``pathctl serve`` endpoint; see :func:`connect`.

    Graphs are uploaded once under a name and queried many times. Every
    method raises a :class:`PathctlError` subclass on failure, carrying the
    server's message: InvalidInputError (INVALID_ARGUMENT), NotFoundError
    (an unknown graph), NegativeWeightError / NegativeCycleError,
    EngineUnavailableError, ResourceExhaustedError (a server limit),
    AuthenticationError.
    """

    def __init__(self, uri: str, *, token: Optional[str] = None,
                 tls_root_certs: Optional[Union[str, bytes]] = None, user: str = "pathctl"):
        from pyarrow import flight

        self._flight = flight
        if "://" not in uri:
            uri = "grpc://" + uri
        # The flow-control window granted to each result stream: gRPC starts
        # at 64 KiB and grows it only as its estimator learns; a distance
        # matrix is a few large messages (the server's own windows are the
        # same, flight/transport.go).
        kwargs: Dict[str, Any] = {"generic_options": [("grpc.http2.lookahead_bytes", _STREAM_WINDOW)]}
        if tls_root_certs is not None:
            if isinstance(tls_root_certs, str) and not tls_root_certs.lstrip().startswith("-----BEGIN"):
                with open(tls_root_certs, "rb") as f:
                    tls_root_certs = f.read()
            elif isinstance(tls_root_certs, str):
                tls_root_certs = tls_root_certs.encode()
            kwargs["tls_root_certs"] = tls_root_certs
        self.uri = uri
        self._user, self._token = user, token
        try:
            self._client = flight.FlightClient(uri, **kwargs)
            self._login()
        except (pa.ArrowException, OSError) as exc:
            raise _errors.from_flight(exc) from exc

    def _login(self) -> None:
        """Log in with the token (if any): the session's bearer header goes
        with every later call."""
        headers: List = []
        if self._token is not None:
            headers.append(self._client.authenticate_basic_token(self._user, self._token))
        self._options = self._flight.FlightCallOptions(headers=headers)

    def _call(self, call):
        """Run ``call()``. Sessions expire (``pathctl serve --session-ttl``):
        on UNAUTHENTICATED with a token configured, log in again once and
        retry."""
        try:
            return call()
        except self._flight.FlightUnauthenticatedError:
            if self._token is None:
                raise
        self._login()
        return call()

    # --- context management -------------------------------------------------

    def close(self) -> None:
        """Close the connection."""
        self._client.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"pathctl.Client({self.uri!r})"

    # --- graphs -------------------------------------------------------------

    def upload(self, name: str, edges: Any, *, src_col: Optional[str] = None,
               dst_col: Optional[str] = None, weight_col: Optional[str] = None,
               directed: bool = True, unweighted: bool = False,
               dist_type: Optional[str] = None) -> Dict[str, Any]:
        """Store ``edges`` on the server as graph ``name`` (replacing one of
        that name). ``edges`` is anything :func:`pathctl.apsp` takes (a path
        is read here and streamed). The server validates the graph as the
        CLI does. Returns what the server reports about the stored graph
        (vertex and edge counts …), or an empty dict if it reports nothing.
        After an expired session it logs in again and sends ``edges`` again,
        unless they are a reader or iterator of batches, which is read once.
        """
        check_flags(directed=directed, unweighted=unweighted)
        id_columns = (src_col or "src", dst_col or "dst")
        readers = [as_reader(edges, id_columns)]  # bad input is refused here, before any call
        command: Dict[str, Any] = {"graph": name}
        for key, value in (("src_col", src_col), ("dst_col", dst_col),
                           ("weight_col", weight_col), ("dist_type", dist_type)):
            if value is not None:
                command[key] = value
        if not directed:
            command["directed"] = False
        if unweighted:
            command["unweighted"] = True
        if isinstance(edges, (pa.Table, pa.RecordBatch)):
            # The size said ahead: the server reserves its memory before
            # the batches and lets uploads that do not fit together take
            # turns, where they would otherwise grow side by side until
            # one is refused.
            command["expect"] = {"rows": edges.num_rows, "bytes": edges.nbytes}
        descriptor = self._flight.FlightDescriptor.for_command(json.dumps(command).encode())

        def put():
            reader = readers.pop() if readers else as_reader(edges, id_columns)
            writer, metadata_reader = self._client.do_put(descriptor, reader.schema, self._options)
            try:
                for batch in reader:
                    writer.write_batch(batch)
                writer.done_writing()
                return metadata_reader.read()
            finally:
                writer.close()

        # A reader or iterator of batches is read once: it is not sent again.
        once = isinstance(edges, pa.RecordBatchReader) or hasattr(edges, "__next__")
        try:
            reply = put() if once else self._call(put)
        except (pa.ArrowException, OSError) as exc:
            raise _errors.from_flight(exc) from exc
        if reply is None:
            return {}
        try:
            return json.loads(bytes(reply).decode())
        except ValueError:
            return {"reply": bytes(reply).decode("utf-8", "replace")}

    def graphs(self) -> List[Dict[str, Any]]:
        """The stored graphs: one dict each with ``name`` and ``edges``,
        plus what the server puts in the listing's metadata (vertices,
        directed, weight type …)."""
        out = []
        try:
            for info in self._call(lambda: list(self._client.list_flights(options=self._options))):
                entry: Dict[str, Any] = {}
                meta = getattr(info, "app_metadata", b"") or b""
                if meta:
                    try:
                        entry.update(json.loads(bytes(meta).decode()))
                    except ValueError:
                        pass
                path = [p.decode() if isinstance(p, bytes) else p for p in (info.descriptor.path or [])]
                entry["name"] = path[-1] if path else entry.get("name")
                if info.total_records is not None and info.total_records >= 0:
                    entry.setdefault("edges", info.total_records)
                out.append(entry)
        except (pa.ArrowException, OSError) as exc:
            raise _errors.from_flight(exc) from exc
        return sorted(out, key=lambda e: str(e.get("name")))

    def drop(self, name: str) -> None:
        """Delete graph ``name``; NotFoundError if there is none."""
        self._action("drop", name.encode())

    def info(self) -> Dict[str, Any]:
        """The server's version and engines (what ``pathctl info --json`` says)."""
        results = self._action("info", b"")
        for body in results:
            if body:
                return json.loads(body.decode())
        return {}

    def _action(self, kind: str, body: bytes) -> List[bytes]:
        try:
            return self._call(lambda: [r.body.to_pybytes() for r in
                                       self._client.do_action(self._flight.Action(kind, body), self._options)])
        except (pa.ArrowException, OSError) as exc:
            raise _errors.from_flight(exc) from exc

    # --- queries ------------------------------------------------------------

    def apsp(self, name: str, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
             layout: str = "pairs", with_predecessors: bool = False, engine: str = "auto",
             delta: Optional[float] = None, targets: Optional[Iterable[Any]] = None,
             cutoff: Optional[float] = None, k: Optional[int] = None,
             reverse: bool = False, with_paths: bool = False) -> pa.Table:
        """Shortest paths on stored graph ``name``; arguments and result as
        :func:`pathctl.apsp` (the upload fixed columns and direction), with
        the ticket keys ``targets``, ``cutoff``, ``k``, ``reverse`` and
        ``with_paths``."""
        reader = self._get(name, algorithm, sources, layout, with_predecessors, engine, delta,
                           _narrowing(targets, cutoff, k, reverse, with_paths))
        try:
            return reader.read_all()
        except (pa.ArrowException, OSError) as exc:
            raise _errors.from_flight(exc) from exc

    def sssp(self, name: str, source: Any, **kwargs: Any) -> pa.Table:
        """Shortest paths from one source of stored graph ``name``."""
        return self.apsp(name, sources=[source], **kwargs)

    def bfs(self, name: str, source: Any, **kwargs: Any) -> pa.Table:
        """Hop counts from one source of stored graph ``name``."""
        return self.apsp(name, sources=[source], algorithm="bfs", **kwargs)

    def stream(self, name: str, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
               layout: str = "pairs", with_predecessors: bool = False, engine: str = "auto",
               delta: Optional[float] = None, targets: Optional[Iterable[Any]] = None,
               cutoff: Optional[float] = None, k: Optional[int] = None,
               reverse: bool = False, with_paths: bool = False) -> pa.RecordBatchReader:
        """Like :meth:`apsp`, but returns a RecordBatchReader that reads the
        result as the server sends it; a failure part way is raised by the
        read that reaches it, as a PathctlError."""
        reader = self._get(name, algorithm, sources, layout, with_predecessors, engine, delta,
                           _narrowing(targets, cutoff, k, reverse, with_paths))
        return pa.RecordBatchReader.from_batches(reader.schema, _FlightBatches(reader))

    def schema(self, name: str, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
               layout: str = "pairs", with_predecessors: bool = False, engine: str = "auto",
               targets: Optional[Iterable[Any]] = None, cutoff: Optional[float] = None,
               k: Optional[int] = None, reverse: bool = False,
               with_paths: bool = False) -> pa.Schema:
        """The schema a query would return, without running it."""
        query = _query(name, algorithm, sources, layout, with_predecessors, engine, None,
                       _narrowing(targets, cutoff, k, reverse, with_paths))
        descriptor = self._flight.FlightDescriptor.for_command(query)
        try:
            return self._call(lambda: self._client.get_flight_info(descriptor, self._options).schema)
        except (pa.ArrowException, OSError) as exc:
            raise _errors.from_flight(exc) from exc

    def _get(self, name, algorithm, sources, layout, with_predecessors, engine, delta, narrowing):
        ticket = self._flight.Ticket(_query(name, algorithm, sources, layout, with_predecessors, engine,
                                            delta, narrowing))

        def get():
            reader = self._client.do_get(ticket, self._options)
            reader.schema  # the first message: errors before the schema surface here
            return reader

        try:
            return self._call(get)
        except (pa.ArrowException, OSError) as exc:
            raise _errors.from_flight(exc) from exc


def _ids(name: str, ids: Iterable[Any]) -> List[Any]:
    """The ids of ``sources`` or ``targets`` for a ticket: integers as
    numbers, everything else as its string, verbatim (a single id is
    refused with a TypeError: they are lists)."""
    return [s if isinstance(s, int) and not isinstance(s, bool) else str(s) for s in id_list(name, ids)]


def _narrowing(targets, cutoff, k, reverse=False, with_paths=False) -> Dict[str, Any]:
    """The ticket keys of a query narrower than all pairs: targets, cutoff,
    k, reverse and with_paths."""
    from ._local import check_narrowing

    check_flags(reverse=reverse, with_paths=with_paths)
    check_narrowing(cutoff, k)
    keys: Dict[str, Any] = {}
    if targets is not None:
        keys["targets"] = _ids("targets", targets)
    if cutoff is not None:
        cutoff = float(cutoff)
        if math.isnan(cutoff) or cutoff == -math.inf:
            # JSON has no NaN or infinity: refused here, in the server's words.
            raise _errors.UsageError(f"cutoff={cutoff!r}: the cutoff is a distance of 0 or more")
        if cutoff != math.inf:  # an infinite cutoff is none: the key stays out
            keys["cutoff"] = cutoff
    if k is not None:
        keys["k"] = int(k)
    if reverse:
        keys["reverse"] = True
    if with_paths:
        keys["with_paths"] = True
    return keys


def _query(name, algorithm, sources, layout, with_predecessors, engine, delta, narrowing=None) -> bytes:
    check_flags(with_predecessors=with_predecessors)
    query: Dict[str, Any] = {"graph": name, "algorithm": algorithm, "layout": layout,
                             "with_predecessors": bool(with_predecessors), "engine": engine}
    if sources is not None:
        query["sources"] = _ids("sources", sources)
    if delta is not None:
        query["delta"] = delta
    query.update(narrowing or {})
    return json.dumps(query).encode()


class _FlightBatches:
    """Iterator over a Flight stream that turns Flight errors into ours."""

    def __init__(self, reader):
        self._reader = reader

    def __iter__(self):
        return self

    def __next__(self) -> pa.RecordBatch:
        try:
            chunk = self._reader.read_chunk()
        except StopIteration:
            raise
        except (pa.ArrowException, OSError) as exc:
            raise _errors.from_flight(exc) from exc
        return chunk.data
