"""Celery tasks for quizzes: thin wrappers that take ids and call a service."""

from __future__ import annotations

from functools import partial

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from courses.models import Course
from quizzes.services import rollup
from quizzes.services.item_analysis import item_analysis_refresh
from quizzes.services.parameters import parameters_refresh, schedules_reschedule

# Training one course is well under a second per scope on the shared log; the soft limit still
# leaves the settings' hard limit (below the broker's visibility timeout) as the backstop.
PARAMETERS_SOFT_LIMIT = 200


@shared_task(name="quizzes.tasks.parameters_nightly", queue="heavy", ignore_result=True)
def parameters_nightly() -> int:
    """Beat's nightly job: one refresh task per published course, on the heavy queue."""
    ids = list(Course.objects.filter(is_published=True).values_list("pk", flat=True))
    for course_id in ids:
        transaction.on_commit(partial(parameters_refresh_course.delay, course_id))
    return len(ids)


@shared_task(
    name="quizzes.tasks.parameters_refresh_course",
    queue="heavy",
    acks_late=True,
    soft_time_limit=PARAMETERS_SOFT_LIMIT,
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=3,
    ignore_result=True,
)
def parameters_refresh_course(course_id: int) -> list[int]:
    """Train, score and decide candidates for the course's grown scopes; returns their ids."""
    course = Course.objects.filter(pk=course_id).first()
    if course is None:
        return []
    return [p.pk for p in parameters_refresh(course=course, now=timezone.now())]


@shared_task(
    name="quizzes.tasks.schedules_reschedule_course",
    queue="heavy",
    acks_late=True,
    soft_time_limit=PARAMETERS_SOFT_LIMIT,
    ignore_result=True,
)
def schedules_reschedule_course(course_id: int) -> int:
    """The instructor's opt-in: move the course's due dates to the parameters in force."""
    course = Course.objects.filter(pk=course_id).first()
    return schedules_reschedule(course=course) if course is not None else 0


# A rollup recomputes at most the days since two days before the last run: seconds at 12 M
# logs, so a run every few minutes stays far below this.
ROLLUP_SOFT_LIMIT = 240


@shared_task(
    name="quizzes.tasks.review_rollups_refresh",
    queue="heavy",
    acks_late=True,
    soft_time_limit=ROLLUP_SOFT_LIMIT,
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=3,
    ignore_result=True,
)
def review_rollups_refresh() -> int:
    """Beat's rollup of the review log into the aggregates the instructor pages read; returns
    the item-day rows rewritten. Idempotent: a retry or a second beat recomputes the same rows."""
    return rollup.review_rollups_refresh(now=timezone.now()).item_days


# One course's analysis reads its first answers once (DISTINCT ON over the review log's
# (item, reviewed_at) index); bench/item_analysis.py measures it at 100,000 learners.
ITEM_ANALYSIS_SOFT_LIMIT = 240


@shared_task(name="quizzes.tasks.item_analysis_nightly", queue="heavy", ignore_result=True)
def item_analysis_nightly() -> int:
    """Beat's nightly job: one item-analysis task per course, on the heavy queue."""
    ids = list(Course.objects.values_list("pk", flat=True))
    for course_id in ids:
        transaction.on_commit(partial(item_analysis_refresh_course.delay, course_id))
    return len(ids)


@shared_task(
    name="quizzes.tasks.item_analysis_refresh_course",
    queue="heavy",
    acks_late=True,
    soft_time_limit=ITEM_ANALYSIS_SOFT_LIMIT,
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=3,
    ignore_result=True,
)
def item_analysis_refresh_course(course_id: int) -> int:
    """Recompute and store one course's item analysis; returns its learner count."""
    course = Course.objects.filter(pk=course_id).first()
    if course is None:
        return 0
    return item_analysis_refresh(course=course, now=timezone.now()).learners
