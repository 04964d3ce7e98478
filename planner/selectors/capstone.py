"""Reads for learners' capstone pages, always scoped to the learner."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Field, Prefetch, QuerySet

from accounts.models import User
from courses.models import Course
from planner.models import (
    WORKSHEET_FIELDS,
    CapstoneSubmission,
    CapstoneWorksheet,
    Grade,
    WorkloadCard,
)


def capstone_courses_for(*, learner: User) -> QuerySet[Course]:
    """Courses the user is enrolled in, where they can write a capstone."""
    return Course.objects.filter(enrollments__user=learner).distinct().order_by("title")


def submissions_for_learner(*, learner: User) -> QuerySet[CapstoneSubmission]:
    return (
        CapstoneSubmission.objects.filter(learner=learner)
        .select_related("course")
        .prefetch_related(
            Prefetch("grade", queryset=Grade.objects.filter(status=Grade.Status.RELEASED))
        )
        .order_by("course__title", "-version")
    )


def released_grade_for(*, submission: CapstoneSubmission) -> Grade | None:
    """The grade the learner may see: only once it is released."""
    return (
        Grade.objects.filter(submission=submission, status=Grade.Status.RELEASED)
        .prefetch_related("scores__criterion", "scores__level")
        .first()
    )


def workload_cards_for(*, learner: User) -> QuerySet[WorkloadCard]:
    return WorkloadCard.objects.filter(owner=learner).order_by("name")


@dataclass
class CapstoneCourseRow:
    course: Course
    worksheet: CapstoneWorksheet | None
    submissions: list[CapstoneSubmission] = field(default_factory=list)


def capstone_overview_for(*, learner: User) -> list[CapstoneCourseRow]:
    """Per enrolled course: the learner's draft (if any) and submitted versions, newest first."""
    worksheets = {w.course_id: w for w in CapstoneWorksheet.objects.filter(learner=learner)}
    rows = {
        course.pk: CapstoneCourseRow(course=course, worksheet=worksheets.get(course.pk))
        for course in capstone_courses_for(learner=learner)
    }
    for submission in submissions_for_learner(learner=learner):
        if submission.course_id in rows:
            rows[submission.course_id].submissions.append(submission)
    return list(rows.values())


def submission_released_grade(submission: CapstoneSubmission) -> Grade | None:
    """The prefetched released grade of a submission from submissions_for_learner, or None."""
    try:
        return submission.grade
    except Grade.DoesNotExist:
        return None


@dataclass
class ContentRow:
    name: str
    label: str
    value: str


def submission_content_rows(content: dict[str, object]) -> list[ContentRow]:
    """A submitted version's fields with their labels, in the worksheet's order (text, not HTML)."""
    rows = []
    for name in WORKSHEET_FIELDS:
        model_field = CapstoneWorksheet._meta.get_field(name)
        assert isinstance(model_field, Field)
        value = content.get(name)
        if value in (None, ""):
            text = ""
        elif model_field.choices:
            text = str(dict(model_field.flatchoices).get(value, value))
        elif isinstance(value, float):
            text = f"{value:g}"
        else:
            text = str(value)
        rows.append(ContentRow(name=name, label=str(model_field.verbose_name), value=text))
    return rows
