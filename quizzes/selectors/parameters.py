"""Reads for learnt FSRS parameters: review histories per scope, which scopes have grown, and
what an instructor sees of a course's parameter sets."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q

from courses.models import Course
from quizzes.fsrs_optimizer import Review
from quizzes.models import FsrsParameters, ReviewLog

# A learner gets personal parameters only with this many long-term reviews (a day or more after
# the one before): on the shared log personal parameters first beat the defaults at about 1,100.
PERSONAL_MIN_LONG_TERM = 1100
# A course's pooled parameters need at least this many reviews (the bench's smallest size).
POOLED_MIN_REVIEWS = 512
# A scope is retrained when its review count has grown by this fraction since its last set.
GROWTH = 0.10

HistoryKey = tuple[int, int]  # (learner id, item id)


def _scope_logs(*, course: Course, learner_id: int | None) -> Q:
    scope = Q(item__lesson__module__course=course, undo__isnull=True)
    if learner_id is not None:
        scope &= Q(learner_id=learner_id)
    return scope


def review_histories(
    *, course: Course, learner_id: int | None = None
) -> dict[HistoryKey, list[Review]]:
    """Every card's reviews in the scope (a course, or one learner in it), oldest first; undone
    grades left out. One query."""
    rows = (
        ReviewLog.objects.filter(_scope_logs(course=course, learner_id=learner_id))
        .order_by("reviewed_at", "id")
        .values_list("learner_id", "item_id", "reviewed_at", "rating")
    )
    histories: dict[HistoryKey, list[Review]] = defaultdict(list)
    for learner, item, at, rating in rows.iterator(chunk_size=5000):
        histories[(learner, item)].append(Review(at=at, rating=rating))
    return dict(histories)


def latest_parameters(*, course: Course, learner_id: int | None) -> FsrsParameters | None:
    scope = FsrsParameters.objects.filter(course=course)
    scope = (
        scope.filter(learner_id=learner_id)
        if learner_id is not None
        else scope.filter(learner=None)
    )
    return scope.order_by("-version").first()


def active_parameters(*, course: Course, learner_id: int | None) -> FsrsParameters | None:
    scope = FsrsParameters.objects.filter(course=course, status=FsrsParameters.Status.ACTIVE)
    scope = (
        scope.filter(learner_id=learner_id)
        if learner_id is not None
        else scope.filter(learner=None)
    )
    return scope.first()


def _grown(count: int, latest: FsrsParameters | None) -> bool:
    return latest is None or count >= max(
        latest.review_count * (1 + GROWTH), latest.review_count + 1
    )


def scopes_to_train(*, course: Course) -> list[int | None]:
    """The scopes whose reviews have grown enough since their last set: None for the course's
    pooled set, then the ids of learners with enough long-term reviews. Two queries plus one per
    scope that has a set."""
    scopes: list[int | None] = []
    total = ReviewLog.objects.filter(_scope_logs(course=course, learner_id=None)).count()
    if total >= POOLED_MIN_REVIEWS and _grown(
        total, latest_parameters(course=course, learner_id=None)
    ):
        scopes.append(None)
    per_learner = (
        ReviewLog.objects.filter(_scope_logs(course=course, learner_id=None))
        .values("learner_id")
        .annotate(total=Count("id"), long_term=Count("id", filter=Q(scheduled_days__gt=0)))
        .filter(long_term__gte=PERSONAL_MIN_LONG_TERM)
        .order_by("learner_id")
    )
    for row in per_learner:
        latest = latest_parameters(course=course, learner_id=row["learner_id"])
        if _grown(row["total"], latest):
            scopes.append(row["learner_id"])
    return scopes


@dataclass(frozen=True)
class CourseParametersSummary:
    """What the instructor's parameters page shows for one course."""

    pooled_active: FsrsParameters | None
    pooled_history: list[FsrsParameters]
    personal_active: list[FsrsParameters]
    learners_with_personal: int


def course_parameters_summary(*, course: Course, history: int = 10) -> CourseParametersSummary:
    """The pooled set in force and its last `history` versions, and the personal sets in force.
    Two queries."""
    pooled = list(
        FsrsParameters.objects.filter(course=course, learner=None).order_by("-version")[:history]
    )
    personal = list(
        FsrsParameters.objects.filter(
            course=course, learner__isnull=False, status=FsrsParameters.Status.ACTIVE
        )
        .select_related("learner")
        .order_by("learner_id")
    )
    active = next((p for p in pooled if p.status == FsrsParameters.Status.ACTIVE), None)
    return CourseParametersSummary(
        pooled_active=active,
        pooled_history=pooled,
        personal_active=personal,
        learners_with_personal=len(personal),
    )
