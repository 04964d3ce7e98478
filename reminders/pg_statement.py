"""One statement on Django's PostgreSQL connection (in autocommit) sent without waiting for its
answer, and that answer read later, with psycopg's libpq wrapper: between the two, the caller can
do other work (a chunk's SMTP exchange), but must not use the connection. Each statement is
prepared on the connection the first time it goes there.
"""

from __future__ import annotations

import functools
import itertools
import re
import select
import weakref
from datetime import datetime
from typing import Any

import psycopg
from psycopg import pq


def _wait(pgconn: pq.abc.PGconn, *, write: bool = False) -> None:
    """Until the socket can be read (or written). poll, not select: a worker holding many files
    gets a socket numbered past 1,023, which select() refuses."""
    fd = pgconn.socket
    if not hasattr(select, "poll"):  # Windows, whose select() takes any socket
        select.select([] if write else [fd], [fd] if write else [], [])
        return
    poller = select.poll()
    poller.register(fd, select.POLLOUT if write else select.POLLIN)
    poller.poll()


# The statements prepared on each libpq connection (a new connection prepares them again).
_prepared: weakref.WeakKeyDictionary[pq.abc.PGconn, set[bytes]] = weakref.WeakKeyDictionary()
_names = itertools.count(1)


@functools.cache
def _statement_name(sql: str) -> bytes:
    return f"reminders_statement_{next(_names)}".encode()


@functools.cache
def _numbered(sql: str) -> bytes:
    """`sql` with libpq's numbered placeholders ($1, $2, …) for its `%s`."""
    count = itertools.count(1)
    return re.sub("%s", lambda _: f"${next(count)}", sql).encode()


def _text(value: Any) -> bytes | None:
    """A parameter in PostgreSQL's text input form (the server infers its type)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, datetime):
        return value.isoformat().encode()
    return str(value).encode()


def _flush(pgconn: pq.abc.PGconn) -> None:
    while pgconn.flush():  # non-blocking connection: the rest once the socket takes it
        _wait(pgconn, write=True)


def _prepared_name(pgconn: pq.abc.PGconn, sql: str) -> bytes:
    """The name `sql` is prepared under on this connection, preparing it (one round trip) the
    first time: parsing and planning the claim cost the server as much as running it."""
    name = _statement_name(sql)
    prepared = _prepared.setdefault(pgconn, set())
    if name not in prepared:
        pgconn.send_prepare(name, _numbered(sql))
        _flush(pgconn)
        statement_answer(pgconn)
        prepared.add(name)
    return name


def statement_send(pgconn: pq.abc.PGconn, sql: str, params: list[Any]) -> None:
    """Send one statement (autocommitted on its own) without waiting for its answer. The values
    go as text parameters of the prepared statement (the server infers their types)."""
    name = _prepared_name(pgconn, sql)
    pgconn.send_query_prepared(name, [_text(value) for value in params])
    _flush(pgconn)


def statement_answer(pgconn: pq.abc.PGconn) -> list[str] | None:
    """The first row of the statement's answer as text, or None; raises its error."""
    row: list[str] | None = None
    error: pq.abc.PGresult | None = None
    while True:
        pgconn.consume_input()
        while pgconn.is_busy():
            _wait(pgconn)
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:
            break
        if result.status == pq.ExecStatus.FATAL_ERROR:
            error = result
        elif result.status == pq.ExecStatus.TUPLES_OK and result.ntuples:
            row = [(result.get_value(0, n) or b"").decode() for n in range(result.nfields)]
    if error is not None:
        sqlstate = (error.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()
        message = error.get_error_message().strip()
        raise (
            psycopg.errors.lookup(sqlstate)(message) if sqlstate else psycopg.DatabaseError(message)
        )
    return row
