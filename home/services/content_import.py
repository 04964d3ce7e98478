"""A course import from its content folder: every app writes its own part, in one transaction.

The whole folder is validated first (`ContentError` names file, line and reason), then courses,
quiz items and the capstone rubric are written, or nothing is.
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from courses.services.content import course_content_load
from courses.services.content_specs import CourseSpec
from courses.services.content_sync import ImportReport
from courses.services.importer import course_hash_record, course_prune, course_sync
from planner.capstone.rubric_sync import rubric_sync
from quizzes.services.content_sync import (
    course_skills_sync,
    lessons_with_recall,
    quiz_items_sync,
)


def course_apply(*, spec: CourseSpec) -> ImportReport:
    """Bring the database in line with a validated spec. Call inside a transaction."""
    sync = course_sync(spec=spec)
    report = sync.report
    course_skills_sync(report=report, course=report.course, specs=spec.skills)
    for lesson, lesson_spec in sync.lessons:
        quiz_items_sync(report=report, lesson=lesson, specs=lesson_spec.items)
    in_use = lessons_with_recall(lesson_ids=[lesson.pk for lesson in sync.gone_lessons])
    course_prune(sync=sync, lessons_in_use=in_use)
    if spec.rubric is not None:
        rubric_sync(report=report, course=report.course, spec=spec.rubric)
    course_hash_record(report=report, spec=spec)
    return report


def course_import(*, folder: Path) -> ImportReport:
    """Validate the whole folder first (ContentError), then write everything or nothing."""
    spec = course_content_load(folder=folder)
    with transaction.atomic():
        return course_apply(spec=spec)
