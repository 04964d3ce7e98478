"""The planner's part of a course import: the capstone rubric, unless instructors have edited it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db.models import Prefetch

from courses.models import Course
from courses.services.content_specs import CriterionSpec, RubricSpec
from courses.services.content_sync import (
    ImportReport,
    children_sync,
    row_delete_unless_used,
    row_upsert,
)
from planner.capstone.models import Criterion, Level, Rubric


def _rubric_fingerprint(title: str, criteria: list[tuple[Any, ...]]) -> str:
    """A hash of a rubric's words, points and order (not its row ids or position numbers)."""
    return hashlib.sha256(json.dumps([title, criteria]).encode()).hexdigest()


def _rubric_fingerprint_of(rubric: Rubric) -> str:
    criteria = rubric.criteria.order_by("position", "id").prefetch_related(
        Prefetch("levels", queryset=Level.objects.order_by("position", "id"))
    )
    return _rubric_fingerprint(
        rubric.title,
        [
            (
                c.key,
                c.title,
                c.description,
                [(lv.key, lv.title, lv.description, lv.points) for lv in c.levels.all()],
            )
            for c in criteria
        ],
    )


def _rubric_fingerprint_of_spec(spec: RubricSpec) -> str:
    return _rubric_fingerprint(
        spec.title,
        [
            (
                c.key,
                c.title,
                c.description,
                [(lv.key, lv.title, lv.description, lv.points) for lv in c.levels],
            )
            for c in spec.criteria
        ],
    )


def rubric_sync(*, report: ImportReport, course: Course, spec: RubricSpec) -> None:
    """Write the content's rubric unless instructors have edited the course's rubric since.

    The course keeps the fingerprint of the rubric as the last import left it: a rubric that
    still matches it (or has no criteria yet) is the importer's to update; one that differs from
    both it and the content was edited by instructors and is left exactly as they made it.
    """
    existing = Rubric.objects.filter(course=course).first()
    if existing is not None and existing.criteria.exists():
        current = _rubric_fingerprint_of(existing)
        if current not in (course.rubric_hash, _rubric_fingerprint_of_spec(spec)):
            report.kept.append(
                "kept rubric: edited by instructors (the content's rubric was not applied)"
            )
            return
    rubric = _write_rubric(report, course, existing, spec)
    written = _rubric_fingerprint_of(rubric)
    if course.rubric_hash != written:
        course.rubric_hash = written
        course.save(update_fields=["rubric_hash"])


def _write_rubric(
    report: ImportReport, course: Course, existing: Rubric | None, spec: RubricSpec
) -> Rubric:
    rubric = row_upsert(
        report,
        "rubric",
        existing,
        Rubric,
        {"course": course},
        {"title": spec.title},
    )
    criteria = {c.key: c for c in rubric.criteria.all()}
    levels: dict[int, dict[str, Level]] = {}
    for level in Level.objects.filter(criterion__rubric=rubric):
        levels.setdefault(level.criterion_id, {})[level.key] = level
    for position, cspec in enumerate(spec.criteria):
        criterion = _sync_criterion(report, rubric, criteria.pop(cspec.key, None), cspec, position)
        current = levels.get(criterion.pk, {})
        children_sync(
            report,
            f"rubric level {cspec.key}",
            current,
            Level,
            {"criterion": criterion},
            [
                (
                    lspec.key,
                    {
                        "title": lspec.title,
                        "points": lspec.points,
                        "description": lspec.description,
                    },
                )
                for lspec in cspec.levels
            ],
        )
        for gone_level in current.values():
            row_delete_unless_used(report, gone_level, f"rubric level {cspec.key}/{gone_level.key}")
    for gone in criteria.values():
        row_delete_unless_used(report, gone, f"rubric criterion {gone.key}", ignore={Level})
    return rubric


def _sync_criterion(
    report: ImportReport,
    rubric: Rubric,
    existing: Criterion | None,
    spec: CriterionSpec,
    position: int,
) -> Criterion:
    return row_upsert(
        report,
        f"rubric criterion {spec.key}",
        existing,
        Criterion,
        {"rubric": rubric, "key": spec.key},
        {"title": spec.title, "description": spec.description, "position": position},
    )
