"""The pieces every app's content sync shares: the import report, and writing a row only where
its fields differ, so importing the same files twice writes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import models

from courses.models import Course


@dataclass
class ImportReport:
    course: Course
    created: bool = False
    changes: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def fields_sync(obj: models.Model, values: dict[str, Any]) -> list[str]:
    """Set the fields that differ; return their names (empty: nothing to write)."""
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    for name in changed:
        setattr(obj, name, values[name])
    return changed


def row_upsert[M: models.Model](
    report: ImportReport,
    label: str,
    existing: M | None,
    make: type[M],
    identity: dict[str, Any],
    values: dict[str, Any],
) -> M:
    if existing is None:
        obj = make.objects.create(**identity, **values)  # type: ignore[attr-defined]
        report.changes.append(f"created {label}")
        return obj
    changed = fields_sync(existing, values)
    if changed:
        if any(f.name == "updated_at" for f in existing._meta.get_fields()):
            changed.append("updated_at")
        existing.save(update_fields=changed)
        report.changes.append(
            f"updated {label}: {', '.join(c for c in changed if c != 'updated_at')}"
        )
    return existing


def children_sync[M: models.Model](
    report: ImportReport,
    label: str,
    current: dict[str, M],
    make: type[M],
    parent: dict[str, Any],
    specs: list[tuple[str, dict[str, Any]]],
) -> None:
    """Upsert ordered children (a quiz item's choices, a criterion's levels) by key.

    Each one matched is popped from `current`, so what is left there has gone from the content.
    """
    for position, (key, values) in enumerate(specs):
        row_upsert(
            report,
            f"{label}/{key}",
            current.pop(key, None),
            make,
            {**parent, "key": key},
            {**values, "position": position},
        )


def row_referenced(obj: models.Model, *, ignore: set[type[models.Model]]) -> bool:
    """Whether any row outside `ignore` points at obj (e.g. a capstone score at a rubric level)."""
    for rel in obj._meta.related_objects:
        if rel.related_model in ignore:
            continue
        accessor = rel.get_accessor_name()
        if accessor is None:
            continue
        if rel.one_to_one:
            if rel.related_model._default_manager.filter(**{rel.field.name: obj}).exists():
                return True
        elif getattr(obj, accessor).exists():
            return True
    return False


def row_delete_unless_used(
    report: ImportReport,
    obj: models.Model,
    label: str,
    ignore: set[type[models.Model]] | None = None,
) -> None:
    """Delete a row gone from the content, unless other rows (a grade, a score) point at it."""
    if row_referenced(obj, ignore=ignore or set()):
        report.kept.append(f"kept {label}: no longer in the content, but grades refer to it")
    else:
        obj.delete()
        report.changes.append(f"deleted {label}")
