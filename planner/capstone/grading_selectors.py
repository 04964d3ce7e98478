"""Reads for instructors: the grading queue, a submission's grading state, the CSV export."""

from __future__ import annotations

from datetime import datetime

from django.db.models import (
    BooleanField,
    Case,
    CharField,
    Count,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from courses.models import Course
from courses.selectors import courses_taught_by
from planner.models import (
    CapstoneSubmission,
    Criterion,
    CriterionScore,
    Grade,
    GradingClaim,
    Rubric,
)

QUEUE_STATUSES = (
    ("ungraded", _("Ungraded")),
    ("in_progress", _("In progress")),
    ("graded", _("Graded (not released)")),
    ("released", _("Released")),
)


def submissions_for_grader(*, user: User) -> QuerySet[CapstoneSubmission]:
    """Submissions in the courses the user teaches: another course's id is a 404."""
    taught = courses_taught_by(user=user).values("pk")
    return CapstoneSubmission.objects.filter(course__in=taught).select_related("course", "learner")


def _with_status(
    qs: QuerySet[CapstoneSubmission], *, now: datetime
) -> QuerySet[CapstoneSubmission]:
    scored = Subquery(
        CriterionScore.objects.filter(grade__submission=OuterRef("pk"), level__isnull=False)
        .values("grade")
        .annotate(n=Count("pk"))
        .values("n"),
        output_field=IntegerField(),
    )
    criteria = Subquery(
        Criterion.objects.filter(rubric__course=OuterRef("course"))
        .values("rubric")
        .annotate(n=Count("pk"))
        .values("n"),
        output_field=IntegerField(),
    )
    return qs.annotate(
        scored_count=Coalesce(scored, 0),
        criteria_count=Coalesce(criteria, 0),
    ).annotate(
        queue_status=Case(
            When(grade__status=Grade.Status.RELEASED, then=Value("released")),
            When(
                Q(grade__isnull=False, criteria_count__gt=0)
                & Q(scored_count__gte=F("criteria_count")),
                then=Value("graded"),
            ),
            When(Q(grade__isnull=False) | Q(claim__expires_at__gt=now), then=Value("in_progress")),
            default=Value("ungraded"),
            output_field=CharField(),
        )
    )


def grading_queue(
    *, user: User, now: datetime, course_id: int | None = None, status: str | None = None
) -> QuerySet[CapstoneSubmission]:
    """Submitted versions to grade, oldest first, with their queue status and live claim.

    `is_own` marks the grader's own submissions, which another instructor must grade.
    """
    qs = _with_status(submissions_for_grader(user=user), now=now).annotate(
        is_own=Case(
            When(learner_id=user.pk, then=Value(True)),
            default=Value(False),
            output_field=BooleanField(),
        )
    )
    if course_id is not None:
        qs = qs.filter(course_id=course_id)
    if status:
        qs = qs.filter(queue_status=status)  # type: ignore[misc]
    return qs.select_related("claim__grader", "grade").order_by("submitted_at")


def live_claim_for(*, submission: CapstoneSubmission, now: datetime) -> GradingClaim | None:
    return (
        GradingClaim.objects.select_related("grader")
        .filter(submission=submission, expires_at__gt=now)
        .first()
    )


def grade_for(*, submission: CapstoneSubmission) -> Grade | None:
    return (
        Grade.objects.filter(submission=submission)
        .prefetch_related("scores", "changes__actor")
        .first()
    )


def rubric_for(*, course: Course) -> Rubric | None:
    return Rubric.objects.filter(course=course).prefetch_related("criteria__levels").first()


def grades_csv_rows(*, course: Course) -> tuple[list[str], list[list[str]]]:
    """One row per learner: their latest graded version (else latest version), criterion columns."""
    criteria = list(Criterion.objects.filter(rubric__course=course).order_by("position", "pk"))
    header = [
        "learner_email",
        "learner_name",
        "version",
        "submitted_at",
        "late",
        *[c.key for c in criteria],
        "total",
        "max",
        "released",
        "released_at",
    ]
    chosen: dict[int, CapstoneSubmission] = {}
    submissions = (
        CapstoneSubmission.objects.filter(course=course)
        .select_related("learner", "grade")
        .prefetch_related("grade__scores__level")
        .order_by("learner__email", "version")
    )
    for submission in submissions:
        current = chosen.get(submission.learner_id)
        has_grade = hasattr(submission, "grade")
        if current is None or has_grade or not hasattr(current, "grade"):
            chosen[submission.learner_id] = submission
    rows: list[list[str]] = []
    for submission in chosen.values():
        grade: Grade | None = getattr(submission, "grade", None)
        levels = {score.criterion_id: score for score in (grade.scores.all() if grade else [])}
        released = grade is not None and grade.status == Grade.Status.RELEASED
        rows.append(
            [
                _csv_safe(submission.learner.email),
                _csv_safe(submission.learner.name),
                str(submission.version),
                submission.submitted_at.isoformat(),
                "yes" if submission.is_late else "no",
                *[
                    (str(levels[c.pk].points) if c.pk in levels and levels[c.pk].level else "")
                    for c in criteria
                ],
                str(grade.total_points) if grade else "",
                str(grade.max_points) if grade else "",
                "yes" if released else "no",
                grade.released_at.isoformat() if grade and grade.released_at else "",
            ]
        )
    return header, rows


def _csv_safe(text: str) -> str:
    """Spreadsheets run a cell starting with = + - @ as a formula: make learner text inert."""
    return "'" + text if text[:1] in {"=", "+", "-", "@", "\t", "\r"} else text
