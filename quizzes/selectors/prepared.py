"""ORM querysets compiled once per process, run as statements prepared once per connection.
Kept by issue 31's rule: without it the review pages missed 0.33 of the bare view (benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

# Values no real row holds: ids far below zero, dates a century before the first user.
_STAND_IN_INT = -900_000_000
_STAND_IN_DATE = datetime(1901, 1, 1, tzinfo=UTC)
_STAND_IN_DAY = date(1902, 1, 1)
_STAND_IN_DURATION = timedelta(microseconds=-900_000_000)
_SWAPPED = (int, datetime, date, timedelta)

Value = int | datetime | date | timedelta | list[int] | tuple[int, ...]
Fixed = str | bool | int | None
Converters = list[tuple[int, list[Any], Any]]


def _stand_ins(
    values: dict[str, Value], fixed: dict[str, Fixed]
) -> tuple[dict[str, Any], dict[Any, Any]]:
    """A stand-in for each value (a list gets one per element) and the map back; the fixed
    values pass through as they are."""
    stand_ins: dict[str, Any] = dict(fixed)
    back: dict[Any, Any] = {}
    for n, (name, value) in enumerate(sorted(values.items())):
        stand_in: Any
        if isinstance(value, datetime):
            stand_in = _STAND_IN_DATE + timedelta(days=n)
            back[stand_in] = value
        elif isinstance(value, date):
            stand_in = _STAND_IN_DAY + timedelta(days=n)
            back[stand_in] = value
        elif isinstance(value, timedelta):
            stand_in = _STAND_IN_DURATION - timedelta(microseconds=n)
            back[stand_in] = value
        elif isinstance(value, int):
            stand_in = _STAND_IN_INT - 1000 * n
            back[stand_in] = value
        else:
            stand_in = [_STAND_IN_INT - 1000 * n - 1 - i for i in range(len(value))]
            back.update(zip(stand_in, value, strict=True))
        stand_ins[name] = stand_in
    return stand_ins, back


def _shape(values: dict[str, Value], fixed: dict[str, Fixed]) -> tuple[Any, ...]:
    return tuple(
        (name, len(v) if isinstance(v, list | tuple) else type(v).__name__)
        for name, v in sorted(values.items())
    ) + tuple(sorted(fixed.items()))


class PreparedQuery:
    """`build(**values)` returns a `values_list` queryset; `rows(**values)` runs it.

    The queryset is built once per shape with stand-in values and its SQL kept; a request's values
    replace the stand-ins and are bound by PostgreSQL (other databases run the queryset as built).
    Ids, moments, dates and durations are swapped; values named in `fixed` shape the SQL itself (a
    time zone, a flag, a LIMIT) and are compiled in, one statement per value. Rows are what the
    queryset's `values_list` gives, after the fields' converters."""

    def __init__(self, build: Callable[..., QuerySet[Any]], *, fixed: tuple[str, ...] = ()) -> None:
        self._build = build
        self._fixed = fixed
        self._compiled: dict[tuple[Any, ...], tuple[str, tuple[Any, ...], Converters] | None] = {}

    def _split(self, values: dict[str, Any]) -> tuple[dict[str, Value], dict[str, Fixed]]:
        fixed = {name: values.pop(name) for name in self._fixed if name in values}
        return values, fixed

    def _compile(
        self, values: dict[str, Value], fixed: dict[str, Fixed]
    ) -> tuple[str, tuple[Any, ...], Converters] | None:
        shape = _shape(values, fixed)
        if shape not in self._compiled:
            stand_ins, _ = _stand_ins(values, fixed)
            compiler = self._build(**stand_ins).query.get_compiler(connection=connection)
            try:
                sql, params = compiler.as_sql()
            except EmptyResultSet:
                self._compiled[shape] = None
                return None
            expressions = [select[0] for select in compiler.select]
            converters = [
                (position, functions, expression)
                for position, (functions, expression) in compiler.get_converters(
                    expressions
                ).items()
            ]
            self._compiled[shape] = (sql, tuple(params), converters)
        return self._compiled[shape]

    def rows(self, **values: Any) -> list[tuple[Any, ...]]:
        if connection.vendor != "postgresql":
            return list(self._build(**values))
        swapped, fixed = self._split(values)
        compiled = self._compile(swapped, fixed)
        if compiled is None:
            return []
        sql, params, converters = compiled
        _, back = _stand_ins(swapped, fixed)
        bound = [back.get(p, p) if type(p) in _SWAPPED else p for p in params]
        return list(_converted(execute_prepared(sql, bound), converters))


def execute_prepared(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Run `sql` (with %s placeholders) on PostgreSQL with server-side binding, prepared once per
    connection; its rows as psycopg gives them (no field converters)."""
    import psycopg

    connection.ensure_connection()
    raw = connection.connection
    # Only server-side binding cursors (this one) prepare; Django's own cursors bind on the
    # client and never do, so this changes nothing for them.
    raw.prepare_threshold = 0
    # Django's own wrapper, so the statement is logged and counted like every query.
    cursor = connection._prepare_cursor(psycopg.Cursor(raw))  # type: ignore[attr-defined]
    with cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def _converted(
    rows: Iterable[tuple[Any, ...]], converters: Converters
) -> Iterable[tuple[Any, ...]]:
    if not converters:
        yield from rows
        return
    for row in rows:
        values = list(row)
        for position, functions, expression in converters:
            value = values[position]
            for function in functions:
                value = function(value, expression, connection)
            values[position] = value
        yield tuple(values)
