"""Reads for instructors: the grading queue, a submission's grading state (the CSV export is in
grades_csv.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import (
    BooleanField,
    Case,
    CharField,
    Count,
    Exists,
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
from courses.selectors import courses_taught_only
from planner.capstone.peer_models import PeerPlan
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
# Plans the peer step sent to staff: peers disagree, passed a check error, or were too few by
# the deadline (peer_grading.py); each plan's reasons are in its PeerPlan.result["flags"].
PEER_FILTERS = (("flagged", _("Flagged by peers")),)


def submissions_for_grader(*, user: User) -> QuerySet[CapstoneSubmission]:
    """Submissions in the courses the user teaches: another course's id is a 404."""
    taught = courses_taught_only(user=user).values("pk")
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


QUEUE_PAGE_SIZE = 50


def _live_claim(now: datetime) -> Exists:
    return Exists(GradingClaim.objects.filter(submission=OuterRef("pk"), expires_at__gt=now))


def _status_filter(status: str, *, now: datetime) -> Q:
    """A queue status as a filter on the grade and the claim, so the database can start from the
    (few) grades or claims instead of computing every submission's status."""
    # Anti-joins, not a left join and a null test: the planner then hashes the (few) grades
    # and claims once instead of looping over them for each submission.
    graded = Exists(Grade.objects.filter(submission=OuterRef("pk")))
    live_claim = _live_claim(now)
    unreleased = Q(grade__isnull=False) & ~Q(grade__status=Grade.Status.RELEASED)
    scored = Q(criteria_count__gt=0, scored_count__gte=F("criteria_count"))
    return {
        "released": Q(grade__status=Grade.Status.RELEASED),
        "graded": unreleased & scored,
        "in_progress": (unreleased & ~scored) | (~graded & live_claim),
        "ungraded": ~graded & ~live_claim,
    }[status]


def grading_queue(
    *,
    user: User,
    now: datetime,
    course_id: int | None = None,
    status: str | None = None,
    course_ids: list[int] | None = None,
    peer: str | None = None,
) -> QuerySet[CapstoneSubmission]:
    """Submitted versions to grade, oldest first (then by id, the keyset), with their queue
    status and live claim. `course_ids`, the taught courses when the caller has them, lets the
    database read the (course, submitted_at) index instead of joining the enrolments.

    `is_own` marks the grader's own submissions, which another instructor must grade;
    `peer="flagged"` keeps the plans peers flagged for staff (their reasons on `peer_plan`).
    """
    if course_ids is not None:  # the caller's own courses_taught_only: no second subquery
        scope = CapstoneSubmission.objects.filter(course_id__in=course_ids).select_related(
            "course", "learner"
        )
    else:
        scope = submissions_for_grader(user=user)
    qs = _with_status(scope, now=now).annotate(
        is_own=Case(
            When(learner_id=user.pk, then=Value(True)),
            default=Value(False),
            output_field=BooleanField(),
        )
    )
    if course_id is not None:
        qs = qs.filter(course_id=course_id)
    if status:
        qs = qs.filter(_status_filter(status, now=now))
    if peer == "flagged":
        qs = qs.filter(peer_plan__state=PeerPlan.State.FLAGGED)
    return qs.select_related("claim__grader", "grade", "peer_plan").order_by("submitted_at", "pk")


@dataclass(frozen=True)
class QueuePage:
    rows: list[CapstoneSubmission]
    next_after: int | None  # the last row's id when a later page exists


def grading_queue_page(
    queue: QuerySet[CapstoneSubmission], *, after: int | None, size: int = QUEUE_PAGE_SIZE
) -> QueuePage:
    """One page of the queue after the submission `after` (keyset: submitted_at, then id), read
    from the (course, submitted_at) index however long the queue. One query, two with `after`
    (its submitted time); an `after` outside the queue starts from the top."""
    if after is not None:
        anchor = queue.filter(pk=after).values_list("submitted_at", flat=True).first()
        if anchor is not None:
            queue = queue.filter(submitted_at__gte=anchor).filter(
                Q(submitted_at__gt=anchor) | Q(pk__gt=after)
            )
    rows = list(queue[: size + 1])
    return QueuePage(rows=rows[:size], next_after=rows[size - 1].pk if len(rows) > size else None)


def queue_counts(
    *, course_ids: list[int], now: datetime, exclude_learner: User | None = None
) -> dict[str, int]:
    """Submissions per queue status in the courses: the total from the (course, submitted_at)
    index, the grades and live claims (as many as the graders made, not the learners) counted
    apart, ungraded the rest. Three queries."""
    submissions = CapstoneSubmission.objects.filter(course_id__in=course_ids)
    if exclude_learner is not None:
        submissions = submissions.exclude(learner=exclude_learner)
    total = submissions.count()
    graded = _with_status(
        CapstoneSubmission.objects.filter(
            pk__in=submissions.filter(grade__isnull=False).values("pk")
        ),
        now=now,
    ).aggregate(
        released=Count("pk", filter=_status_filter("released", now=now)),
        graded=Count("pk", filter=_status_filter("graded", now=now)),
        started=Count("pk", filter=Q(grade__isnull=False) & ~_status_filter("released", now=now)),
    )
    graded_started = graded["started"] - graded["graded"]
    # From the claims (as many as graders hold), not a probe per submission.
    claims = GradingClaim.objects.filter(
        submission__course_id__in=course_ids, expires_at__gt=now, submission__grade__isnull=True
    )
    if exclude_learner is not None:
        claims = claims.exclude(submission__learner=exclude_learner)
    claimed = claims.count()
    with_grade = graded["released"] + graded["graded"] + graded_started
    return {
        "ungraded": total - with_grade - claimed,
        "in_progress": graded_started + claimed,
        "graded": graded["graded"],
        "released": graded["released"],
        "total": total,
    }


def peer_flagged_count(*, course_ids: list[int]) -> int:
    """Plans flagged by peers in the courses: one count read from the peer plans' (course,
    state, assigned, id) index."""
    return PeerPlan.objects.filter(course_id__in=course_ids, state=PeerPlan.State.FLAGGED).count()


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
