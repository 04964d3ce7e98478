"""The courses app's part of a course import: the course, its modules and lessons, by slug.

Only fields that differ are written, so importing the same files twice writes nothing. A lesson
gone from the content is deleted only if no learner has data attached to it. The course's
scheduling settings come from the content when the course is created; after that they are the
instructors', and a re-import leaves them alone. The whole import (every app's part, in one
transaction) is `home.services.content_import.course_import`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from courses.models import Course, Lesson, LessonProgress, Module
from courses.services.content_specs import CourseSpec, LessonSpec
from courses.services.content_sync import ImportReport, row_upsert
from courses.services.rendering import markdown_render


@dataclass
class CourseSync:
    """What `course_sync` wrote, and the lessons and modules gone from the content (not yet
    deleted: other apps say first which of them hold learner data)."""

    report: ImportReport
    lessons: list[tuple[Lesson, LessonSpec]] = field(default_factory=list)
    gone_lessons: list[Lesson] = field(default_factory=list)
    gone_modules: list[Module] = field(default_factory=list)


def _course_values(spec: CourseSpec) -> dict[str, Any]:
    return {
        "title": spec.title,
        "summary": spec.summary,
        "is_published": spec.is_published,
    }


def _scheduling_values(spec: CourseSpec) -> dict[str, Any]:
    return {
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


def course_sync(*, spec: CourseSpec) -> CourseSync:
    """Upsert the course, its modules and lessons. Call inside a transaction."""
    course = Course.objects.select_for_update().filter(slug=spec.slug).first()
    report = ImportReport(course=course or Course(slug=spec.slug), created=course is None)
    values = _course_values(spec) | (_scheduling_values(spec) if course is None else {})
    course = row_upsert(report, f"course {spec.slug}", course, Course, {"slug": spec.slug}, values)
    report.course = course
    result = CourseSync(report=report)

    modules = {m.slug: m for m in course.modules.all()}
    lessons = {lesson.slug: lesson for lesson in Lesson.objects.filter(module__course=course)}
    for mpos, mspec in enumerate(spec.modules):
        module = row_upsert(
            report,
            f"module {mspec.slug}",
            modules.pop(mspec.slug, None),
            Module,
            {"course": course, "slug": mspec.slug},
            {"title": mspec.title, "position": mpos},
        )
        for lpos, lspec in enumerate(mspec.lessons):
            lesson = row_upsert(
                report,
                f"lesson {lspec.slug}",
                lessons.pop(lspec.slug, None),
                Lesson,
                {"slug": lspec.slug},
                _lesson_values(lspec, module, lpos),
            )
            result.lessons.append((lesson, lspec))
    result.gone_lessons = list(lessons.values())
    result.gone_modules = list(modules.values())
    return result


def course_prune(*, sync: CourseSync, lessons_in_use: set[int]) -> None:
    """Delete the lessons and modules gone from the content, keeping any a learner has data in
    (progress here, or `lessons_in_use` by other apps' reckoning)."""
    report = sync.report
    for gone_lesson in sync.gone_lessons:
        in_use = gone_lesson.pk in lessons_in_use
        if in_use or LessonProgress.objects.filter(lesson=gone_lesson).exists():
            report.kept.append(
                f"kept lesson {gone_lesson.slug}: no longer in the content, but learners have "
                "progress or recall schedules in it"
            )
        else:
            gone_lesson.delete()
            report.changes.append(f"deleted lesson {gone_lesson.slug}")
    for gone_module in sync.gone_modules:
        if gone_module.lessons.exists():
            report.kept.append(f"kept module {gone_module.slug}: it still holds kept lessons")
        else:
            gone_module.delete()
            report.changes.append(f"deleted module {gone_module.slug}")


def course_hash_record(*, report: ImportReport, spec: CourseSpec) -> None:
    """Remember the content's hash once every app has written its part."""
    course = report.course
    if report.changes and course.content_hash != spec.content_hash:
        course.content_hash = spec.content_hash
        course.save(update_fields=["content_hash", "updated_at"])
    elif course.content_hash != spec.content_hash:
        # Only comments or layout changed: remember the new hash, report it honestly.
        course.content_hash = spec.content_hash
        course.save(update_fields=["content_hash"])
        report.changes.append("updated course content hash (no content changes)")
