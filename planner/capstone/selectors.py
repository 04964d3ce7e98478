"""Reads for learners' capstone pages, always scoped to the learner."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Field, Prefetch, QuerySet

from accounts.models import User
from courses.models import Course
from planner.models import (
    WORKSHEET_SECTIONS,
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


def worksheet_for(*, learner: User, course: Course) -> CapstoneWorksheet | None:
    """The learner's draft for the course, or None before their first save."""
    return CapstoneWorksheet.objects.filter(learner=learner, course=course).first()


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


@dataclass
class ContentRow:
    name: str
    label: str
    value: str


@dataclass
class ContentSection:
    title: str
    rows: list[ContentRow]


def submission_content_sections(content: dict[str, object]) -> list[ContentSection]:
    """A submitted version's fields as text (not HTML), grouped and ordered as the worksheet's."""
    return [
        ContentSection(title=str(title), rows=[_content_row(content, name) for name in names])
        for title, names in WORKSHEET_SECTIONS
    ]


def _content_row(content: dict[str, object], name: str) -> ContentRow:
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
    return ContentRow(name=name, label=str(model_field.verbose_name), value=text)


@dataclass
class AttachedCard:
    name: str
    kind: str
    model_name: str
    max_active_users: object


def submission_cards(submission: CapstoneSubmission) -> list[AttachedCard]:
    """The workload cards copied into a submitted version, with their kinds' display names."""
    kinds = dict(WorkloadCard.Kind.choices)
    return [
        AttachedCard(
            name=str(card.get("name", "")),
            kind=str(kinds.get(card.get("kind", ""), card.get("kind", ""))),
            model_name=str(card.get("model_name") or ""),
            max_active_users=(card.get("result") or {}).get("max_active_users"),
        )
        for card in submission.workload_cards
    ]
