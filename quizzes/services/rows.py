"""Single-row writes whose SQL text is built once per process: on a grade, compiling an INSERT
and an UPDATE through the ORM cost more than running them. The values are what `save()` would
write (each field's pre_save, then get_db_prep_save); only the statement is reused."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import Field, Model


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


def row_update(obj: Model, names: tuple[str, ...]) -> None:
    """`obj.save(update_fields=names)` for a row known to exist (one UPDATE)."""
    fields = sorted(_fields(type(obj), names), key=lambda f: names.index(f.name))
    values = [f.get_db_prep_save(f.pre_save(obj, False), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(_update_sql(type(obj), names, connection.vendor), [*values, obj.pk])


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
