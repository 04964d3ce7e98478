"""Single-row writes built once per process and, on PostgreSQL, sent as one prepared statement.
Kept with prepared.py (issue 31): the grade's write and its log, as `save()` would write them."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import Field, Model

from quizzes.selectors.prepared import execute_prepared


def _quoted(name: str | None) -> str:
    return str(connection.ops.quote_name(str(name)))


@functools.cache
def _update_sql(model: type[Model], names: tuple[str, ...], vendor: str) -> str:
    meta = model._meta
    columns = ", ".join(f"{_quoted(meta.get_field(n).column)} = %s" for n in names)  # type: ignore[union-attr]
    # Only the model's own quoted names go into the text; every value is a parameter.
    return f"UPDATE {_quoted(meta.db_table)} SET {columns} WHERE {_quoted(meta.pk.column)} = %s"  # noqa: S608


def _fields(model: type[Model], names: Sequence[str]) -> list[Field[Any, Any]]:
    return [f for f in model._meta.concrete_fields if f.name in names]


@functools.cache
def _insert_sql(model: type[Model], vendor: str) -> tuple[str, tuple[str, ...]]:
    meta = model._meta
    fields = tuple(f.name for f in meta.concrete_fields if not f.primary_key)
    columns = ", ".join(_quoted(meta.get_field(n).column) for n in fields)  # type: ignore[union-attr]
    marks = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {_quoted(meta.db_table)} ({columns}) VALUES ({marks})"  # noqa: S608
    if connection.features.can_return_columns_from_insert:
        sql += f" RETURNING {_quoted(meta.pk.column)}"
    return sql, fields


def row_insert(obj: Model) -> None:
    """`obj.save(force_insert=True)` for a model with an automatic id (one INSERT); sets the
    id and marks the object saved."""
    sql, names = _insert_sql(type(obj), connection.vendor)
    fields = sorted(_fields(type(obj), names), key=lambda f: names.index(f.name))
    values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        if connection.features.can_return_columns_from_insert:
            row = cursor.fetchone()
            assert row is not None
            obj.pk = row[0]
        else:
            meta = type(obj)._meta
            obj.pk = connection.ops.last_insert_id(cursor, meta.db_table, str(meta.pk.column))
    obj._state.adding = False
    obj._state.db = connection.alias


@functools.cache
def _swap_sql(
    model: type[Model], names: tuple[str, ...], held: tuple[str, ...], logged: type[Model],
    vendor: str,
) -> tuple[str, tuple[str, ...]]:  # fmt: skip
    meta = model._meta
    update = _update_sql(model, names, vendor)
    for name in held:
        update += f" AND {_quoted(meta.get_field(name).column)} = %s"  # type: ignore[union-attr]
    insert, fields = _insert_sql(logged, vendor)
    columns, _ = insert.removeprefix("INSERT INTO ").split(" VALUES ", 1)
    marks = ", ".join(["%s"] * len(fields))
    logged_pk = _quoted(logged._meta.pk.column)
    # A data-modifying CTE: the INSERT reads the UPDATE's rows, so it writes only if that matched.
    sql = f"WITH swapped AS ({update} RETURNING 1) INSERT INTO {columns} SELECT {marks} FROM swapped RETURNING {logged_pk}"  # noqa: S608
    return sql, fields


def row_swap(obj: Model, names: tuple[str, ...], *, held: dict[str, Any], log: Model) -> bool:
    """Write `obj`'s `names` only if its row still holds the values in `held` (as they were
    read), and insert `log` only if it did: a compare-and-swap that needs no lock held across
    the caller's work. One statement on PostgreSQL; elsewhere an UPDATE and, when it matched,
    the INSERT in one transaction. Returns whether the row was written (and `log` inserted)."""
    model = type(obj)
    fields = sorted(_fields(model, names), key=lambda f: names.index(f.name))
    values = [f.get_db_prep_save(f.pre_save(obj, False), connection) for f in fields]
    kept = [model._meta.get_field(name) for name in held]
    expected = [f.get_db_prep_save(held[f.name], connection) for f in kept]  # type: ignore[union-attr]
    if connection.vendor != "postgresql":
        sql = _update_sql(model, names, connection.vendor)
        sql += "".join(f" AND {_quoted(f.column)} = %s" for f in kept)  # type: ignore[union-attr]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [*values, obj.pk, *expected])
            if cursor.rowcount != 1:
                return False
            row_insert(log)
            return True
    sql, logged = _swap_sql(model, names, tuple(held), type(log), connection.vendor)
    log_fields = sorted(_fields(type(log), logged), key=lambda f: logged.index(f.name))
    log_values = [f.get_db_prep_save(f.pre_save(log, True), connection) for f in log_fields]
    rows = execute_prepared(sql, [*values, obj.pk, *expected, *log_values])
    if not rows:
        return False
    log.pk = rows[0][0]
    log._state.adding = False
    log._state.db = connection.alias
    return True
