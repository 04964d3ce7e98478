"""What schedules a learner's reviews in a course, read in one statement: the parameter set in
force (personal, else the course's pooled one) and the learner's own desired retention."""

from __future__ import annotations

from typing import Any

from django.db.models import F, Q, QuerySet, Subquery

from courses.models import Course
from quizzes.models import FsrsParameters, RetentionPreference
from quizzes.selectors.prepared import PreparedQuery


def _active(course_id: Any, scope: Q) -> QuerySet[FsrsParameters]:
    # A personal set (learner_id not null) sorts before the pooled one, so it wins.
    return (
        FsrsParameters.objects.filter(course_id=course_id, status=FsrsParameters.Status.ACTIVE)
        .filter(scope)
        .order_by(F("learner_id").asc(nulls_last=True))
    )


def scheduling_columns(*, course_id: Any, learner_id: Any) -> tuple[Subquery, Subquery, Subquery]:
    """The set in force (id, weights) and the learner's own retention, as three subqueries a
    query can select beside its own columns (`course_id` and `learner_id` may be OuterRefs)."""
    active = _active(course_id, Q(learner_id=learner_id) | Q(learner__isnull=True))
    own = RetentionPreference.objects.filter(learner_id=learner_id, course_id=course_id)
    return (
        Subquery(active.values("pk")[:1]),
        Subquery(active.values("weights")[:1]),
        Subquery(own.values("desired_retention")[:1]),
    )


def _learner_queryset(*, course_id: int, learner_id: int) -> QuerySet[Any]:
    return Course.objects.filter(pk=course_id).values_list(
        *scheduling_columns(course_id=course_id, learner_id=learner_id)
    )


def _pooled_queryset(*, course_id: int) -> QuerySet[Any]:
    active = _active(course_id, Q(learner__isnull=True))
    return Course.objects.filter(pk=course_id).values_list(
        Subquery(active.values("pk")[:1]), Subquery(active.values("weights")[:1])
    )


_LEARNER = PreparedQuery(_learner_queryset)
_POOLED = PreparedQuery(_pooled_queryset)


SchedulingRow = tuple[int | None, list[float] | None, float | None]


def scheduling_row(*, course_id: int, learner_id: int | None) -> SchedulingRow:
    """The id and weights of the set in force (None, None: FSRS-6's defaults) and the learner's
    own retention (None: the course's). One query."""
    if learner_id is None:
        rows = _POOLED.rows(course_id=course_id)
        return (rows[0][0], rows[0][1], None) if rows else (None, None, None)
    rows = _LEARNER.rows(course_id=course_id, learner_id=learner_id)
    return rows[0] if rows else (None, None, None)
