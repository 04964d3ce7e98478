"""Create or update a course from its content folder, by stable slugs and keys, in one transaction.

Only fields that differ are written, so importing the same files twice writes nothing. Learner data
(enrolments, lesson progress, recall schedules, review logs) is never touched: a quiz item or a
lesson that disappeared from the content is deleted only if no learner has data attached to it;
otherwise it is kept and the report says so. The capstone rubric is written only while nobody
has edited it since the last import; an instructor-edited rubric is kept as it is.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import models, transaction
from django.db.models import Prefetch

from courses.models import Course, Lesson, LessonProgress, Module
from courses.services.content import (
    CourseSpec,
    CriterionSpec,
    ItemSpec,
    LessonSpec,
    RubricSpec,
    course_content_load,
)
from courses.services.rendering import markdown_render
from planner.models import Criterion, Level, Rubric
from quizzes.models import Choice, QuizItem, RecallSchedule


@dataclass
class ImportReport:
    course: Course
    created: bool = False
    changes: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _sync(obj: models.Model, values: dict[str, Any]) -> list[str]:
    """Set the fields that differ; return their names (empty: nothing to write)."""
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    for name in changed:
        setattr(obj, name, values[name])
    return changed


def _upsert[M: models.Model](
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
    changed = _sync(existing, values)
    if changed:
        if any(f.name == "updated_at" for f in existing._meta.get_fields()):
            changed.append("updated_at")
        existing.save(update_fields=changed)
        report.changes.append(
            f"updated {label}: {', '.join(c for c in changed if c != 'updated_at')}"
        )
    return existing


def _sync_children[M: models.Model](
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
        _upsert(
            report,
            f"{label}/{key}",
            current.pop(key, None),
            make,
            {**parent, "key": key},
            {**values, "position": position},
        )


def _referenced(obj: models.Model, *, ignore: set[type[models.Model]]) -> bool:
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


def _course_values(spec: CourseSpec) -> dict[str, Any]:
    return {
        "title": spec.title,
        "summary": spec.summary,
        "is_published": spec.is_published,
        "desired_retention": spec.desired_retention,
        "learning_steps_minutes": spec.learning_steps_minutes,
        "relearning_steps_minutes": spec.relearning_steps_minutes,
        "maximum_interval_days": spec.maximum_interval_days,
        "daily_new_limit": spec.daily_new_limit,
        "daily_review_limit": spec.daily_review_limit,
    }


def _lesson_values(spec: LessonSpec, module: Module, position: int) -> dict[str, Any]:
    return {
        "module_id": module.pk,
        "title": spec.title,
        "position": position,
        "objective": spec.objective,
        "decision": spec.decision,
        "body_markdown": spec.body_markdown,
        "body_html": markdown_render(text=spec.body_markdown),
        "estimated_minutes": spec.estimated_minutes,
    }


def _item_values(spec: ItemSpec, position: int) -> dict[str, Any]:
    return {
        "kind": spec.kind,
        "position": position,
        "prompt": spec.prompt,
        "explanation": spec.explanation,
        "expected_value": spec.expected_value,
        "unit": spec.unit,
        "tolerance": spec.tolerance,
        "model_answer": spec.model_answer,
    }


def _sync_items(report: ImportReport, lesson: Lesson, specs: tuple[ItemSpec, ...]) -> None:
    items = {i.key: i for i in lesson.quiz_items.all()}
    choices: dict[int, dict[str, Choice]] = {}
    for choice in Choice.objects.filter(item__lesson=lesson):
        choices.setdefault(choice.item_id, {})[choice.key] = choice
    for position, spec in enumerate(specs):
        label = f"quiz item {lesson.slug}/{spec.key}"
        item = _upsert(
            report,
            label,
            items.pop(spec.key, None),
            QuizItem,
            {"lesson": lesson, "key": spec.key},
            _item_values(spec, position),
        )
        current = choices.get(item.pk, {})
        _sync_children(
            report,
            f"choice {lesson.slug}/{spec.key}",
            current,
            Choice,
            {"item": item},
            [
                (
                    cspec.key,
                    {"text": cspec.text, "is_correct": cspec.is_correct, "reason": cspec.reason},
                )
                for cspec in spec.choices
            ],
        )
        for gone in current.values():
            gone.delete()
            report.changes.append(f"deleted choice {lesson.slug}/{spec.key}/{gone.key}")
    for gone_item in items.values():
        remembered = RecallSchedule.objects.filter(item=gone_item).count()
        if remembered:
            report.kept.append(
                f"kept quiz item {lesson.slug}/{gone_item.key}: no longer in the content, "
                f"but {remembered} learner(s) have a recall schedule for it"
            )
        else:
            gone_item.delete()
            report.changes.append(f"deleted quiz item {lesson.slug}/{gone_item.key}")


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


def _sync_rubric(report: ImportReport, course: Course, spec: RubricSpec) -> None:
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
    rubric = _upsert(
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
        _sync_children(
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
            _delete_unless_used(report, gone_level, f"rubric level {cspec.key}/{gone_level.key}")
    for gone in criteria.values():
        _delete_unless_used(report, gone, f"rubric criterion {gone.key}", ignore={Level})
    return rubric


def _sync_criterion(
    report: ImportReport,
    rubric: Rubric,
    existing: Criterion | None,
    spec: CriterionSpec,
    position: int,
) -> Criterion:
    return _upsert(
        report,
        f"rubric criterion {spec.key}",
        existing,
        Criterion,
        {"rubric": rubric, "key": spec.key},
        {"title": spec.title, "description": spec.description, "position": position},
    )


def _delete_unless_used(
    report: ImportReport,
    obj: models.Model,
    label: str,
    ignore: set[type[models.Model]] | None = None,
) -> None:
    if _referenced(obj, ignore=ignore or set()):
        report.kept.append(f"kept {label}: no longer in the content, but grades refer to it")
    else:
        obj.delete()
        report.changes.append(f"deleted {label}")


def _lesson_has_learner_data(lesson: Lesson) -> bool:
    return (
        LessonProgress.objects.filter(lesson=lesson).exists()
        or RecallSchedule.objects.filter(item__lesson=lesson).exists()
    )


def course_apply(*, spec: CourseSpec) -> ImportReport:
    """Bring the database in line with a validated spec. Call inside a transaction."""
    course = Course.objects.select_for_update().filter(slug=spec.slug).first()
    report = ImportReport(course=course or Course(slug=spec.slug), created=course is None)
    course = _upsert(
        report, f"course {spec.slug}", course, Course, {"slug": spec.slug}, _course_values(spec)
    )
    report.course = course

    modules = {m.slug: m for m in course.modules.all()}
    lessons = {lesson.slug: lesson for lesson in Lesson.objects.filter(module__course=course)}
    for mpos, mspec in enumerate(spec.modules):
        module = _upsert(
            report,
            f"module {mspec.slug}",
            modules.pop(mspec.slug, None),
            Module,
            {"course": course, "slug": mspec.slug},
            {"title": mspec.title, "position": mpos},
        )
        for lpos, lspec in enumerate(mspec.lessons):
            lesson = _upsert(
                report,
                f"lesson {lspec.slug}",
                lessons.pop(lspec.slug, None),
                Lesson,
                {"slug": lspec.slug},
                _lesson_values(lspec, module, lpos),
            )
            _sync_items(report, lesson, lspec.items)

    for gone_lesson in lessons.values():
        if _lesson_has_learner_data(gone_lesson):
            report.kept.append(
                f"kept lesson {gone_lesson.slug}: no longer in the content, but learners have "
                "progress or recall schedules in it"
            )
        else:
            gone_lesson.delete()
            report.changes.append(f"deleted lesson {gone_lesson.slug}")
    for gone_module in modules.values():
        if gone_module.lessons.exists():
            report.kept.append(f"kept module {gone_module.slug}: it still holds kept lessons")
        else:
            gone_module.delete()
            report.changes.append(f"deleted module {gone_module.slug}")

    if spec.rubric is not None:
        _sync_rubric(report, course, spec.rubric)

    if report.changes and course.content_hash != spec.content_hash:
        course.content_hash = spec.content_hash
        course.save(update_fields=["content_hash", "updated_at"])
    elif course.content_hash != spec.content_hash:
        # Only comments or layout changed: remember the new hash, report it honestly.
        course.content_hash = spec.content_hash
        course.save(update_fields=["content_hash"])
        report.changes.append("updated course content hash (no content changes)")
    return report


def course_import(*, folder: Path) -> ImportReport:
    """Validate the whole folder first (ContentError), then write everything or nothing."""
    spec = course_content_load(folder=folder)
    with transaction.atomic():
        return course_apply(spec=spec)
